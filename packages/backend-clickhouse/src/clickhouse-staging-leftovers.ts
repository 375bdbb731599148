import type { ClickHouseClient } from "@clickhouse/client";
import { STAGING_PREFIX } from "./clickhouse-loader.ts";
import { qualified } from "./clickhouse-sql.ts";
import type { StorageLayout } from "./clickhouse-storage.ts";

/**
 * Drops the staging tables of ingest calls and loads that a killed process left behind
 * (clickhouse-loader.ts `StagedSource`): a call drops its own at its end, but a SIGKILL in the
 * middle of one left it, with its staged rows, for good — disk no retention ever reclaimed, one
 * table more per crash. Only for a store no other process can be writing to (embedded chDB holds
 * its directory alone): on a ClickHouse server another instance's staging table may be in use.
 */
export async function dropLeftoverStaging(client: ClickHouseClient, layout: StorageLayout): Promise<number> {
  const rs = await client.query({
    query:
      "SELECT name FROM system.tables WHERE database = {db:String} AND startsWith(name, {prefix:String})",
    query_params: { db: layout.database, prefix: STAGING_PREFIX },
    format: "JSONEachRow",
  });
  const names = (await rs.json<{ name: string }>()).map((r) => r.name);
  for (const name of names)
    await client.command({ query: `DROP TABLE IF EXISTS ${qualified(layout.database, name)} SYNC` });
  return names.length;
}
