import {
  batchCoveredBy,
  checkSourceName,
  cloneSourceSchema,
  type IngestBatch,
  type IngestResult,
  type LogEvent,
  type PreparedIngest,
  QesError,
  type SchemaChange,
  type SourceDayLimit,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import type pg from "pg";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { createCopyRowEncoder } from "./postgres-copy-row.ts";
import { DayBound } from "./postgres-day-bound.ts";
import { type DayRows, DayRowsBuilder } from "./postgres-day-rows.ts";
import { lockTableBusy, toQesError } from "./postgres-errors.ts";
import { encodePrepared, type PreparedCopyRows } from "./postgres-ingest-prepare.ts";
import { copyIntoPartition } from "./postgres-partition-copy.ts";
import {
  type DayPartitions,
  dayOfMicros,
  ensureDailyPartitions,
  lockForWriting,
  partitionsByDay,
} from "./postgres-partitions.ts";
import { copyNamingRefusedRow, isRefusedRow, refusedRowError } from "./postgres-refused-row.ts";
import { flushStatsAtCommit } from "./postgres-stats-flush.ts";
import {
  applySchemaChanges,
  createSource,
  lockSourceForLoad,
  readSource,
  saveSource,
} from "./postgres-storage.ts";
import type { PostgresStoredIds, StoredIdsCheck } from "./postgres-stored-ids.ts";
import { replaceWriteToken } from "./postgres-write-token.ts";

/** Per source of one call: its model (widened in place) and the ids the call has seen. */
interface Target {
  source: SourceSchema;
  /** the table's partitions by day */
  partitions: DayPartitions;
  changed: boolean;
  seen: Set<string>;
  /** the source's write token and filter of ids, read under its load lock */
  ids: StoredIdsCheck;
  /** ids the call stores in the source */
  written: string[];
  /** the call changed a column's type (ALTER COLUMN TYPE rewrites the table) */
  rewrote: boolean;
  /** events of the call's batches waiting for their COPY, all covered by `source` */
  pending: LogEvent[];
  /** each waiting event's index in its batch (the request), to name a row PostgreSQL refuses */
  pendingIndexes: number[];
  /** rows encoded ahead (`IngestBatch.prepared`) waiting for their COPY: those at `keep` */
  pendingPrepared: { rows: PreparedCopyRows; keep: number[] }[];
  /** `JSON.stringify(source.fields)` while `source` is unchanged (what prepared rows are checked against) */
  fields?: string;
  /** the days the call may open in the source, on a server that bounds them */
  dayBound?: DayBound;
  /** a refused call run again only to name the event of the row PostgreSQL refused */
  naming: boolean;
}

/**
 * COPY rows, by day, of a target's waiting events (encoded here for `source`, the model they
 * are covered by) and of its rows encoded ahead for the same model.
 */
function copyRows(source: SourceSchema, target: Target): { columns: string[]; days: DayRows[] } {
  const encoder = createCopyRowEncoder(source);
  const rows = new DayRowsBuilder();
  const encoded = encodePrepared(encoder, target.pending).rows as PreparedCopyRows;
  for (let i = 0; i < encoded.texts.length; i++)
    rows.add(encoded.days[i]!, encoded.micros[i]!, encoded.texts[i]!, target.pendingIndexes[i]!);
  for (const { rows: prepared, keep } of target.pendingPrepared) addPrepared(rows, prepared, keep);
  return { columns: encoder.columns.map((c) => c.column), days: rows.build() };
}

/** the rows at `keep` (indexes in their batch) into their days */
function addPrepared(out: DayRowsBuilder, rows: PreparedCopyRows, keep: readonly number[]): void {
  for (const i of keep) out.add(rows.days[i]!, rows.micros[i]!, rows.texts[i]!, i);
}

/** the batch's rows encoded ahead, when they were encoded for the target's model as it is now */
function usablePrepared(batch: IngestBatch, target: Target): PreparedIngest | undefined {
  const prepared = batch.prepared;
  if (prepared === undefined) return undefined;
  target.fields ??= JSON.stringify(target.source.fields);
  return prepared.fields === target.fields ? prepared : undefined;
}

/**
 * Indexes of `ids` neither seen earlier in the call nor stored in the target's table (the first
 * of ids repeated within them).
 */
async function freshIndexes(
  client: pg.ClientBase,
  storedIds: PostgresStoredIds,
  target: Target,
  ids: readonly string[],
): Promise<number[]> {
  const fresh: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (target.seen.has(id)) continue;
    target.seen.add(id);
    fresh.push(i);
  }
  if (fresh.length === 0) return fresh;
  const stored = await storedIds.stored(
    client,
    target.ids,
    fresh.map((i) => ids[i]!),
  );
  const keep = stored.size === 0 ? fresh : fresh.filter((i) => !stored.has(ids[i]!));
  for (const i of keep) target.written.push(ids[i]!);
  return keep;
}

