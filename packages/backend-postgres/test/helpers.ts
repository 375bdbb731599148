import type { CompiledQuery, OutputColumn, ScalarType, SqlParam } from "@qes/core";
import pg from "pg";
import {
  createPostgresBackend,
  dropPostgresStorage,
  type PostgresBackend,
  type PostgresBackendConfig,
} from "../src/index.ts";

/** The shared PostgreSQL server of the test machine; each test file works in its own schema. */
export const TEST_POSTGRES_URL =
  process.env.QES_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

let counter = 0;

/** A schema name no other test file (or run) uses. */
export function uniqueSchema(prefix: string): string {
  return `qes_pgt_${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** Runs one statement on a short-lived owner connection. */
export async function ownerQuery<R extends pg.QueryResultRow = any>(
  sql: string,
  values: unknown[] = [],
  url = TEST_POSTGRES_URL,
): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<R>(sql, values);
  } finally {
    await client.end();
  }
}

/** Drops a test schema and its reader role. */
export async function dropStorage(schema: string, url = TEST_POSTGRES_URL): Promise<void> {
  await dropPostgresStorage(url, schema);
}

/** A backend on a fresh schema, initialised; `dispose` closes it and drops the schema. */
export async function freshBackend(
  prefix: string,
  extra: Partial<PostgresBackendConfig> = {},
): Promise<{ backend: PostgresBackend; schema: string; dispose: () => Promise<void> }> {
  const schema = uniqueSchema(prefix);
  const backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 3, ...extra });
  await backend.init();
  return {
    backend,
    schema,
    async dispose() {
      await backend.close();
      await dropStorage(schema, extra.url ?? TEST_POSTGRES_URL);
    },
  };
}

/** A hand-written query, as if compiled: PostgreSQL SQL, output columns, positional params. */
export function handQuery(
  sql: string,
  columns: OutputColumn[],
  params: [string, ScalarType][] = [],
): CompiledQuery {
  const sqlParams: SqlParam[] = params.map(([name, type]) => ({ name, type, kind: "endpoint" }));
  return { sql, params: sqlParams, columns, schemaVersion: 0, dialect: "postgres", patternParams: [] };
}

export function scalar(name: string, type: ScalarType): OutputColumn {
  return { name, type: { kind: "scalar", type } };
}

/** `"schema"."table"` of a source. */
export async function tableOf(backend: PostgresBackend, source: string): Promise<string> {
  const schema = await backend.schema();
  const table = schema.sources[source]?.table;
  if (table === undefined) throw new Error(`no source ${source}`);
  return `"${backend.config.schema}"."${table}"`;
}

/** Physical columns of a table with their PostgreSQL types. */
export async function columnTypes(schema: string, table: string): Promise<Record<string, string>> {
  const { rows } = await ownerQuery<{ column_name: string; data_type: string }>(
    "select column_name, data_type from information_schema.columns where table_schema = $1 and table_name = $2",
    [schema, table],
  );
  return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
}
