import { type Backend, BUILTIN_SOURCES, compileEndpoint, type EndpointDefinition } from "@qes/core";

/** True when none of the nine built-in sources holds an event (`QES_SEED=auto` seeds then). */
export async function storeIsEmpty(backend: Backend): Promise<boolean> {
  const schema = await backend.schema();
  for (const [i, source] of BUILTIN_SOURCES.entries()) {
    const probe: EndpointDefinition = {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      name: `qes.probe.${i}`,
      sql: `select id from \`${source}\` limit 1`,
      sqlFile: "(store probe)",
      maxRows: 1,
      cacheTtlSeconds: 0,
      sandboxable: false,
      redactPii: false,
      params: {},
      version: `store-probe-${source}`,
    };
    const compiled = compileEndpoint(probe, { schema, dialect: backend.dialect });
    const result = await backend.execute(compiled, [], { maxRows: 1, timeoutMs: 30_000 });
    if (result.rows.length > 0) return false;
  }
  return true;
}
