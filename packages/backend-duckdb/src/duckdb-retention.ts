import type { DuckDBConnection } from "@duckdb/node-api";
import {
  type LogSchema,
  type RetentionPolicy,
  type RetentionReport,
  retentionCutoffMicros,
  retentionDaysOf,
  type SourceSchema,
  type SourceStats,
} from "@qes/core";
import { checkpointAfterReaders } from "./duckdb-checkpoint.ts";
import { createTimeIndexSql, dropTimeIndexSql, quoteIdent, sqlString } from "./duckdb-storage.ts";

/**
 * Deletes the events older than each source's retention, one transaction per source, then
 * checkpoints. DuckDB keeps deleted rows until a checkpoint; the checkpoint rewrites row groups
 * with deletions and returns the blocks they no longer need to the file's free list, which the
 * next loads fill before the file grows (a test holds the file size steady over cycles). It does
 * not for a table with an index (row ids would move under it: the file grew by every cycle's
 * events), so a source with rows to delete loses its time index until the checkpoint is done —
 * queries meanwhile scan, as without it — and gets it rebuilt after (~1 s per million events).
 */
export async function applyDuckdbRetention(
  conn: DuckDBConnection,
  schema: LogSchema,
  policy: RetentionPolicy,
  nowMicros: bigint,
  /** resolves once the queries running when called have ended (or waiting gave up) */
  queriesSettled: () => Promise<void> = async () => {},
): Promise<RetentionReport[]> {
  const reports: RetentionReport[] = [];
  const unindexed: SourceSchema[] = [];
  try {
    for (const source of Object.values(schema.sources)) {
      const cutoff = retentionCutoffMicros(retentionDaysOf(policy, source.name), nowMicros);
      if (cutoff === null) continue;
      const where = `WHERE "timestamp" < make_timestamp($1::BIGINT)`;
      const table = quoteIdent(source.table);
      const old = await conn.runAndReadAll(`SELECT EXISTS (SELECT 1 FROM ${table} ${where})`, [cutoff]);
      if (old.getRows()[0]?.[0] !== true) {
        reports.push({ source: source.name, deletedEvents: 0 });
        continue;
      }
      await conn.run(dropTimeIndexSql(source));
      unindexed.push(source);
      reports.push({
        source: source.name,
        deletedEvents: await deleteRowGroupsOf(conn, table, where, cutoff),
      });
    }
    // a query in flight since before the index drop makes DuckDB refuse a plain CHECKPOINT: failing
    // here cost more than the run (a 500 to `qes retention`, an error each hour), as the index came
    // back before any checkpoint and a table with an index keeps its deleted rows' blocks at the
    // checkpoints after (a dashboard polling a slow query over 10 ingest and retention cycles: 5
    // runs failed, the file ended at 81.5 MB against 65.5 MB)
    if (reports.some((r) => r.deletedEvents > 0)) {
      // queries begun before the deletes committed may still see the deleted rows: the checkpoint
      // would keep their row groups (`RunningQueries`)
      await queriesSettled();
      await checkpointAfterReaders(conn);
    }
  } finally {
    for (const source of unindexed) await conn.run(createTimeIndexSql(source));
  }
  return reports;
}

/** DuckDB's block size: storage_info names blocks, not bytes */
const BLOCK_BYTES = 262_144;

/**
 * Events, bytes and the oldest event per source. Counts come from the table's row count (kept in
 * its metadata), the oldest from min(timestamp) (answered from row-group statistics). Bytes are
 * the distinct blocks its persisted segments occupy (an estimate: blocks can be shared) and the
 * rows no checkpoint has written yet at their length as text: those live in the write-ahead log
 * (and memory) until the WAL reaches DuckDB's checkpoint threshold (16 MB), and counting blocks
 * alone left a source at one block through ~170,000 ingested events, then jumped up at the
 * checkpoint of a retention run that had just removed a third of them.
 */
