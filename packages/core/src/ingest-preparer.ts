import type { LogEvent } from "./schema/parse-event.ts";
import type { SourceSchema } from "./schema/schema-model.ts";

/**
 * The module a backend names in `Backend.ingestPreparer`, run in the server's ingest workers:
 * encodes events that `source` covers into the rows its `ingest` writes. A QesError it throws
 * refuses the request (400, naming the event).
 */
export interface IngestPreparerModule {
  prepareIngestRows(source: SourceSchema, events: readonly LogEvent[]): PreparedIngestRows;
}

/** what `prepareIngestRows` returns: the rows, and the buffers among them to hand over without a copy */
export interface PreparedIngestRows {
  rows: unknown;
  transfer?: ArrayBuffer[];
}
