import { resolve } from "node:path";
import { lookalikeSource, missingSources, withEmptySources } from "@qes/core";
import { openBackend } from "../../backend/open-backend.ts";
import { checkEndpoints, formatProblem } from "../../check/check-endpoints.ts";
import { misspelling } from "../../check/startup-check.ts";
import { loadConfig } from "../../config.ts";
import { loadServedEndpoints } from "../../endpoint-dirs.ts";

/**
 * `qes check [dir…]`: loads the built-ins plus the given directories (default: QES_ENDPOINTS_DIR),
 * compiles and sandbox-checks each definition against the store, and reports file, line and
 * column of every problem. Exit code 1 when any definition fails. A source the store does not hold
 * yet is checked as the empty source `qes serve` would create, and named in a note (serve creates
 * none while a definition fails).
 */
export async function checkCommand(dirs: string[]): Promise<number> {
  const config = loadConfig();
  const registry = await loadServedEndpoints(
    dirs.length > 0 ? dirs.map((d) => resolve(d)) : config.endpointDirs,
  );
  const backend = await openBackend(config);
  try {
    const stored = await backend.schema();
    const missing = missingSources(registry.list(), stored, backend.dialect);
    const problems = checkEndpoints(registry.list(), withEmptySources(stored, missing), backend.dialect);
    const failed = new Set(problems.map((p) => p.endpoint));
    for (const def of registry.list()) {
      if (!failed.has(def.name)) process.stdout.write(`ok    ${def.name}  (${def.sqlFile})\n`);
    }
    for (const p of problems) process.stderr.write(`FAIL  ${p.endpoint}\n      ${formatProblem(p)}\n`);
    // qes serve creates them only when every definition passes (check/startup-check.ts)
    const when = problems.length === 0 ? "" : ", once every definition passes";
    for (const source of missing) {
      process.stdout.write(
        `note  the store holds no source ${JSON.stringify(source)} yet: qes serve creates it, empty, for the stored queries that read it${when}${misspelling(lookalikeSource(source, stored))}\n`,
      );
    }
    process.stdout.write(
      problems.length === 0
        ? `${registry.size} endpoint(s) compile and pass the sandbox on ${backend.name}.\n`
        : "",
    );
    return problems.length === 0 ? 0 : 1;
  } finally {
    await backend.close();
  }
}
