import { type LogEvent, type PreparedIngestRows, QesError, type SourceSchema } from "@qes/core/events";
import { type CopyRowEncoder, createCopyRowEncoder } from "./postgres-copy-row.ts";

/**
 * PostgreSQL's `Backend.ingestPreparer` (run in the server's ingest workers): an ingest batch's
 * COPY rows, encoded ahead of its commit. Each event keeps a row of its own, with its UTC day and
 * time, because the commit still leaves out ids already stored and sorts each day's rows of the
 * whole group (postgres-day-rows.ts); what it no longer does on its thread is the encoding.
 */
export interface PreparedCopyRows {
  /** each event's COPY row, without its newline */
  texts: string[];
  /** each event's UTC day since the epoch */
  days: Int32Array;
  /** each event's time in unix microseconds */
  micros: BigInt64Array;
}

/** the encoder of the last schema seen: a worker meets the same schema request after request */
let last: { fields: string; encoder: CopyRowEncoder } | undefined;

function encoderFor(source: SourceSchema): CopyRowEncoder {
  const fields = JSON.stringify(source.fields);
  if (last?.fields !== fields) last = { fields, encoder: createCopyRowEncoder(source) };
  return last.encoder;
}

export function prepareIngestRows(source: SourceSchema, events: readonly LogEvent[]): PreparedIngestRows {
  return encodePrepared(encoderFor(source), events);
}

/** the rows of events `encoder`'s schema covers; an instant outside 0001–9999 refuses the batch as the commit would */
export function encodePrepared(encoder: CopyRowEncoder, events: readonly LogEvent[]): PreparedIngestRows {
  const texts: string[] = new Array(events.length);
  const days = new Int32Array(events.length);
  const micros = new BigInt64Array(events.length);
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (encoder.timestamps.format(event.timestamp) === null)
      throw new QesError("invalid_event", `event ${event.id}: "timestamp" is out of range`);
    days[i] = encoder.timestamps.day;
    micros[i] = event.timestamp;
    texts[i] = encoder.encode(event);
  }
  const rows: PreparedCopyRows = { texts, days, micros };
  return { rows, transfer: [days.buffer as ArrayBuffer, micros.buffer as ArrayBuffer] };
}
