import { createHash } from "node:crypto";
import { civilFromDays, daysFromCivil } from "@qes/core";
import { ident, literal, type Queryable, qualified } from "./postgres-sql.ts";

/**
 * Daily partitions of a source's table (DESIGN.md §10): the table is partitioned by range of
 * `"timestamp"`, one partition per UTC day, so retention drops whole days (DROP TABLE: the space
 * returns to the file system at once, no DELETE, no VACUUM) and a time-range query scans only the
 * days it asks for.
 *
 * Partitions are made with CREATE TABLE … LIKE and then ATTACH PARTITION, inside the writing
 * transaction: ATTACH takes SHARE UPDATE EXCLUSIVE on the parent, which readers do not wait for,
 * where CREATE TABLE … PARTITION OF takes ACCESS EXCLUSIVE and would stall every query of the
 * source until a long load commits. A load that rolls back takes its partitions with it.
 */

const MICROS_PER_DAY = 86_400_000_000n;

/** UTC day number (days since 1970-01-01) of unix microseconds. */
export function dayOfMicros(micros: bigint): number {
  const days = micros / MICROS_PER_DAY;
  return Number(micros < 0n && days * MICROS_PER_DAY !== micros ? days - 1n : days);
}

function ymd(day: number): string {
  const { year, month, day: d } = civilFromDays(day);
  return `${String(year).padStart(4, "0")}${String(month).padStart(2, "0")}${String(d).padStart(2, "0")}`;
}

function isoDay(day: number): string {
  const { year, month, day: d } = civilFromDays(day);
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/**
 * `<table>__<yyyymmdd>`, shortened with a hash of the table name to fit 63 bytes. The double
 * underscore is what no source's table name holds (core's table names collapse every run of other
 * characters to one `_`): with one, source `x 20250115` (table `src_x_20250115`) took the name of
 * source `x`'s partition for that day, and every later event of `x` on that day failed its request.
 * Partitions made before keep their names: they are found by their bounds, not their names.
 */
export function partitionName(table: string, day: number): string {
  const name = `${table}__${ymd(day)}`;
  if (name.length <= 63) return name;
  const hash = createHash("sha256").update(table).digest("hex").slice(0, 8);
  return `${table.slice(0, 43)}_${hash}__${ymd(day)}`;
}

/**
 * The bound PostgreSQL writes for a partition: `FOR VALUES FROM ('2025-01-15 00:00:00+00') TO (…)`.
 * The last day's partition ends at `10000-01-01`: read with four year digits only, it was not
 * listed, and every later write of 9999-12-31 tried to make it again and failed.
 */
const BOUND =
  /FROM \('(\d{4,5})-(\d{2})-(\d{2}) 00:00:00\+00'\) TO \('(\d{4,5})-(\d{2})-(\d{2}) 00:00:00\+00'\)/;

export interface Partition {
  name: string;
  /** first UTC day it holds */
  day: number;
  /** days it spans (1 for qes' own partitions) */
  days: number;
}

/**
 * The partitions of a table, by first day. The session's TimeZone must be UTC (qes' owner
 * connections are), so bounds read back as `… 00:00:00+00`.
 */
export async function listPartitions(db: Queryable, schema: string, table: string): Promise<Partition[]> {
  const { rows } = await db.query<{ name: string; bound: string }>(
    `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
     from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = $1::regclass`,
    [qualified(schema, table)],
  );
  const partitions: Partition[] = [];
  for (const row of rows) {
    const m = BOUND.exec(row.bound);
    if (!m) continue;
    const from = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
    const to = daysFromCivil(Number(m[4]), Number(m[5]), Number(m[6]));
    partitions.push({ name: row.name, day: from, days: to - from });
  }
  return partitions.sort((a, b) => a.day - b.day);
}

/**
 * The DEFAULT partition of a table, if an operator attached one (qes makes none): it holds the rows
 * of every day no daily partition covers, so retention cannot drop it whole.
 */
export async function defaultPartitionOf(
  db: Queryable,
  schema: string,
  table: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = $1::regclass and pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'`,
    [qualified(schema, table)],
  );
  return rows[0]?.name;
}

/** Is the table partitioned (relkind `p`) rather than a plain table from before partitioning? */
export async function isPartitioned(db: Queryable, schema: string, table: string): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(
    "select relkind::text as kind from pg_class where oid = $1::regclass",
    [qualified(schema, table)],
  );
  return rows[0]?.kind === "p";
}

