import type { ClickHouseClient } from "@clickhouse/client";
import {
  type LogSchema,
  type RetentionPolicy,
  type RetentionReport,
  nowMicros as realNowMicros,
  retentionCutoffMicros,
  retentionDaysOf,
  type SourceStats,
} from "@qes/core";
import { partitionKeys } from "./clickhouse-partition-key.ts";
import { qualified, sqlString } from "./clickhouse-sql.ts";
import { dataTable, isDayNumberKey, type StorageLayout, ttlSql } from "./clickhouse-storage.ts";

/** `YYYYMMDD`: the partition id of a day under `PARTITION BY toDate(timestamp)`. */
function partitionIdOf(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString().slice(0, 10).replaceAll("-", "");
}

const MICROS_PER_DAY = 86_400_000_000n;

/** how far a retention run's now may lie from this machine's clock for a TTL to agree with it */
const CLOCK_AGREEMENT_MICROS = 3_600_000_000;

/** The day number since 1970-01-01 (negative before): a day's id under `PARTITION BY toDate32(timestamp)`. */
function dayNumberOf(micros: bigint): bigint {
  // BigInt division truncates toward zero; a day before 1970 must round down
  const q = micros / MICROS_PER_DAY;
  return micros < 0n && q * MICROS_PER_DAY !== micros ? q - 1n : q;
}

async function rows<T>(client: ClickHouseClient, query: string, params: Record<string, unknown> = {}) {
  const rs = await client.query({ query, query_params: params, format: "JSONEachRow" });
  return rs.json<T>();
}

async function hasTtl(client: ClickHouseClient, layout: StorageLayout, table: string): Promise<boolean> {
  const found = await rows<{ e: string }>(
    client,
    "SELECT engine_full AS e FROM system.tables WHERE database = {db:String} AND name = {t:String}",
    { db: layout.database, t: dataTable(layout, table) },
  );
  return /\bTTL\b/.test(found[0]?.e ?? "");
}

/**
 * Retention on ClickHouse (DESIGN.md §10): every source's table carries the policy as its TTL
 * (whole daily parts expire in the background), and this drops now the daily partitions older than
 * the cutoff core computes — the same whole UTC days every backend removes, no row rewritten.
 */
export async function applyClickhouseRetention(
  client: ClickHouseClient,
  layout: StorageLayout,
  schema: LogSchema,
  policy: RetentionPolicy,
  nowMicros: bigint,
): Promise<RetentionReport[]> {
  const reports: RetentionReport[] = [];
  const sources = Object.values(schema.sources);
  // one read of every table's key, as the statistics do, not one per source
  const keys = await partitionKeys(
    client,
    layout,
    sources.map((s) => s.table),
  );
  // A TTL expires parts by the engine's clock. A run whose now is another day (a clock pinned by
  // QES_TEST_NOW) would have it remove, within seconds of the next merge, events this run keeps:
  // then the table has none, and the runs alone remove what is old by their clock.
  const engineClock = Math.abs(Number(nowMicros - realNowMicros())) < CLOCK_AGREEMENT_MICROS;
  for (const source of sources) {
    const days = retentionDaysOf(policy, source.name);
    const ttlDays = engineClock ? days : 0;
    if (ttlDays > 0 || (await hasTtl(client, layout, source.table)))
      await client.command({
        query: ttlSql(layout, source.table, ttlDays),
        clickhouse_settings: { materialize_ttl_after_modify: 0 },
      });
    const cutoff = retentionCutoffMicros(days, nowMicros);
    if (cutoff === null) continue;
    const local = dataTable(layout, source.table);
    const key = keys.get(source.table) ?? "";
    // A partition is dropped only when all its events are older than the cutoff, read from them.
    // Under `toDate32("timestamp")` ids are day numbers (no wrap): the days before the cutoff's.
    // Under `toDate("timestamp")` (tables made before it) the key wraps around outside
    // 1970-01-01…2149-06-06: a day of 2150 shares the partition of a day of 2020, one of 1960
    // that of a day of 2139; so the old `YYYYMMDD` partitions and those after today are read
    // (future days are few; wrapped old days land there).
    const where = isDayNumberKey(key)
      ? "toInt64(_partition_id) < {cutDay:Int64}"
      : "_partition_id < {cut:String} OR _partition_id > {today:String}";
    const partitions = (
      await rows<{ p: string; n: string | number; old: number }>(
        client,
        `SELECT _partition_id AS p, count() AS n, max("timestamp") < fromUnixTimestamp64Micro({cutoff:Int64}, 'UTC') AS old ` +
          `FROM ${qualified(layout.database, local)} WHERE ${where} GROUP BY p ORDER BY p`,
        {
          cutoff: cutoff.toString(),
          cut: partitionIdOf(cutoff),
          today: partitionIdOf(nowMicros),
          cutDay: dayNumberOf(cutoff).toString(),
        },
      )
    ).filter((p) => Number(p.old) === 1);
    const cluster = layout.cluster === undefined ? "" : ` ON CLUSTER "${layout.cluster}"`;
    let deleted = 0;
    for (const { p, n } of partitions) {
      await client.command({
        query: `ALTER TABLE ${qualified(layout.database, local)}${cluster} DROP PARTITION ID ${sqlString(p)}`,
      });
      deleted += Number(n);
    }
    reports.push({ source: source.name, deletedEvents: deleted, droppedPartitions: partitions.length });
  }
  return reports;
}

