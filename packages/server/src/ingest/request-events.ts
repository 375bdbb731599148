import type { LogEvent } from "@qes/core";
import { checkEventDays } from "./day-limit.ts";
import { toLogEvents } from "./log-events.ts";
import { type BodyFormat, parseIngestEvents } from "./parse-ingest-body.ts";

/**
 * The events of one ingest request's body as `source`'s, every check of the body applied: its
 * form, each event's shape (400 `invalid_event` naming the first bad one), at most `maxEvents`
 * (413), the days they fall on (none more than a day ahead, at most a year of days). The route
 * runs it, or an ingest worker does (ingest-workers.ts).
 */
export function requestEvents(
  body: Uint8Array,
  format: BodyFormat,
  source: string,
  nowMicros: bigint,
  maxEvents: number,
): RequestEvents {
  const parsed = parseIngestEvents(body, format, maxEvents);
  const events = toLogEvents(parsed.events, source, nowMicros, parsed.lines);
  checkEventDays(events, nowMicros, parsed.lines);
  return parsed.lines === undefined ? { events } : { events, lines: parsed.lines };
}

/** A request's events, and each one's line when its body gave one per line (NDJSON), for later refusals to name. */
export interface RequestEvents {
  events: LogEvent[];
  lines?: number[];
}