/** The partition table (its name in the source's schema) that holds each UTC day. */
export type DayPartitions = Map<number, string>;

/**
 * Creates the daily partitions among `days` that `known` does not hold yet, and adds them to it.
 * Runs in the caller's transaction, which holds the source's load lock.
 */
export async function ensureDailyPartitions(
  client: Queryable,
  schema: string,
  table: string,
  days: Iterable<number>,
  known: DayPartitions,
): Promise<void> {
  let fallback: string | null | undefined;
  for (const day of days) {
    if (known.has(day)) continue;
    const name = partitionName(table, day);
    const partition = qualified(schema, name);
    const from = literal(`${isoDay(day)} 00:00:00+00`);
    const to = literal(`${isoDay(day + 1)} 00:00:00+00`);
    await client.query(`create table ${partition} (like ${qualified(schema, table)} including defaults)`);
    fallback ??= (await defaultPartitionOf(client, schema, table)) ?? null;
    if (fallback !== null) await moveDayOutOfDefault(client, schema, table, fallback, partition, from, to);
    await client.query(
      `alter table ${qualified(schema, table)} attach partition ${partition} for values from (${from}) to (${to})`,
    );
    known.set(day, name);
  }
}

/**
 * The rows of a day that an operator's DEFAULT partition holds, moved into the day's new partition
 * before it is attached: PostgreSQL refuses to attach a range the DEFAULT partition has rows of
 * ("updated partition constraint for default partition would be violated"), and every ingest of
 * that day failed with a 500. Columns by name: the DEFAULT partition's order may be its own.
 */
