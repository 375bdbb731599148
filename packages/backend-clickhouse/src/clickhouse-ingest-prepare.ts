import type { LogEvent, PreparedIngestRows, SourceSchema } from "@qes/core";
import { createRowsEncoder } from "./clickhouse-insert-rows.ts";

/**
 * ClickHouse's `Backend.ingestPreparer` (run in the server's ingest workers): an ingest batch's
 * `JSONCompactEachRow` rows, one per event (the commit still leaves out ids already stored),
 * encoded ahead of its commit for the schema the route read.
 */
let last: { fields: string; encodeOne: (event: LogEvent) => string } | undefined;

export function prepareIngestRows(source: SourceSchema, events: readonly LogEvent[]): PreparedIngestRows {
  const fields = JSON.stringify(source.fields);
  if (last?.fields !== fields) last = { fields, encodeOne: createRowsEncoder(source).encodeOne };
  const rows: string[] = new Array(events.length);
  for (let i = 0; i < events.length; i++) rows[i] = last.encodeOne(events[i]!);
  return { rows };
}
