import type { ClickHouseClient, ClickHouseSettings } from "@clickhouse/client";
import { type LogSchema, QesError } from "@qes/core";
import type { ClientPool } from "./clickhouse-connection.ts";
import { INSERT_SETTINGS } from "./clickhouse-insert-rows.ts";
import { acquireLease, DEFAULT_LEASE_TIMING, type HeldLease, type LeaseTiming } from "./clickhouse-lease.ts";
import { partitionKeys } from "./clickhouse-partition-key.ts";
import { qualified, quoteIdent } from "./clickhouse-sql.ts";
import {
  createDataTableSql,
  dataTable,
  isDayNumberKey,
  PARTITION_KEY,
  type StorageLayout,
} from "./clickhouse-storage.ts";

/**
 * Rebuilds the tables of sources still partitioned by `toDate(timestamp)` (made before
 * `PARTITION_KEY`) with the key, TTL, settings, index and projection a new source's table has:
 * ClickHouse prunes partitions by the key, and `toDate` wraps outside 1970-01-01…2149-06-06, so
 * such a table answered `timestamp < '1970-01-01'` with nothing. A partition key cannot be
 * altered: the rows are copied into a new table `qes_rebuild_<table>` that `EXCHANGE TABLES`
 * (atomic on the Atomic databases ClickHouse and chDB make) then swaps in.
 *
 * Every state a kill leaves is finished at the next start: before the swap the source's table is
 * the old one, whole, and the half-filled rebuild table is dropped and made again; after it the
 * source's table is the new one, whole (the swap comes only after the copy), and the rebuild table
 * holds the old rows and is dropped. One instance at a time rebuilds (a lease, clickhouse-lease.ts);
 * the others wait for it in their own start-up, so no instance of this version writes before the
 * tables are rebuilt. An older qes knows nothing of the lease: its rows stored during the copy are
 * seen by the count check below (the rebuild is refused until the next start), but rows it stores
 * between the check and the swap would stay in the old table and go with it (docs/clickhouse.md
 * says to stop older instances first).
 */
const REBUILD_PREFIX = "qes_rebuild_";
const LEASE = "partition_migration";

export interface PartitionMigration {
  /** source tables rebuilt with the new key */
  rebuilt: string[];
  /** what the operator must know: tables left with the old key, and why */
  warnings: string[];
}

interface Pending {
  /** source tables (by schema) whose data table has the old key, with their source's name */
  old: { table: string; source: string }[];
  /** rebuild tables a killed migration left */
  leftovers: string[];
}

async function pending(client: ClickHouseClient, layout: StorageLayout, schema: LogSchema): Promise<Pending> {
  const sources = Object.values(schema.sources);
  const keys = await partitionKeys(
    client,
    layout,
    sources.map((s) => s.table),
  );
  const old = sources
    .filter((s) => keys.has(s.table) && !isDayNumberKey(keys.get(s.table)!))
    .map((s) => ({ table: s.table, source: s.name }));
  const rs = await client.query({
    query:
      "SELECT name FROM system.tables WHERE database = {db:String} AND startsWith(name, {prefix:String})",
    query_params: { db: layout.database, prefix: REBUILD_PREFIX },
    format: "JSONEachRow",
  });
  const leftovers = (await rs.json<{ name: string }>()).map((r) => r.name);
  return { old, leftovers };
}

/**
 * Rebuilds every source table of `schema` still partitioned by the old key (see above); nothing
 * is done, and no lease taken, when none is. On a cluster nothing is rebuilt: each table is named
 * in a warning.
 */
