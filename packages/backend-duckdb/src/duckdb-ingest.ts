import type { DuckDBConnection } from "@duckdb/node-api";
import {
  batchCoveredBy,
  checkSourceName,
  cloneSourceSchema,
  type IngestBatch,
  type IngestResult,
  type LogEvent,
  type LogSchema,
  newSourceSchema,
  type SchemaChange,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import { selectRows } from "./duckdb-chunk-columns.ts";
import type { PreparedDuckdbRows } from "./duckdb-ingest-prepare.ts";
import { ChunkWriter } from "./duckdb-loader.ts";
import { applySchemaChanges, bumpSchemaVersion, createSource, writeSourceSchema } from "./duckdb-storage.ts";
import type { StoredIds } from "./duckdb-stored-ids.ts";

export interface IngestOutcome {
  results: IngestResult[];
  /** the sources whose schema changed and the new schema version, when any did */
  schema?: { sources: SourceSchema[]; version: number };
}

/**
 * Stores the batches of one ingest call in one transaction on `conn` (DESIGN.md §10): sources are
 * created and widened as a load does (core's widenSchema, the loader's ChunkWriter); an event
 * whose id is stored already (`storedIds`), or came earlier in this call, is skipped. DuckDB syncs its WAL at
 * COMMIT, so the events are durable when this resolves. Any failure rolls back every batch.
 */
export async function ingestIntoDuckdb(
  conn: DuckDBConnection,
  current: LogSchema,
  batches: readonly IngestBatch[],
  storedIds: StoredIds,
): Promise<IngestOutcome> {
  for (const batch of batches) checkSourceName(batch.source);
  const working = new Map<string, SourceSchema>();
  const changed = new Set<string>();
  const seen = new Map<string, Set<string>>();
  const results: IngestResult[] = [];
  await conn.run("BEGIN TRANSACTION");
  try {
    for (const batch of batches) {
      let schema = working.get(batch.source);
      if (schema === undefined) {
        const existing = current.sources[batch.source];
        if (existing) schema = cloneSourceSchema(existing);
        else {
          const taken = [...Object.values(current.sources), ...working.values()].map((s) => s.table);
          schema = newSourceSchema(batch.source, taken);
          await createSource(conn, schema);
          changed.add(batch.source);
        }
        working.set(batch.source, schema);
      }
      const ids = seen.get(batch.source) ?? new Set<string>();
      seen.set(batch.source, ids);
      const written = await writePrepared(conn, schema, batch, ids, storedIds);
      if (written !== undefined) {
        results.push(written);
        continue;
      }
      const fresh: LogEvent[] = [];
      for (const event of batch.events) {
        if (ids.has(event.id)) continue;
        ids.add(event.id);
        fresh.push(event);
      }
      const stored = await storedIds.stored(
        conn,
        schema.table,
        fresh.map((e) => e.id),
      );
      const events = stored.size === 0 ? fresh : fresh.filter((e) => !stored.has(e.id));
      // the batch's widening first, then its rows, as PostgreSQL and ClickHouse store them: an
      // event written before a later one of its batch widened its field would hold a different
      // value (the engine's cast of a number to text)
      const changes: SchemaChange[] = [];
      if (!batchCoveredBy(schema, batch.coveredBy)) {
        for (const [index, event] of events.entries()) {
          for (const change of widenForEvent(schema, event.body, index)) changes.push(change);
        }
      }
      if (changes.length > 0) {
        await applySchemaChanges(conn, schema, changes);
        changed.add(batch.source);
      }
      const writer = new ChunkWriter(conn, schema.table);
      await writer.open(schema);
      for (const event of events) writer.add(event);
      writer.close();
      storedIds.written(
        schema.table,
        events.map((e) => e.id),
      );
      results.push({
        source: batch.source,
        stored: events.length,
        duplicates: batch.events.length - events.length,
      });
    }
    let version: number | undefined;
    if (changed.size > 0) {
      for (const name of changed) await writeSourceSchema(conn, working.get(name)!);
      version = await bumpSchemaVersion(conn);
    }
    // committed: the caller takes the new schema, then checkpoints it (`checkpointSchemaChange`),
    // so that a checkpoint that fails leaves the process knowing what the store holds
    await conn.run("COMMIT");
    if (version === undefined) return { results };
    return { results, schema: { sources: [...changed].map((n) => working.get(n)!), version } };
  } catch (e) {
    await conn.run("ROLLBACK").catch(() => {});
    throw e;
  }
}

/**
 * Writes a batch's rows as an ingest worker laid them out (`IngestBatch.prepared`), when they were
 * laid out for the source's schema as it is now, leaving out those whose id is stored already or
 * came earlier in the call (the first of repeated ids is kept, as for events). Undefined when the
 * rows are for another schema: the caller writes the batch's events.
 */
async function writePrepared(
  conn: DuckDBConnection,
  schema: SourceSchema,
  batch: IngestBatch,
  seen: Set<string>,
  storedIds: StoredIds,
): Promise<IngestResult | undefined> {
  const prepared = batch.prepared;
  if (prepared === undefined || prepared.fields !== JSON.stringify(schema.fields)) return undefined;
  const fresh = new Set<string>();
  for (const id of prepared.ids) if (!seen.has(id)) fresh.add(id);
  const stored = await storedIds.stored(conn, schema.table, [...fresh]);
  const writer = new ChunkWriter(conn, schema.table);
  await writer.open(schema);
  let index = 0;
  let kept = 0;
  for (const chunk of (prepared.rows as PreparedDuckdbRows).chunks) {
    const rows: number[] = [];
    for (let r = 0; r < chunk.rows; r++) {
      const id = prepared.ids[index++]!;
      if (seen.has(id) || stored.has(id)) continue;
      seen.add(id);
      rows.push(r);
    }
    kept += rows.length;
    if (rows.length === chunk.rows) writer.appendInCoreOrder(chunk);
    else if (rows.length > 0) writer.appendInCoreOrder(selectRows(chunk, rows));
  }
  writer.close();
  storedIds.written(schema.table, fresh);
  return { source: batch.source, stored: kept, duplicates: prepared.ids.length - kept };
}
