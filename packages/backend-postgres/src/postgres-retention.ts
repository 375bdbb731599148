import {
  type LogSchema,
  type RetentionPolicy,
  type RetentionReport,
  retentionCutoffMicros,
  retentionDaysOf,
  type SourceStats,
} from "@qes/core";
import type pg from "pg";
import { dayOfMicros, defaultPartitionOf, listPartitions } from "./postgres-partitions.ts";
import { advisoryKey, qualified } from "./postgres-sql.ts";

/**
 * How long dropping a partition waits for its table's lock. DROP takes ACCESS EXCLUSIVE on the
 * source's table; queries queue behind a waiting DROP, so it gives up quickly (a long load holds
 * the table) and the next run drops what this one could not.
 */
const DROP_LOCK_TIMEOUT = "1s";

/** SQLSTATEs of a drop that met a busy table: lock_not_available, deadlock_detected */
const BUSY = new Set(["55P03", "40P01"]);

/**
 * Drops the daily partitions wholly older than each source's retention (core's whole-day cutoff,
 * so no partition is ever cut in two and no row is deleted one by one: the space returns to the
 * file system at once, without VACUUM). One short transaction per partition. Once across
 * instances: the caller's session holds the retention advisory lock (`retentionLockKey`).
 */
export async function applyPostgresRetention(
  client: pg.ClientBase,
  schemaName: string,
  schema: LogSchema,
  policy: RetentionPolicy,
  nowMicros: bigint,
): Promise<RetentionReport[]> {
  const reports: RetentionReport[] = [];
  for (const source of Object.values(schema.sources)) {
    const cutoff = retentionCutoffMicros(retentionDaysOf(policy, source.name), nowMicros);
    if (cutoff === null) continue;
    const cutoffDay = dayOfMicros(cutoff);
    const report: RetentionReport = { source: source.name, deletedEvents: 0, droppedPartitions: 0 };
    for (const partition of await listPartitions(client, schemaName, source.table)) {
      if (partition.day + partition.days > cutoffDay) continue;
      const table = qualified(schemaName, partition.name);
      // counted before the drop's transaction: a count inside it held its lock on the partition
      // while the drop waited for the source's table, and an ingest widening the source meanwhile
      // (the table first, then every partition) closed a deadlock. A late event of that old day
      // stored between the two is dropped uncounted; the report is what was seen.
      const { rows } = await client.query<{ n: string }>(`select count(*)::text as n from ${table}`);
      await client.query("begin");
      try {
        await client.query(`set local lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
        await client.query(`drop table ${table}`);
        await client.query("commit");
        report.deletedEvents += Number(rows[0]!.n);
        report.droppedPartitions! += 1;
      } catch (e) {
        await client.query("rollback").catch(() => undefined);
        // the table is busy (55P03 lock_not_available) or a writer's locks crossed the drop's
        // (40P01 deadlock_detected): the next run drops it, and the run goes on to other sources;
        // the report says so, or `qes retention` told cron "0 events removed" of a source whose
        // old days a long query kept at every run
        if (!BUSY.has((e as { code?: string }).code ?? "")) throw e;
        report.leftPartitions = (report.leftPartitions ?? 0) + 1;
      }
    }
    report.deletedEvents += await deleteFromDefaultPartition(client, schemaName, source.table, cutoff);
    reports.push(report);
  }
  return reports;
}

/**
 * Deletes the rows older than `cutoff` from the table's DEFAULT partition, when an operator attached
 * one: its old rows stayed for ever, counted in the source's events but beyond any retention.
 * Row by row, as it cannot be dropped whole (autovacuum reclaims the space); a busy table is left
 * to the next run. Returns how many went.
 */
async function deleteFromDefaultPartition(
  client: pg.ClientBase,
  schemaName: string,
  table: string,
  cutoff: bigint,
): Promise<number> {
  const fallback = await defaultPartitionOf(client, schemaName, table);
  if (fallback === undefined) return 0;
  await client.query("begin");
  try {
    await client.query(`set local lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
    const deleted = await client.query(
      `delete from ${qualified(schemaName, fallback)} where "timestamp" < 'epoch'::timestamptz + $1::bigint * interval '1 microsecond'`,
      [cutoff.toString()],
    );
    await client.query("commit");
    return deleted.rowCount ?? 0;
  } catch (e) {
    await client.query("rollback").catch(() => undefined);
    if (!BUSY.has((e as { code?: string }).code ?? "")) throw e;
    return 0;
  }
}

/** The session advisory lock that makes retention run once across instances. */
export function retentionLockKey(schemaName: string): string {
  return advisoryKey(`qes:retention:${schemaName}`);
}

/**
 * Events (per partition the larger of the statistics collector's live count, which ingest's
 * commits publish at once (postgres-stats-flush.ts) and ANALYZE resets to its estimate, and the
 * planner's estimate, which outlives a crash that loses the counts; the estimate alone missed every
 * event stored since the last ANALYZE, ~forever with autovacuum off), bytes (the
 * partitions with their indexes and TOAST) and the oldest event (one probe of the timestamp
 * index of the first partition) per source: catalogue reads, no scan.
 */
export async function postgresSourceStats(
  pool: pg.Pool,
  schemaName: string,
  schema: LogSchema,
): Promise<SourceStats[]> {
  const stats: SourceStats[] = [];
  for (const source of Object.values(schema.sources)) {
    const table = qualified(schemaName, source.table);
    const { rows } = await pool.query<{ events: string; bytes: string; oldest: string | null }>(
      // pg_stat_get_live_tuples, not the pg_stat_user_tables view: the view aggregates every
      // table of the database (pg_class × pg_index) for each source asked, so /metrics took 14 s
      // at 1,000 sources (one partition each), growing with sources × partitions
      `select coalesce(sum(greatest(c.reltuples, pg_stat_get_live_tuples(c.oid))), 0)::bigint::text as events,
              coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint::text as bytes,
              (select (extract(epoch from min("timestamp")) * 1000000)::bigint::text from ${table}) as oldest
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = $1::regclass`,
      [table],
    );
    const row = rows[0]!;
    stats.push({
      source: source.name,
      events: Number(row.events),
      bytes: Number(row.bytes),
      oldestMicros: row.oldest === null ? null : BigInt(row.oldest),
    });
  }
  return stats;
}
