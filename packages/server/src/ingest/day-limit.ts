import { type LogEvent, QesError } from "@qes/core";

/**
 * Distinct UTC days the events of one request may fall on. PostgreSQL stores each day in its own
 * partition and one transaction locks every partition it creates or writes (with its indexes):
 * a request of 3,000 events on 3,000 days held the writer for 34 s and then failed with "out of
 * shared memory" — a 503 for a client's batch, and its partitions kept no matter what retention
 * says when the days lie in the future. A shipper's batch spans minutes, a catch-up after an
 * outage days; a year is room for any backfill sent in batches. Every backend refuses alike.
 */
export const MAX_DAYS_PER_REQUEST = 366;

const MICROS_PER_DAY = 86_400_000_000n;

/** Throws 400 `invalid_event` naming the first event whose day is one past the limit. */
export function checkDaySpread(events: readonly LogEvent[], lines?: readonly number[]): void {
  const days = new Set<bigint>();
  for (let i = 0; i < events.length; i++) {
    const t = (events[i] as LogEvent).timestamp;
    days.add((t - (((t % MICROS_PER_DAY) + MICROS_PER_DAY) % MICROS_PER_DAY)) / MICROS_PER_DAY);
    if (days.size <= MAX_DAYS_PER_REQUEST) continue;
    const line = lines?.[i];
    throw new QesError(
      "invalid_event",
      `event ${i}${line === undefined ? "" : ` (line ${line})`}: the request's events fall on more than ` +
        `${MAX_DAYS_PER_REQUEST} UTC days; send events of fewer days per request (batches in time order)`,
      line === undefined ? {} : { line },
    );
  }
}
