import { type IngestBatch, logEventFromJson, parseEventJsonText } from "@qes/core";

/** the clock ingest tests shape events with: 2025-01-15T12:00:00Z */
export const INGEST_NOW = 1_736_942_400_000_000n;

/** One ingest batch of `source` from event JSON texts, shaped as the ingest route shapes them. */
export function ingestBatch(source: string, events: string[], now = INGEST_NOW): IngestBatch {
  return {
    source,
    events: events.map((text, i) => logEventFromJson(parseEventJsonText(text), source, now, `event ${i}`)),
  };
}
