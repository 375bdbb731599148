import { type LogEvent, retentionCutoffMicros } from "@qes/core";
import { eventRefusal } from "./event-refusal.ts";

/**
 * Distinct UTC days the events of one request may fall on. PostgreSQL stores each day in its own
 * partition and one transaction locks every partition it creates or writes (with its indexes):
 * a request of 3,000 events on 3,000 days held the writer for 34 s and then failed with "out of
 * shared memory" — a 503 for a client's batch, and its partitions kept no matter what retention
 * says when the days lie in the future. A shipper's batch spans minutes, a catch-up after an
 * outage days; a year is room for any backfill sent in batches. Every backend refuses alike.
 */
export const MAX_DAYS_PER_REQUEST = 366;

/**
 * How far past the server's clock an ingested event's time may lie. Retention never reaches a
 * future day, so each one is kept for good — on PostgreSQL as a partition every later ingest
 * probes and locks: an ingest token spreading events over future days (366 a request) made 2,500
 * partitions in 16 requests, after which every ingest of that source ran out of PostgreSQL's
 * lock table. A day covers any clock skew and a local time sent as UTC (±14 h).
 */
export const MAX_MICROS_AHEAD = 86_400_000_000n;

const MICROS_PER_DAY = 86_400_000_000n;

/** The days of the past a source always takes on a store that bounds its days (`Backend.sourceDayLimit`). */
export interface StoreDays {
  horizonDays: number;
}

/**
 * `IngestBatch.boundedBefore` at `now` on a store that bounds a source's days: events before it
 * open a new day only while the source holds fewer days than the store's bound (the backend
 * checks, knowing the source's days). Not the retention: an event older than its source keeps is
 * stored, and removed by the next run, as a load's is.
 */
export function boundedBefore(now: bigint, store?: StoreDays): bigint | undefined {
  if (store === undefined) return undefined;
  return retentionCutoffMicros(store.horizonDays, now) ?? undefined;
}

/**
 * Throws 400 `invalid_event` naming the first event dated more than a day after `now`, or the
 * first whose day is one past the request's limit of days. (How many days of the past a source
 * holds is the store's to check: it knows the source's days, `IngestBatch.boundedBefore`.)
 */
export function checkEventDays(events: readonly LogEvent[], now: bigint, lines?: readonly number[]): void {
  const days = new Set<bigint>();
  const latest = now + MAX_MICROS_AHEAD;
  for (let i = 0; i < events.length; i++) {
    const t = (events[i] as LogEvent).timestamp;
    if (t > latest) {
      refuse(
        i,
        lines,
        `"timestamp" ${isoOf(t)} is more than a day after the server's clock (${isoOf(now)}); ` +
          "the sender's clock or time zone is off",
      );
    }
    days.add((t - (((t % MICROS_PER_DAY) + MICROS_PER_DAY) % MICROS_PER_DAY)) / MICROS_PER_DAY);
    if (days.size > MAX_DAYS_PER_REQUEST) {
      refuse(
        i,
        lines,
        `the request's events fall on more than ${MAX_DAYS_PER_REQUEST} UTC days; ` +
          "send events of fewer days per request (batches in time order)",
      );
    }
  }
}

function refuse(index: number, lines: readonly number[] | undefined, reason: string): never {
  throw eventRefusal(index, lines?.[index], reason);
}

/** ISO 8601 of a time in microseconds, to the millisecond (events reach year 9999 at most) */
function isoOf(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString();
}
