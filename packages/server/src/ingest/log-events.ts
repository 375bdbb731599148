import { type JsonValue, type LogEvent, logEventFromJson } from "@qes/core";

/**
 * The raw events of one request as normalised events of `source` (core's one shaping path, ids
 * derived from the content when absent); the first bad one refuses the request with 400
 * `invalid_event` naming its 0-based index.
 */
export function toLogEvents(values: readonly JsonValue[], source: string, nowMicros: bigint): LogEvent[] {
  const events: LogEvent[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    events[i] = logEventFromJson(values[i] as JsonValue, source, nowMicros, `event ${i}`);
  }
  return events;
}
