import type { ClickHouseClient } from "@clickhouse/client";
import { builtinLogSchema, type LogSchema, QesError, type SourceSchema } from "@qes/core";
import { qualified, quoteIdent, sqlString } from "./clickhouse-sql.ts";
import type { StorageLayout } from "./clickhouse-storage.ts";

/**
 * The persisted schema (DESIGN.md §3): ClickHouse has no transactions, so every schema version is
 * one row `(version, schema)` appended to `qes_schema` (a single-row insert is atomic) and the
 * newest row is the schema. A reader notices another process's change by reading the newest
 * version, which is cheap.
 */
const TABLE = "qes_schema";

export function schemaTableSql(layout: StorageLayout): string {
  const cluster = layout.cluster === undefined ? "" : ` ON CLUSTER ${quoteIdent(layout.cluster)}`;
  const engine =
    layout.cluster === undefined
      ? "MergeTree"
      : `ReplicatedMergeTree(${sqlString(`/clickhouse/tables/{shard}/${layout.database}/${TABLE}`)}, '{replica}')`;
  return (
    `CREATE TABLE IF NOT EXISTS ${qualified(layout.database, TABLE)}${cluster} ` +
    `("version" UInt64, "schema" String, "written" DateTime64(6, 'UTC') DEFAULT now64(6)) ` +
    `ENGINE = ${engine} ORDER BY "version"`
  );
}

/** The newest schema version, or 0 when none is stored. */
export async function readSchemaVersion(client: ClickHouseClient, layout: StorageLayout): Promise<number> {
  const rs = await client.query({
    query: `SELECT max("version") AS v FROM ${qualified(layout.database, TABLE)}`,
    format: "JSONEachRow",
  });
  const rows = await rs.json<{ v: string | number }>();
  return Number(rows[0]?.v ?? 0);
}

/** The newest stored schema, or null when none is stored. */
export async function readLogSchema(
  client: ClickHouseClient,
  layout: StorageLayout,
): Promise<LogSchema | null> {
  const rs = await client.query({
    query: `SELECT "version", "schema" FROM ${qualified(layout.database, TABLE)} ORDER BY "version" DESC LIMIT 1`,
    format: "JSONEachRow",
  });
  const rows = await rs.json<{ version: string | number; schema: string }>();
  const row = rows[0];
  if (row === undefined) return null;
  const sources = JSON.parse(row.schema) as Record<string, SourceSchema>;
  return { version: Number(row.version), sources };
}

/** Stores `sources` as the next version after `current`; returns the new schema. */
export async function writeLogSchema(
  client: ClickHouseClient,
  layout: StorageLayout,
  current: number,
  sources: Record<string, SourceSchema>,
): Promise<LogSchema> {
  const version = current + 1;
  await client.insert({
    table: qualified(layout.database, TABLE),
    values: [{ version, schema: JSON.stringify(sources) }],
    columns: ["version", "schema"],
    format: "JSONEachRow",
  });
  return { version, sources };
}

/** The schema a new store starts with: the nine built-in sources. */
export function initialSources(): Record<string, SourceSchema> {
  return builtinLogSchema().sources;
}

export function schemaMissing(database: string): QesError {
  return new QesError("backend_unavailable", `the ClickHouse database ${database} has not been initialised`);
}