/**
 * COPYs a target's waiting events, shaped for `model`, straight into their days' partitions (made
 * when missing), one COPY per day: the batches of one call that meet between two widenings go
 * together, so a group commit of several requests sorts and writes each day once.
 */
async function writeEvents(
  client: pg.ClientBase,
  schema: string,
  model: SourceSchema,
  target: Target,
): Promise<void> {
  if (target.pending.length === 0 && target.pendingPrepared.length === 0) return;
  const { columns, days } = copyRows(model, target);
  target.pending = [];
  target.pendingIndexes = [];
  target.pendingPrepared = [];
  await ensureDailyPartitions(
    client,
    schema,
    target.source.table,
    days.map((d) => d.day),
    target.partitions,
  );
  for (const rows of days) {
    const partition = target.partitions.get(rows.day)!;
    if (target.naming) await copyNamingRefusedRow(client, schema, partition, columns, rows);
    else await copyIntoPartition(client, schema, partition, columns, [rows.text]);
  }
}

/**
 * Stores the batches of one ingest call in one transaction (DESIGN.md §10): the sources' load
 * locks (all of them, in name order, then the create lock when a source is new: the order a load
 * takes them in, so two instances never deadlock), sources created as a load
 * creates them, widening by core's widenSchema, duplicates left out, rows by COPY straight into
 * each day's partition, in time order (postgres-day-rows.ts), once per day for the batches
 * between two widenings. Resolves after
 * COMMIT, which with PostgreSQL's default `synchronous_commit` is durable.
 */
export async function ingestEvents(
  pool: pg.Pool,
  config: ResolvedPostgresConfig,
  storedIds: PostgresStoredIds,
  batches: readonly IngestBatch[],
  dayLimit?: SourceDayLimit,
): Promise<IngestCall> {
  try {
    return await ingestCall(pool, config, storedIds, batches, dayLimit, false);
  } catch (e) {
    // a row PostgreSQL refused, in a request alone (a group's requests are each committed alone
    // after a refusal): the call again, rolled back, finds the row's event to name it
    if (batches.length !== 1 || !(e instanceof QesError) || e.event !== undefined || !isRefusedRow(e.cause))
      throw e;
    const named = await ingestCall(pool, config, storedIds, batches, dayLimit, true).then(
      () => undefined,
      (d: unknown) => d,
    );
    throw named instanceof QesError && named.event !== undefined ? named : e;
  }
}

interface IngestCall {
  results: IngestResult[];
  schemaChanged: boolean;
  sources: SourceSchema[];
}

