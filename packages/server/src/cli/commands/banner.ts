import type { EndpointDefinition, EndpointRegistry } from "@qes/core";
import { SEED_PROJECTS } from "../../seed/projects.ts";

/** example values for a parameter, for the ready-to-paste curl lines */
function exampleValues(name: string, def: EndpointDefinition): string[] {
  const p = def.params[name];
  if (!p) return [];
  if (p.allowed) return p.allowed;
  if (name === "project") return [SEED_PROJECTS[0]];
  if (p.default !== undefined) return [p.default];
  if (!p.required) return [];
  if (p.kind === "timestamp") return [new Date(Date.now() - 3600_000).toISOString()];
  if (p.kind === "integer") return ["1"];
  return ["<value>"];
}

/** one curl line per endpoint (per allowed value of a parameter that has them) */
export function curlLines(url: string, token: string, registry: EndpointRegistry): string[] {
  const lines: string[] = [];
  for (const def of registry.list()) {
    let queries: string[] = [""];
    for (const name of Object.keys(def.params)) {
      const values = exampleValues(name, def);
      if (values.length === 0) continue;
      queries = queries.flatMap((q) =>
        values.map((v) => `${q}${q === "" ? "?" : "&"}${name}=${encodeURIComponent(v)}`),
      );
    }
    for (const q of queries) {
      lines.push(`curl -s -H "X-API-KEY: ${token}" '${url}/api/endpoints/query/${def.name}${q}'`);
    }
  }
  return lines;
}