export async function migratePartitionKeys(
  pool: ClientPool,
  layout: StorageLayout,
  schema: LogSchema,
  retentionDays: (source: string) => number,
  timing: LeaseTiming = DEFAULT_LEASE_TIMING,
): Promise<PartitionMigration> {
  const first = await pool.use((c) => pending(c, layout, schema));
  if (first.old.length === 0 && first.leftovers.length === 0) return { rebuilt: [], warnings: [] };
  if (layout.cluster !== undefined) {
    // the copy would have to run shard by shard into new replicated tables (own Keeper paths),
    // which cannot be tested here: refused, named, and the old-key paths keep these tables working
    return {
      rebuilt: [],
      warnings: first.old.map(
        ({ table, source }) =>
          `ClickHouse table ${dataTable(layout, table)} (source ${source}) is partitioned by toDate(timestamp): ` +
          "queries on events before 1970-01-01 or after 2149-06-06 may miss rows. qes rebuilds such tables at " +
          "start-up only without a cluster; on a cluster, rebuild it by hand with PARTITION BY toDate32(timestamp).",
      ),
    };
  }
  const lease = await acquireLease(pool, layout, LEASE, timing);
  try {
    // another instance may have rebuilt them while this one waited
    const now = await pool.use((c) => pending(c, layout, schema));
    for (const name of now.leftovers)
      await command(pool, `DROP TABLE IF EXISTS ${qualified(layout.database, name)} SYNC`);
    const rebuilt: string[] = [];
    for (const { table, source } of now.old) {
      await rebuildTable(pool, layout, table, retentionDays(source), lease);
      rebuilt.push(table);
    }
    return { rebuilt, warnings: [] };
  } finally {
    await lease.release();
  }
}

function command(pool: ClientPool, query: string, settings: ClickHouseSettings = {}): Promise<void> {
  return pool.use(async (c) => {
    await c.command({ query, clickhouse_settings: settings });
  });
}

async function rows<T>(pool: ClientPool, query: string, params: Record<string, unknown>): Promise<T[]> {
  return pool.use(async (c) =>
    (await c.query({ query, query_params: params, format: "JSONEachRow" })).json<T>(),
  );
}

async function rebuildTable(
  pool: ClientPool,
  layout: StorageLayout,
  table: string,
  retentionDays: number,
  lease: HeldLease,
): Promise<void> {
  const db = layout.database;
  const target = qualified(db, table);
  const rebuildName = `${REBUILD_PREFIX}${table}`;
  const rebuild = qualified(db, rebuildName);
  // the table's own columns, as they are (the schema could lag a table widened just before a kill)
  const columns = await rows<{ name: string; type: string }>(
    pool,
    "SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position",
    { db, t: table },
  );
  await command(pool, `DROP TABLE IF EXISTS ${rebuild} SYNC`);
  await command(
    pool,
    createDataTableSql(layout, {
      name: rebuild,
      table,
      columns: columns.map((c) => `${quoteIdent(c.name)} ${c.type}`),
      retentionDays,
      durable: true,
      partitionKey: PARTITION_KEY,
      ifNotExists: false,
    }),
  );
  // the new TTL must not drop copied rows before they are counted
  await command(pool, `SYSTEM STOP TTL MERGES ${rebuild}`);
  const names = columns.map((c) => quoteIdent(c.name)).join(", ");
  await command(pool, `INSERT INTO ${rebuild} (${names}) SELECT ${names} FROM ${target}`, INSERT_SETTINGS);
  const [counts] = await rows<{ copied: string; kept: string }>(
    pool,
    `SELECT (SELECT count() FROM ${rebuild}) AS copied, (SELECT count() FROM ${target}) AS kept`,
    {},
  );
  // the old table's own TTL may have dropped rows since the copy read them; more rows than were
  // copied came from another writer, whose rows the swap would lose
  if (Number(counts!.copied) < Number(counts!.kept)) {
    await command(pool, `DROP TABLE IF EXISTS ${rebuild} SYNC`);
    throw new QesError(
      "backend_unavailable",
      `ClickHouse table ${table} took rows while it was rebuilt with the toDate32 partition key ` +
        `(${counts!.kept} now, ${counts!.copied} copied): is an older qes still writing to this database? ` +
        "Stop it; the rebuild runs again at the next start.",
    );
  }
  if (!lease.held())
    throw new QesError(
      "backend_unavailable",
      `lost the ClickHouse migration lease while rebuilding ${table}`,
    );
  await command(pool, `EXCHANGE TABLES ${target} AND ${rebuild}`);
  await command(pool, `SYSTEM START TTL MERGES ${target}`);
  await command(pool, `DROP TABLE ${rebuild} SYNC`);
}
