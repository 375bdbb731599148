import type { EndpointDefinition } from "@qes/core";
import { loadConfig } from "../../config.ts";
import { loadServedEndpoints } from "../../endpoint-dirs.ts";

/** `qes endpoints`: every served endpoint with its id and settings */
export async function endpointsCommand(): Promise<number> {
  const config = loadConfig();
  const registry = await loadServedEndpoints(config.endpointDirs);
  for (const def of registry.list()) process.stdout.write(`${describeEndpoint(def)}\n\n`);
  return 0;
}

export function describeEndpoint(def: EndpointDefinition): string {
  const lines = [
    `${def.name}  ${def.id}`,
    `  file         ${def.sqlFile}`,
    `  max rows     ${def.maxRows}`,
    `  caching      ${def.cacheTtlSeconds === 0 ? "disabled" : `${def.cacheTtlSeconds} s`}`,
    `  warming      ${def.warmIntervalSeconds === undefined ? "none" : `every ${def.warmIntervalSeconds} s`}`,
    `  sandboxing   ${def.sandboxable ? "enabled (accepts consumer SQL in the sql parameter)" : "disabled"}`,
    `  redact PII   ${def.redactPii ? "enabled" : "disabled"}`,
  ];
  const params = Object.entries(def.params);
  lines.push(`  parameters   ${params.length === 0 ? "none" : ""}`.trimEnd());
  for (const [name, p] of params) {
    const extra = [
      p.required ? "required" : "optional",
      p.kind,
      p.allowed ? `one of ${p.allowed.join("|")}` : "",
      p.default !== undefined ? `default ${p.default}` : "",
    ].filter((s) => s !== "");
    lines.push(`    ${name}: ${extra.join(", ")}${p.description ? ` — ${p.description}` : ""}`);
  }
  return lines.join("\n");
}
