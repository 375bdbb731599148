import {
  type LogEvent,
  QesError,
  type RetentionPolicy,
  retentionCutoffMicros,
  retentionDaysOf,
} from "@qes/core";

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
 * The oldest instant ingest takes into a source: what its retention keeps (`QES_RETENTION_DAYS`),
 * or on a store that holds fewer days per source (`Backend.sourceDayLimit`), what the store holds.
 * Plain data: it goes to the ingest workers.
 */
export interface RetainedFrom {
  days: number;
  micros: bigint;
  /** set when the store's bound, not the retention, sets `days`: why the store holds no more */
  storeBound?: string;
}

/**
 * What `source` takes at `now`: the later of its retention's cutoff and, when the store bounds a
 * source's days (`horizonDays`, retention/retention-day-limit.ts), that bound's. Undefined when
 * it keeps events forever on a store with no bound.
 */
export function retainedFrom(
  policy: RetentionPolicy,
  source: string,
  now: bigint,
  store?: { horizonDays: number; reason: string },
): RetainedFrom | undefined {
  const days = retentionDaysOf(policy, source);
  const micros = retentionCutoffMicros(days, now);
  const held = store === undefined ? null : retentionCutoffMicros(store.horizonDays, now);
  if (held !== null && (micros === null || held > micros)) {
    return { days: store!.horizonDays, micros: held, storeBound: store!.reason };
  }
  return micros === null ? undefined : { days, micros };
}

/**
 * Throws 400 `invalid_event` naming the first event dated more than a day after `now`, the first
 * older than its source's retention keeps (`retained`), or the first whose day is one past the
 * request's limit of days.
 *
 * An event older than the retention would go at the next hourly run, so storing it keeps nothing
 * the operator asked for; meanwhile its day is a partition on PostgreSQL, and an ingest token
 * spreading events over past days made 1,830 of them in five requests, past what a scan of the
 * source can lock (postgres-source-day-limit.ts). Refused with the retention named, a source holds
 * at most the days its retention keeps, which start-up bounds (retention/retention-day-limit.ts).
 */
export function checkEventDays(
  events: readonly LogEvent[],
  now: bigint,
  lines?: readonly number[],
  retained?: RetainedFrom,
): void {
  const days = new Set<bigint>();
  const latest = now + MAX_MICROS_AHEAD;
  const oldest = retained?.micros;
  for (let i = 0; i < events.length; i++) {
    const t = (events[i] as LogEvent).timestamp;
    if (oldest !== undefined && t < oldest) {
      refuse(i, lines, tooOld(t, retained!));
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
  const line = lines?.[index];
  throw new QesError(
    "invalid_event",
    `event ${index}${line === undefined ? "" : ` (line ${line})`}: ${reason}`,
    line === undefined ? {} : { line },
  );
}

/** ISO 8601 of a time in microseconds, to the millisecond (events reach year 9999 at most) */
function isoOf(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString();
}

function tooOld(t: bigint, retained: RetainedFrom): string {
  const { days, micros, storeBound } = retained;
  if (storeBound !== undefined) {
    return (
      `"timestamp" ${isoOf(t)} is older than this store takes: a source holds at most ${days} days of ` +
      `the past here, so events before ${isoOf(micros)} are refused (${storeBound})`
    );
  }
  return (
    `"timestamp" ${isoOf(t)} is older than the source keeps events: its retention is ${days} days ` +
    `(QES_RETENTION_DAYS), so events before ${isoOf(micros)} are removed; send newer events, or raise its retention`
  );
}
