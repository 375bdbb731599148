import type { ClickHouseClient } from "@clickhouse/client";
import { qualified } from "./clickhouse-sql.ts";

/** ids per existence query (one Array(String) parameter) */
const IDS_PER_QUERY = 10_000;

/**
 * The ids among `{ids}` a source stores: read through the id projection (clickhouse-storage.ts)
 * for a batch's thousands of ids, through the bloom filter on `id` for a few.
 */
export function storedIdsSql(database: string, table: string): string {
  return `SELECT DISTINCT "id" AS id FROM ${qualified(database, table)} WHERE "id" IN {ids:Array(String)}`;
}

/** The ids among `ids` that any of `tables` stores (ingest and load ask before they store). */
export async function storedIdsIn(
  client: ClickHouseClient,
  database: string,
  tables: readonly string[],
  ids: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (const table of tables) {
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const rs = await client.query({
        query: storedIdsSql(database, table),
        query_params: { ids: ids.slice(i, i + IDS_PER_QUERY) },
        format: "JSONEachRow",
      });
      for (const { id } of await rs.json<{ id: string }>()) found.add(id);
    }
  }
  return found;
}