async function moveDayOutOfDefault(
  client: Queryable,
  schema: string,
  table: string,
  fallback: string,
  partition: string,
  from: string,
  to: string,
): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select attname as name from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`,
    [qualified(schema, table)],
  );
  const columns = rows.map((r) => ident(r.name)).join(", ");
  await client.query(
    `with moved as (delete from ${qualified(schema, fallback)} where "timestamp" >= ${from} and "timestamp" < ${to} returning ${columns}) ` +
      `insert into ${partition} (${columns}) select ${columns} from moved`,
  );
}

/**
 * Takes the lock on a source's partitioned table that a COPY into it would take (ROW EXCLUSIVE),
 * before its partitions are listed for writing rows straight into them, which locks only the
 * partitions written. Held to the end of the transaction, it keeps retention from dropping a
 * partition the writer has listed (dropping a partition locks its parent ACCESS EXCLUSIVE); queries
 * and ATTACH PARTITION do not wait for it.
 */
export async function lockForWriting(client: Queryable, schema: string, table: string): Promise<void> {
  await client.query(`lock table ${qualified(schema, table)} in row exclusive mode`);
}

/**
 * The partition of each day the table's partitions cover (one spanning several days, attached by
 * hand, holds each of them), for `ensureDailyPartitions` and for writing rows straight into it.
 */
export async function partitionsByDay(db: Queryable, schema: string, table: string): Promise<DayPartitions> {
  const days: DayPartitions = new Map();
  for (const p of await listPartitions(db, schema, table))
    for (let d = 0; d < p.days; d++) days.set(p.day + d, p.name);
  return days;
}

/** The statements that create a source's partitioned table and its indexes. */
export function partitionedTableSql(schema: string, table: string): string[] {
  const t = qualified(schema, table);
  return [
    `create table ${t} (id text not null, "timestamp" timestamptz not null, event_message text, project text) ` +
      `partition by range ("timestamp")`,
    ...indexSql(schema, table),
  ];
}

/**
 * Indexes on the parent, inherited by every partition: one project's newest rows in a time range
 * (logs.all), a time window over all projects (counters, metadata filters), and the id probe of
 * ingest's deduplication. Ids are not unique in the index: on a table partitioned by timestamp a
 * unique index must include the timestamp, and an event retried without a timestamp gets another
 * (the load time). Ingest holds the source's lock and anti-joins on this index instead.
 */
export function indexSql(schema: string, table: string): string[] {
  const t = qualified(schema, table);
  const [projectTime, time, id] = indexNames(table);
  return [
    `create index if not exists ${ident(projectTime)} on ${t} (project, "timestamp")`,
    `create index if not exists ${ident(time)} on ${t} ("timestamp")`,
    `create index if not exists ${ident(id)} on ${t} (id)`,
  ];
}

/**
 * The names of a table's indexes, as PostgreSQL keeps them (cut to 63 bytes; table names are
 * ASCII). They share the schema's namespace with every table and index, and `if not exists` skips
 * an index whose name another relation holds without a word: a new source's table is named so
 * that none of them is taken (postgres-storage.ts).
 */
export function indexNames(table: string): [string, string, string] {
  const cut = (name: string) => name.slice(0, 63);
  return [cut(`${table}_project_timestamp_idx`), cut(`${table}_timestamp_idx`), cut(`${table}_id_idx`)];
}

/** the units time buckets are grouped by in log queries (`TIMESTAMP_TRUNC(timestamp, HOUR)`) */
const BUCKET_UNITS = ["minute", "hour", "day"] as const;

/**
 * Statistics of the time buckets of a source (PostgreSQL 14+: statistics on expressions), named
 * `<table>_<unit>_stat`. Without them the planner takes `GROUP BY date_trunc('day', "timestamp",
 * 'UTC')` to have as many groups as timestamps (166k estimated for 8 days at 1M events), sorts
 * every row of the window to group it, spilling to disk; with them it hashes into the few groups
 * there are (docs/benchmarks.md, "Time-bucket statistics"). The expressions are the PostgreSQL
 * dialect's TIMESTAMP_TRUNC, so the planner matches them in compiled queries. An ANALYZE of the
 * table fills them (the loader runs one after a large load).
 */
export function bucketStatisticsSql(schema: string, table: string): string[] {
  const t = qualified(schema, table);
  return BUCKET_UNITS.map(
    (unit) =>
      `create statistics if not exists ${qualified(schema, `${table}_${unit}_stat`)} ` +
      `on (date_trunc(${literal(unit)}, "timestamp", 'UTC')) from ${t}`,
  );
}

/** PostgreSQL versions with statistics on expressions */
export async function hasExpressionStatistics(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ v: string }>("select current_setting('server_version_num') as v");
  return Number(rows[0]?.v) >= 140000;
}

/**
 * Creates the bucket statistics a source lacks and, when any was missing, analyzes the table so
 * they hold numbers (autovacuum never analyzes a partitioned parent). Returns whether it did.
 */
export async function ensureBucketStatistics(db: Queryable, schema: string, table: string): Promise<boolean> {
  const { rows } = await db.query<{ n: string }>(
    `select count(*)::text as n from pg_statistic_ext
     where stxnamespace = $1::regnamespace and stxname = any($2::text[])`,
    [ident(schema), BUCKET_UNITS.map((unit) => `${table}_${unit}_stat`)],
  );
  if (Number(rows[0]?.n) === BUCKET_UNITS.length) return false;
  for (const sql of bucketStatisticsSql(schema, table)) await db.query(sql);
  await db.query(`analyze ${qualified(schema, table)}`);
  return true;
}

/**
 * Turns a table from before partitioning into a partitioned one of the same name, in the
 * caller's transaction: the rows are copied into daily partitions (one pass; run once, at the
 * first start-up of a version with partitions, under the init lock).
 */
export async function partitionLegacyTable(client: Queryable, schema: string, table: string): Promise<void> {
  const legacy = `${table.slice(0, 50)}_legacy`;
  const { rows: indexes } = await client.query<{ name: string }>(
    "select indexname as name from pg_indexes where schemaname = $1 and tablename = $2",
    [schema, table],
  );
  for (const index of indexes) await client.query(`drop index ${qualified(schema, index.name)}`);
  await client.query(`alter table ${qualified(schema, table)} rename to ${ident(legacy)}`);
  const t = qualified(schema, table);
  await client.query(
    `create table ${t} (like ${qualified(schema, legacy)} including defaults) partition by range ("timestamp")`,
  );
  const { rows } = await client.query<{ day: string }>(
    `select distinct (extract(epoch from date_trunc('day', "timestamp")) / 86400)::int::text as day
     from ${qualified(schema, legacy)}`,
  );
  await ensureDailyPartitions(
    client,
    schema,
    table,
    rows.map((r) => Number(r.day)),
    new Map(),
  );
  await client.query(`insert into ${t} select * from ${qualified(schema, legacy)}`);
  await client.query(`drop table ${qualified(schema, legacy)}`);
  for (const sql of indexSql(schema, table)) await client.query(sql);
}
