import {
  checkSourceName,
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  isQesError,
  type LogSchema,
  newSourceSchema,
} from "@qes/core";

/** distinct unknown sources one definition may name before it is left to fail as it is */
const MAX_SOURCES_PER_DEFINITION = 64;

/**
 * The log sources stored queries name that the store does not hold yet, each with the endpoints
 * that name it. A stored query over a source that only ingest will create (DESIGN.md §10: "a
 * source that does not exist is created on first ingest") must not stop start-up: the server
 * creates such a source empty, so the query answers the empty source's rows until events arrive,
 * and then theirs (compiled queries follow the schema version). A name no source may have stays
 * an error, and so does anything else a definition gets wrong.
 *
 * Found by compiling: a table the compiler cannot resolve is a source only where the name is not
 * a CTE's; each one found is added as an empty placeholder and the definition compiled again.
 */
export function undeclaredSources(
  definitions: readonly EndpointDefinition[],
  schema: LogSchema,
  dialect: Dialect,
): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const def of definitions) {
    let working = schema;
    for (let i = 0; i < MAX_SOURCES_PER_DEFINITION; i++) {
      const name = unknownSourceOf(def, working, dialect);
      if (name === undefined || !creatable(name, schema)) break;
      const endpoints = missing.get(name) ?? [];
      endpoints.push(def.name);
      missing.set(name, endpoints);
      working = withEmptySource(working, name);
    }
  }
  return missing;
}

/** the schema with `name` added as a source holding no fields but the fixed ones */
export function withEmptySource(schema: LogSchema, name: string): LogSchema {
  const tables = Object.values(schema.sources).map((s) => s.table);
  return { version: schema.version, sources: { ...schema.sources, [name]: newSourceSchema(name, tables) } };
}

function unknownSourceOf(def: EndpointDefinition, schema: LogSchema, dialect: Dialect): string | undefined {
  try {
    compileEndpoint(def, { schema, dialect });
    return undefined;
  } catch (e) {
    return isQesError(e) && e.code === "relation_not_allowed" ? e.unknownSource : undefined;
  }
}

/**
 * An engine's own catalogue, by the names its tables and schemas have (`pg_class`,
 * `duckdb_tables`, `sqlite_master`, `` `information_schema.tables` ``, ClickHouse's
 * `` `system.tables` ``), or qes's own tables: a stored query naming one means that relation, which
 * it may not read, not a log source to create.
 */
const ENGINE_RELATION = /^(?:pg_|duckdb_|sqlite_|qes_|information_schema(?:$|\.)|system\.|main\.|temp\.)/i;

/** a name a source may be created under: not reserved, not a catalogue's, not a store's table */
function creatable(name: string, schema: LogSchema): boolean {
  try {
    checkSourceName(name);
  } catch {
    return false;
  }
  if (ENGINE_RELATION.test(name)) return false;
  // a source's physical table named directly (`src_cloudflare_logs_prod`) stays refused
  const lower = name.toLowerCase();
  return !Object.values(schema.sources).some((s) => s.table.toLowerCase() === lower);
}
