import type { ClickHouseClient } from "@clickhouse/client";
import { dataTable, type StorageLayout } from "./clickhouse-storage.ts";

/**
 * The partition keys of sources' data tables as the server reports them (system.tables), by source
 * table name; a table not created yet is missing. A source's key is not in its schema: a table made
 * before `PARTITION_KEY` has `toDate(timestamp)` until start-up rebuilds it, and keeps it where no
 * rebuild runs (a cluster; one an older qes made meanwhile), and a staging table, retention and the
 * statistics must follow the key the table has. Read each time, not cached: a
 * table rebuilt with the new key (by another process too) would leave a cached key wrong.
 */
export async function partitionKeys(
  client: ClickHouseClient,
  layout: StorageLayout,
  tables: readonly string[],
): Promise<Map<string, string>> {
  if (tables.length === 0) return new Map();
  const byData = new Map(tables.map((t) => [dataTable(layout, t), t]));
  const rs = await client.query({
    query:
      "SELECT name, partition_key FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}",
    query_params: { db: layout.database, names: [...byData.keys()] },
    format: "JSONEachRow",
  });
  const keys = new Map<string, string>();
  for (const r of await rs.json<{ name: string; partition_key: string }>()) {
    const table = byData.get(r.name);
    if (table !== undefined) keys.set(table, r.partition_key);
  }
  return keys;
}
