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

/**
 * The oldest instant ingest takes into a source on a store that holds a bounded number of days
 * per source (`Backend.sourceDayLimit`), and why. Plain data: it goes to the ingest workers.
 */
export interface StoreHorizon {
  days: number;
  micros: bigint;
  /** why the store holds no more days */
  storeBound: string;
}

/** The days of the past a source takes on a store that bounds them, and why (`Backend.sourceDayLimit`). */
export interface StoreDays {
  horizonDays: number;
  reason: string;
}

/**
 * What a source takes at `now` on a store that bounds its days (`horizonDays` of the past,
 * retention/retention-day-limit.ts); undefined on a store with no bound. Not the retention: an
 * event older than its source keeps is stored, and removed by the next run, as a load's is.
 */
export function storeHorizon(now: bigint, store?: StoreDays): StoreHorizon | undefined {
  if (store === undefined) return undefined;
  const micros = retentionCutoffMicros(store.horizonDays, now);
  return micros === null ? undefined : { days: store.horizonDays, micros, storeBound: store.reason };
}

/**
 * Throws 400 `invalid_event` naming the first event dated more than a day after `now`, the first
 * older than the store holds (`horizon`), or the first whose day is one past the request's limit
 * of days.
 *
 * On PostgreSQL each day of a source is a partition that a scan without a time filter locks: an
 * ingest token spreading events over past days made 1,830 of them in five requests, past what
 * such a scan (and the other sessions of the server) could lock (postgres-source-day-limit.ts),
 * however soon retention would have dropped them, or never, kept forever.
 */
export function checkEventDays(
  events: readonly LogEvent[],
  now: bigint,
  lines?: readonly number[],
  horizon?: StoreHorizon,
): void {
  const days = new Set<bigint>();
  const latest = now + MAX_MICROS_AHEAD;
  const oldest = horizon?.micros;
  for (let i = 0; i < events.length; i++) {
    const t = (events[i] as LogEvent).timestamp;
    if (oldest !== undefined && t < oldest) {
      refuse(i, lines, tooOld(t, horizon!));
    }
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

function tooOld(t: bigint, { days, micros, storeBound }: StoreHorizon): string {
  return (
    `"timestamp" ${isoOf(t)} is older than this store takes: a source holds at most ${days} days of ` +
    `the past here, so events before ${isoOf(micros)} are refused (${storeBound})`
  );
}
