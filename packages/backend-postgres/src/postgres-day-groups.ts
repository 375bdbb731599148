import type { IngestBatch } from "@qes/core";
import type { PreparedCopyRows } from "./postgres-ingest-prepare.ts";
import { dayOfMicros } from "./postgres-partitions.ts";

/**
 * Days (of any source) one ingest transaction may write: as many as one request may bring
 * (the route's limit of 366 UTC days). Each day is a partition the transaction creates or locks,
 * with its indexes, in the lock table every session of the server shares: a group commit of six
 * such requests (2,196 days) ran out of it ("out of shared memory") after 20 s of work, then was
 * committed request by request; meanwhile other sessions' queries could fail alike.
 */
export const MAX_DAYS_PER_TRANSACTION = 366;

/**
 * The batches of one ingest call in runs of whole batches, in order, each run on at most `maxDays`
 * distinct (source, day) pairs; a batch on more is a run of its own. A group commit on few days,
 * the usual one, stays one run, one transaction.
 */
export function runsWithinDays(
  batches: readonly IngestBatch[],
  maxDays = MAX_DAYS_PER_TRANSACTION,
): IngestBatch[][] {
  const runs: IngestBatch[][] = [];
  let run: IngestBatch[] = [];
  let days = new Set<string>();
  for (const batch of batches) {
    const own = batchDays(batch);
    const joined = new Set(days);
    for (const day of own) joined.add(day);
    if (run.length > 0 && joined.size > maxDays) {
      runs.push(run);
      run = [];
      days = new Set(own);
    } else days = joined;
    run.push(batch);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** the (source, day) pairs a batch writes, from its rows encoded ahead when it has them (its events are then made only on use) */
function batchDays(batch: IngestBatch): Set<string> {
  const out = new Set<string>();
  const prepared = batch.prepared?.rows as PreparedCopyRows | undefined;
  if (prepared !== undefined) for (const day of prepared.days) out.add(`${day} ${batch.source}`);
  else for (const event of batch.events) out.add(`${dayOfMicros(event.timestamp)} ${batch.source}`);
  return out;
}
