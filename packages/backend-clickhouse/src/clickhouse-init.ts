import type { ClickHouseClient } from "@clickhouse/client";
import type { LogSchema } from "@qes/core";
import { initialSources, readLogSchema, schemaTableSql, writeLogSchema } from "./clickhouse-schema-store.ts";
import { quoteIdent } from "./clickhouse-sql.ts";
import { addIdProjectionSql, createSourceSql, dataTable, type StorageLayout } from "./clickhouse-storage.ts";

/**
 * Creates the database, the schema table and the nine built-in sources when missing; an
 * initialised database is left as it is (every statement is IF NOT EXISTS, so two processes
 * starting at once agree) but for the sources' id projection, added where it is missing. Returns
 * the stored schema.
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
  if (stored) {
    await addIdProjections(client, layout, stored);
    return stored;
  }
  const sources = initialSources();
  for (const source of Object.values(sources)) {
    for (const sql of createSourceSql(layout, source, retentionDays(source.name)))
      await client.command({ query: sql });
  }
  return writeLogSchema(client, layout, 0, sources);
}

/** Gives the sources of a store made before the id projection theirs (clickhouse-storage.ts). */
async function addIdProjections(
  client: ClickHouseClient,
  layout: StorageLayout,
  schema: LogSchema,
): Promise<void> {
  const tables = Object.values(schema.sources).map((s) => s.table);
  const rs = await client.query({
    query:
      "SELECT name, create_table_query FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}",
    query_params: { db: layout.database, names: tables.map((t) => dataTable(layout, t)) },
    format: "JSONEachRow",
  });
  const created = new Map(
    (await rs.json<{ name: string; create_table_query: string }>()).map((r) => [
      r.name,
      r.create_table_query,
    ]),
  );
  for (const table of tables) {
    const query = created.get(dataTable(layout, table));
    if (query === undefined) continue;
    for (const sql of addIdProjectionSql(layout, table, query)) await client.command({ query: sql });
  }
}
