import {
  batchCoveredBy,
  checkSourceName,
  type IngestBatch,
  type IngestResult,
  type LogSchema,
  widenForEvent,
} from "@qes/core";
import { type LoadContext, persistSchemas, type StagedSource, stageSource } from "./clickhouse-loader.ts";
import { storedIdsIn } from "./clickhouse-stored-ids.ts";

/**
 * Indexes of `ids` neither seen earlier in the call (`seen`, which takes them) nor stored in the
 * source (the first of ids repeated within them).
 */
async function freshIndexes(
  ctx: LoadContext,
  stage: StagedSource,
  seen: Set<string>,
  ids: readonly string[],
): Promise<number[]> {
  const fresh: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (seen.has(id)) continue;
    seen.add(id);
    fresh.push(i);
  }
  if (stage.isNew || fresh.length === 0) return fresh;
  const stored = await storedIdsIn(
    ctx.client,
    ctx.layout.database,
    [stage.schema.table],
    fresh.map((i) => ids[i]!),
  );
  return stored.size === 0 ? fresh : fresh.filter((i) => !stored.has(ids[i]!));
}

export interface IngestOutcome {
  results: IngestResult[];
  /** the schema after the call, when a source was created or widened */
  schema?: LogSchema;
}

/**
 * Stores the batches of one ingest call (DESIGN.md §10) as one unit: each source's new events go
 * to a staging table first (widened as a load widens), duplicates skipped (ids stored already or
 * repeated in the call); only when every batch is staged are the sources made or widened and the
 * schema stored as its new version, and only then do they take the rows (daily partitions
 * attached): a kill at any step leaves no row the stored schema does not know. Parts are fsynced as they are written
 * (the tables' `fsync_after_insert`), so the events are durable when this resolves.
 */
export async function ingestIntoClickhouse(
  ctx: LoadContext,
  current: LogSchema,
  batches: readonly IngestBatch[],
): Promise<IngestOutcome> {
  for (const batch of batches) checkSourceName(batch.source);
  const staged = new Map<string, StagedSource>();
  const seen = new Map<string, Set<string>>();
  const results: IngestResult[] = [];
  try {
    for (const batch of batches) {
      let stage = staged.get(batch.source);
      if (stage === undefined) {
        const taken = { ...current, sources: { ...current.sources } };
        for (const s of staged.values()) taken.sources[s.schema.name] = s.schema;
        stage = stageSource(ctx, taken, batch.source, true);
        staged.set(batch.source, stage);
      }
      const ids = seen.get(batch.source) ?? new Set<string>();
      seen.set(batch.source, ids);
      const prepared = batch.prepared;
      if (prepared !== undefined && prepared.fields === JSON.stringify(stage.schema.fields)) {
        // encoded for this very schema: nothing to widen; only duplicates are left out
        const keep = await freshIndexes(ctx, stage, ids, prepared.ids);
        await stage.addEncoded(prepared.rows as string[], keep);
        results.push({
          source: batch.source,
          stored: keep.length,
          duplicates: prepared.ids.length - keep.length,
        });
        continue;
      }
      const events = batch.events;
      const keep = await freshIndexes(
        ctx,
        stage,
        ids,
        events.map((e) => e.id),
      );
      const covered = batchCoveredBy(stage.schema, batch.coveredBy);
      // rows encoded ahead are for the schema before any widening of this batch
      if (!covered && stage.holdsEncoded) await stage.flush();
      for (const index of keep) {
        const event = events[index]!;
        const changes = covered ? [] : widenForEvent(stage.schema, event.body, index);
        if (changes.length > 0) stage.widened(changes);
        await stage.add(event);
      }
      results.push({ source: batch.source, stored: keep.length, duplicates: events.length - keep.length });
    }
    // every row reaches its staging table before any source takes rows: a row the engine
    // refuses fails the call while nothing is committed
    for (const stage of staged.values()) await stage.flush();
    // sources made and widened, and their schema stored, before any row moves in (see StagedSource)
    for (const stage of staged.values()) await stage.prepareTarget();
    const changed = [...staged.values()].filter((s) => s.changesSchema);
    const schema =
      changed.length === 0
        ? undefined
        : await persistSchemas(
            ctx,
            current,
            changed.map((s) => s.schema),
          );
    for (const stage of staged.values()) await stage.attach();
    return schema === undefined ? { results } : { results, schema };
  } finally {
    for (const stage of staged.values()) await stage.drop();
  }
}
