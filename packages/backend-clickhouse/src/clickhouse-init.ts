import type { ClickHouseClient } from "@clickhouse/client";
import type { LogSchema } from "@qes/core";
import type { ClientPool } from "./clickhouse-connection.ts";
import type { LeaseTiming } from "./clickhouse-lease.ts";
import { migratePartitionKeys } from "./clickhouse-partition-migration.ts";
import { initialSources, readLogSchema, schemaTableSql, writeLogSchema } from "./clickhouse-schema-store.ts";
import { quoteIdent } from "./clickhouse-sql.ts";
import { addIdProjectionSql, createSourceSql, dataTable, type StorageLayout } from "./clickhouse-storage.ts";

/** What `initStorage` found: the stored schema, and what the operator must be told. */
export interface InitializedStorage {
  schema: LogSchema;
  warnings: string[];
}

/**
 * Creates the database, the schema table and the nine built-in sources when missing; an
 * initialised database is left as it is (every statement is IF NOT EXISTS, so two processes
 * starting at once agree) but for its sources' tables made by earlier versions: those still
 * partitioned by `toDate` are rebuilt (clickhouse-partition-migration.ts), and those without the
 * id projection are given it.
 */
export async function initStorage(
  pool: ClientPool,
  layout: StorageLayout,
  retentionDays: (source: string) => number = () => 0,
  leaseTiming?: LeaseTiming,
): Promise<InitializedStorage> {
  const cluster = layout.cluster === undefined ? "" : ` ON CLUSTER ${quoteIdent(layout.cluster)}`;
  const stored = await pool.use(async (client) => {
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(layout.database)}${cluster}` });
    await client.command({ query: schemaTableSql(layout) });
    return readLogSchema(client, layout);
  });
  if (stored) {
    const migration = await migratePartitionKeys(pool, layout, stored, retentionDays, leaseTiming);
    await pool.use((client) => addIdProjections(client, layout, stored));
    return { schema: stored, warnings: migration.warnings };
  }
  const sources = initialSources();
  const schema = await pool.use(async (client) => {
    for (const source of Object.values(sources)) {
      for (const sql of createSourceSql(layout, source, retentionDays(source.name)))
        await client.command({ query: sql });
    }
    return writeLogSchema(client, layout, 0, sources);
  });
  return { schema, warnings: [] };
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
