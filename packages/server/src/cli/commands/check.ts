import { resolve } from "node:path";
import { openBackend } from "../../backend/open-backend.ts";
import { checkEndpoints, formatProblem } from "../../check/check-endpoints.ts";
import { loadConfig } from "../../config.ts";
import { loadServedEndpoints } from "../../endpoint-dirs.ts";

/**
 * `qes check [dir…]`: loads the built-ins plus the given directories (default: QES_ENDPOINTS_DIR),
 * compiles and sandbox-checks each definition against the store, and reports file, line and
 * column of every problem. Exit code 1 when any definition fails.
 */
export async function checkCommand(dirs: string[]): Promise<number> {
  const config = loadConfig();
  const registry = await loadServedEndpoints(
    dirs.length > 0 ? dirs.map((d) => resolve(d)) : config.endpointDirs,
  );
  const backend = await openBackend(config);
  try {
    const problems = checkEndpoints(registry.list(), await backend.schema(), backend.dialect);
    const failed = new Set(problems.map((p) => p.endpoint));
    for (const def of registry.list()) {
      if (!failed.has(def.name)) process.stdout.write(`ok    ${def.name}  (${def.sqlFile})\n`);
    }
    for (const p of problems) process.stderr.write(`FAIL  ${p.endpoint}\n      ${formatProblem(p)}\n`);
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
