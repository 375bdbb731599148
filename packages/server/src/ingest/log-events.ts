import { type JsonValue, type LogEvent, logEventFromJson, RequestEventIds } from "@qes/core";

/**
 * The raw events of one request as normalised events of `source` (core's one shaping path, ids
 * derived from the content when absent, a repeat of an event in the request numbered:
 * `RequestEventIds`); the first bad one refuses the request with 400 `invalid_event` naming its
 * 0-based index, and its line when the body gave lines (NDJSON).
 */
export function toLogEvents(
  values: readonly JsonValue[],
  source: string,
  nowMicros: bigint,
  lines?: readonly number[],
): LogEvent[] {
  const events: LogEvent[] = new Array(values.length);
  const ids = new RequestEventIds();
  for (let i = 0; i < values.length; i++) {
    const line = lines?.[i];
    const where = line === undefined ? `event ${i}` : `event ${i} (line ${line})`;
    events[i] = logEventFromJson(values[i] as JsonValue, source, nowMicros, where, line, ids);
  }
  return events;
}
