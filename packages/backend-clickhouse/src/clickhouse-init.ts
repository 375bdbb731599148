import type { ClickHouseClient } from "@clickhouse/client";
import type { LogSchema } from "@qes/core";
import { initialSources, readLogSchema, schemaTableSql, writeLogSchema } from "./clickhouse-schema-store.ts";
import { quoteIdent } from "./clickhouse-sql.ts";
import { createSourceSql, type StorageLayout } from "./clickhouse-storage.ts";

/**
 * Creates the database, the schema table and the nine built-in sources when missing; an
 * initialised database is left as it is (every statement is IF NOT EXISTS, so two processes
 * starting at once agree). Returns the stored schema.
 */
export async function initStorage(
  client: ClickHouseClient,
  layout: StorageLayout,
  retentionDays: (source: string) => number = () => 0,
): Promise<LogSchema> {
  const cluster = layout.cluster === undefined ? "" : ` ON CLUSTER ${quoteIdent(layout.cluster)}`;
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(layout.database)}${cluster}` });
  await client.command({ query: schemaTableSql(layout) });
  const stored = await readLogSchema(client, layout);
  if (stored) return stored;
  const sources = initialSources();
  for (const source of Object.values(sources)) {
    for (const sql of createSourceSql(layout, source, retentionDays(source.name)))
      await client.command({ query: sql });
  }
  return writeLogSchema(client, layout, 0, sources);
}