export async function duckdbSourceStats(
  conn: DuckDBConnection,
  sources: readonly SourceSchema[],
): Promise<SourceStats[]> {
  const stats: SourceStats[] = [];
  for (const source of sources) {
    const t = quoteIdent(source.table);
    // the first column's data segments count every row slot (deleted ones too), in rowid order;
    // the segments not persisted hold the rows appended since the last checkpoint, at the end
    const reader = await conn.runAndReadAll(
      `WITH segments AS (SELECT * FROM pragma_storage_info(${sqlString(source.table)}))
       SELECT (SELECT count(*) FROM ${t})::BIGINT, (SELECT epoch_us(min("timestamp")) FROM ${t})::BIGINT,
        (SELECT count(DISTINCT block_id) FROM segments WHERE persistent AND block_id >= 0)::BIGINT,
        (SELECT coalesce(sum(count), 0) FROM segments WHERE column_id = 0 AND segment_type <> 'VALIDITY')::BIGINT,
        (SELECT coalesce(sum(count), 0) FROM segments WHERE column_id = 0 AND segment_type <> 'VALIDITY' AND NOT persistent)::BIGINT`,
    );
    const [events, oldest, blocks, slots, unwritten] = reader.getRows()[0]!;
    stats.push({
      source: source.name,
      events: Number(events),
      bytes:
        Number(blocks) * BLOCK_BYTES +
        (Number(unwritten) > 0 ? await unwrittenBytes(conn, t, Number(slots) - Number(unwritten)) : 0),
      oldestMicros: oldest === null ? null : BigInt(oldest as bigint),
    });
  }
  return stats;
}

/** the text length of the rows of `table` from rowid `from` on: those no checkpoint has written */
async function unwrittenBytes(conn: DuckDBConnection, table: string, from: number): Promise<number> {
  const reader = await conn.runAndReadAll(
    `SELECT sum(coalesce(strlen(CAST(COLUMNS(*) AS VARCHAR)), 0))::BIGINT FROM ${table} WHERE rowid >= $1::BIGINT`,
    [BigInt(from)],
  );
  return (reader.getRows()[0] ?? []).reduce<number>((n, v) => n + Number(v ?? 0), 0);
}

/** rows per DuckDB row group (its default; a row's group is its rowid divided by it) */
const ROW_GROUP_ROWS = 122_880;

/**
 * Deletes the rows `where` selects (returns how many), and moves the other rows of every row group
 * it touches to the table's end, so that each touched group is deleted whole. DuckDB frees a row
 * group's blocks at a checkpoint only once every row of it is deleted: a group holding the oldest
 * day and the days after it kept the oldest day's blocks until those days went too, so a store
 * keeping a rolling window grew by a group of dead rows before it shrank (20,000 events a day, one
 * day kept: the file went 11 → 31 MB and back every six days; now 9.4–11 MB). The rows moved are
 * the survivors of the day boundary's group or two; when old rows are scattered through many
 * groups (late events), moving would rewrite the table, and a plain delete is done instead.
 */
async function deleteRowGroupsOf(
  conn: DuckDBConnection,
  table: string,
  where: string,
  cutoff: bigint,
): Promise<number> {
  const touched = `rowid // ${ROW_GROUP_ROWS} IN (SELECT DISTINCT rowid // ${ROW_GROUP_ROWS} FROM ${table} ${where})`;
  // a NULL time is no old row: kept, and moved with its group
  const kept = `${touched} AND NOT coalesce("timestamp" < make_timestamp($1::BIGINT), false)`;
  await conn.run("BEGIN TRANSACTION");
  try {
    const counts = await conn.runAndReadAll(
      `SELECT (SELECT count(*) FROM ${table} ${where})::BIGINT, (SELECT count(*) FROM ${table} WHERE ${kept})::BIGINT`,
      [cutoff],
    );
    const [old, moving] = (counts.getRows()[0] ?? [0n, 0n]).map(Number) as [number, number];
    if (moving > Math.max(2 * ROW_GROUP_ROWS, old)) {
      await conn.run(`DELETE FROM ${table} ${where}`, [cutoff]);
    } else {
      await conn.run(
        `CREATE OR REPLACE TEMP TABLE qes_retention_kept AS SELECT * FROM ${table} WHERE ${kept}`,
        [cutoff],
      );
      await conn.run(`DELETE FROM ${table} WHERE ${touched}`, [cutoff]);
      await conn.run(`INSERT INTO ${table} SELECT * FROM qes_retention_kept`);
      await conn.run("DROP TABLE qes_retention_kept");
    }
    await conn.run("COMMIT");
    return old;
  } catch (e) {
    await conn.run("ROLLBACK");
    throw e;
  }
}