/**
 * Events, bytes and the oldest event per source from the parts' own bookkeeping (system.parts):
 * rows and bytes on disk per table, the oldest day from the partition key; the oldest event is then
 * read from that day's partition alone.
 */
export async function clickhouseSourceStats(
  client: ClickHouseClient,
  layout: StorageLayout,
  schema: LogSchema,
): Promise<SourceStats[]> {
  // the smallest partition id is the oldest day still kept (retention drops whole days): as text
  // for `YYYYMMDD` ids (toDate tables), as a number for day numbers (toDate32: '-3532' < '20089')
  const parts = await rows<{
    t: string;
    n: string | number;
    b: string | number;
    p: string;
    d: string | null;
  }>(
    client,
    "SELECT table AS t, sum(rows) AS n, sum(bytes_on_disk) AS b, min(partition_id) AS p, " +
      "toString(min(toInt64OrNull(partition_id))) AS d " +
      "FROM system.parts WHERE database = {db:String} AND active GROUP BY table",
    { db: layout.database },
  );
  const byTable = new Map(parts.map((p) => [p.t, p]));
  const keys = await partitionKeys(
    client,
    layout,
    Object.values(schema.sources).map((s) => s.table),
  );
  const stats: SourceStats[] = [];
  for (const source of Object.values(schema.sources)) {
    const part = byTable.get(dataTable(layout, source.table));
    const events = Number(part?.n ?? 0);
    let oldestMicros: bigint | null = null;
    if (part && events > 0) {
      const dayNumbers = isDayNumberKey(keys.get(source.table) ?? "");
      const [oldest] = await rows<{ o: string | null }>(
        client,
        `SELECT toString(toUnixTimestamp64Micro(minOrNull("timestamp"))) AS o FROM ${qualified(layout.database, source.table)} ` +
          (dayNumbers
            ? `WHERE toDate32("timestamp") = addDays(toDate32('1970-01-01'), {d:Int64})`
            : `WHERE toDate("timestamp") = toDate(parseDateTimeBestEffort({d:String}, 'UTC'))`),
        { d: dayNumbers ? part.d : part.p },
      );
      oldestMicros = oldest?.o ? BigInt(oldest.o) : null;
    }
    stats.push({ source: source.name, events, bytes: Number(part?.b ?? 0), oldestMicros });
  }
  return stats;
}