/** `ingestEvents`' transaction; `naming`: run only to name a refused row's event, never committed */
async function ingestCall(
  pool: pg.Pool,
  config: ResolvedPostgresConfig,
  storedIds: PostgresStoredIds,
  batches: readonly IngestBatch[],
  dayLimit: SourceDayLimit | undefined,
  naming: boolean,
): Promise<IngestCall> {
  for (const batch of batches) checkSourceName(batch.source);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw toQesError(e, "connecting to ingest events");
  }
  let broken = false;
  try {
    await client.query("begin");
    const names = [...new Set(batches.map((b) => b.source))].sort();
    const targets = new Map<string, Target>();
    let schemaChanged = false;
    // every source's load lock before the create lock: a loader (and a call of one source) takes
    // them in that order, so a call that held the create lock while it waited for a later
    // source's load lock closed a cycle with another instance creating that source (40P01, a 500)
    for (const name of names) await lockSourceForLoad(client, config.schema, name);
    let creating = false;
    for (const name of names) {
      let source = await readSource(client, config.schema, name);
      if (source === null) {
        if (!creating) await lockSourceForLoad(client, config.schema);
        creating = true;
        source =
          (await readSource(client, config.schema, name)) ?? (await createSource(client, config, name));
        schemaChanged = true;
      }
      await lockForWriting(client, config.schema, source.table);
      const partitions = await partitionsByDay(client, config.schema, source.table);
      // the group's batches share one server clock; the first one's bound stands for all
      const boundedBefore = batches.find((b) => b.source === name)?.boundedBefore;
      targets.set(name, {
        source: cloneSourceSchema(source),
        partitions,
        ...(dayLimit ? { dayBound: new DayBound(name, partitions, dayLimit, boundedBefore) } : {}),
        changed: false,
        seen: new Set(),
        ids: await storedIds.check(client, name, source.table),
        written: [],
        rewrote: false,
        pending: [],
        pendingIndexes: [],
        pendingPrepared: [],
        naming,
      });
    }
    const results: IngestResult[] = [];
    for (const batch of batches) {
      const target = targets.get(batch.source)!;
      const prepared = usablePrepared(batch, target);
      if (prepared !== undefined) {
        // encoded for this very model: covered, nothing to widen; only duplicates are left out
        const keep = await freshIndexes(client, storedIds, target, prepared.ids);
        const rows = prepared.rows as PreparedCopyRows;
        target.dayBound?.take(
          keep.map((i) => rows.days[i]!),
          keep,
        );
        if (keep.length > 0) target.pendingPrepared.push({ rows: prepared.rows as PreparedCopyRows, keep });
        results.push({
          source: batch.source,
          stored: keep.length,
          duplicates: prepared.ids.length - keep.length,
        });
        continue;
      }
      const keep = await freshIndexes(
        client,
        storedIds,
        target,
        batch.events.map((e) => e.id),
      );
      const events = keep.map((i) => batch.events[i]!);
      target.dayBound?.take(
        events.map((e) => dayOfMicros(e.timestamp)),
        keep,
      );
      // the model the waiting events were shaped for, should this batch widen it
      const waiting = target.pending.length > 0 || target.pendingPrepared.length > 0;
      const before = waiting ? cloneSourceSchema(target.source) : undefined;
      const changes: SchemaChange[] = [];
      if (!batchCoveredBy(target.source, batch.coveredBy))
        for (const [index, event] of events.entries())
          changes.push(...widenForEvent(target.source, event.body, index));
      if (changes.length > 0) {
        // stored before the change, which converts them as it converts every stored row
        if (before !== undefined) await writeEvents(client, config.schema, before, target);
        await applySchemaChanges(client, config.schema, target.source, changes);
        target.changed = true;
        if (changes.some((c) => c.op === "alter_column")) target.rewrote = true;
        target.fields = undefined;
      }
      for (const [k, event] of events.entries()) {
        target.pending.push(event);
        target.pendingIndexes.push(keep[k]!);
      }
      results.push({
        source: batch.source,
        stored: events.length,
        duplicates: batch.events.length - events.length,
      });
    }
    for (const target of targets.values()) await writeEvents(client, config.schema, target.source, target);
    for (const target of targets.values()) {
      if (!target.changed) continue;
      await saveSource(client, config.schema, target.source);
      schemaChanged = true;
    }
    const tokens = new Map<Target, string>();
    for (const target of targets.values()) {
      if (target.written.length > 0)
        tokens.set(target, await replaceWriteToken(client, config.schema, target.source.name));
    }
    if (naming) throw new Error("no row was refused when the call ran again");
    if (tokens.size > 0) await flushStatsAtCommit(pool, client);
    await client.query("commit");
    for (const [target, token] of tokens)
      storedIds.committed(target.ids, token, target.written, target.rewrote);
    return { results, schemaChanged, sources: [...targets.values()].map((t) => t.source) };
  } catch (e) {
    try {
      await client.query("rollback");
    } catch {
      broken = true;
    }
    // a value PostgreSQL refuses (22xxx data exception), or a row too wide for it, is the
    // event's fault, not the service's (was 422 sql_too_complex for a row too wide)
    if (isRefusedRow(e)) throw refusedRowError(e);
    throw lockTableBusy(e) ?? toQesError(e, "ingesting events");
  } finally {
    client.release(broken);
  }
}
