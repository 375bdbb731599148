import {
  batchCoveredBy,
  checkSourceName,
  cloneSourceSchema,
  type IngestBatch,
  type IngestResult,
  type LogEvent,
  QesError,
  type SchemaChange,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import type pg from "pg";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { createCopyRowEncoder } from "./postgres-copy-row.ts";
import { type DayRows, DayRowsBuilder } from "./postgres-day-rows.ts";
import { toQesError } from "./postgres-errors.ts";
import { copyIntoPartition } from "./postgres-partition-copy.ts";
import {
  type DayPartitions,
  ensureDailyPartitions,
  lockForWriting,
  partitionsByDay,
} from "./postgres-partitions.ts";
import { qualified } from "./postgres-sql.ts";
import {
  applySchemaChanges,
  createSource,
  lockSourceForLoad,
  readSource,
  saveSource,
} from "./postgres-storage.ts";

/** Per source of one call: its model (widened in place) and the ids the call has seen. */
interface Target {
  source: SourceSchema;
  /** the table's partitions by day */
  partitions: DayPartitions;
  changed: boolean;
  seen: Set<string>;
  /** events of the call's batches waiting for their COPY, all covered by `source` */
  pending: LogEvent[];
}

/**
 * The ids among `ids` already stored in a source's table: one index probe per id (the `id`
 * index), as one statement. The caller holds the source's load lock, so no other transaction can
 * store one of them between this read and the commit.
 */
async function storedIds(
  client: pg.ClientBase,
  schema: string,
  table: string,
  ids: string[],
): Promise<Set<string>> {
  const { rows } = await client.query<{ id: string }>(
    `select id from ${qualified(schema, table)} where id = any($1::text[])`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** COPY rows of events the source's model covers, by day. */
function copyRows(source: SourceSchema, events: LogEvent[]): { columns: string[]; days: DayRows[] } {
  const encoder = createCopyRowEncoder(source);
  const rows = new DayRowsBuilder();
  for (const [index, event] of events.entries()) {
    if (encoder.timestamps.format(event.timestamp) === null)
      throw new QesError("invalid_event", `event ${event.id}: "timestamp" is out of range`);
    const day = encoder.timestamps.day;
    rows.add(day, event.timestamp, encoder.encode(event), index);
  }
  return { columns: encoder.columns.map((c) => c.column), days: rows.build() };
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
  if (target.pending.length === 0) return;
  const { columns, days } = copyRows(model, target.pending);
  target.pending = [];
  await ensureDailyPartitions(
    client,
    schema,
    target.source.table,
    days.map((d) => d.day),
    target.partitions,
  );
  for (const rows of days)
    await copyIntoPartition(client, schema, target.partitions.get(rows.day)!, columns, [rows.text]);
}

/**
 * Stores the batches of one ingest call in one transaction (DESIGN.md §10): the sources' load
 * locks (taken in name order, so two instances never deadlock), sources created as a load
 * creates them, widening by core's widenSchema, duplicates left out, rows by COPY straight into
 * each day's partition, in time order (postgres-day-rows.ts), once per day for the batches
 * between two widenings. Resolves after
 * COMMIT, which with PostgreSQL's default `synchronous_commit` is durable.
 */
export async function ingestEvents(
  pool: pg.Pool,
  config: ResolvedPostgresConfig,
  batches: readonly IngestBatch[],
): Promise<{ results: IngestResult[]; schemaChanged: boolean }> {
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
    for (const name of names) {
      await lockSourceForLoad(client, config.schema, name);
      let source = await readSource(client, config.schema, name);
      if (source === null) {
        await lockSourceForLoad(client, config.schema);
        source =
          (await readSource(client, config.schema, name)) ?? (await createSource(client, config, name));
        schemaChanged = true;
      }
      await lockForWriting(client, config.schema, source.table);
      targets.set(name, {
        source: cloneSourceSchema(source),
        partitions: await partitionsByDay(client, config.schema, source.table),
        changed: false,
        seen: new Set(),
        pending: [],
      });
    }
    const results: IngestResult[] = [];
    for (const batch of batches) {
      const target = targets.get(batch.source)!;
      const fresh: LogEvent[] = [];
      for (const event of batch.events) {
        if (target.seen.has(event.id)) continue;
        target.seen.add(event.id);
        fresh.push(event);
      }
      const stored =
        fresh.length === 0
          ? new Set<string>()
          : await storedIds(
              client,
              config.schema,
              target.source.table,
              fresh.map((e) => e.id),
            );
      const events = stored.size === 0 ? fresh : fresh.filter((e) => !stored.has(e.id));
      // the model the waiting events were shaped for, should this batch widen it
      const before = target.pending.length > 0 ? cloneSourceSchema(target.source) : undefined;
      const changes: SchemaChange[] = [];
      if (!batchCoveredBy(target.source, batch.coveredBy))
        for (const [index, event] of events.entries())
          changes.push(...widenForEvent(target.source, event.body, index));
      if (changes.length > 0) {
        // stored before the change, which converts them as it converts every stored row
        if (before !== undefined) await writeEvents(client, config.schema, before, target);
        await applySchemaChanges(client, config.schema, target.source, changes);
        target.changed = true;
      }
      for (const event of events) target.pending.push(event);
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
    await client.query("commit");
    return { results, schemaChanged };
  } catch (e) {
    try {
      await client.query("rollback");
    } catch {
      broken = true;
    }
    // a value PostgreSQL refuses (22xxx data exception) is the event's fault, not the service's
    const state = (e as { code?: unknown }).code;
    if (typeof state === "string" && state.startsWith("22")) {
      throw new QesError(
        "invalid_event",
        `an event holds a value PostgreSQL cannot store: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    throw toQesError(e, "ingesting events");
  } finally {
    client.release(broken);
  }
}
