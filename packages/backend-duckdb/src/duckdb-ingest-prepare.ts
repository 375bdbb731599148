import {
  type ColumnValue,
  createRowEncoder,
  type LogEvent,
  type PreparedIngestRows,
  type RowEncoder,
  type SourceSchema,
} from "@qes/core/events";
import { CHUNK_ROWS, CHUNK_VALUES, ChunkColumns, type PreparedChunk } from "./duckdb-chunk-columns.ts";

/**
 * DuckDB's `Backend.ingestPreparer` (run in the server's ingest workers): an ingest batch's rows
 * laid out in DuckDB's vector bytes, chunk by chunk, ahead of its commit, so that the server's
 * one thread that writes to DuckDB only copies them in (`ChunkWriter.appendInCoreOrder`). Columns
 * are in core's order, which does not depend on the table's; the buffers are the chunks' own,
 * handed over without a copy. No DuckDB here: the worker does not load the engine.
 */
export interface PreparedDuckdbRows {
  chunks: PreparedChunk[];
}

/** the encoder of the last schema seen: a worker meets the same schema request after request */
let last: { fields: string; encoder: RowEncoder<ColumnValue> } | undefined;

function encoderFor(source: SourceSchema): RowEncoder<ColumnValue> {
  const fields = JSON.stringify(source.fields);
  if (last?.fields !== fields) last = { fields, encoder: createRowEncoder(source, CHUNK_VALUES) };
  return last.encoder;
}

export function prepareIngestRows(source: SourceSchema, events: readonly LogEvent[]): PreparedIngestRows {
  const encoder = encoderFor(source);
  const types = encoder.columns.map((c) => c.type);
  const inOrder = types.map((_, i) => i);
  const row = new Array<ColumnValue>(types.length);
  const chunks: PreparedChunk[] = [];
  const transfer = new Set<ArrayBuffer>();
  let at = 0;
  while (at < events.length) {
    // columns of its own per chunk: a prepared chunk is views of them (ChunkColumns reuses its buffers)
    const columns = new ChunkColumns(types, Math.min(CHUNK_ROWS, events.length - at));
    do columns.add(encoder.encode(events[at++]!, row), inOrder);
    while (at < events.length && !columns.full);
    const chunk = columns.prepare();
    chunks.push(chunk);
    for (const c of chunk.columns) {
      transfer.add(c.bytes.buffer as ArrayBuffer);
      if (c.valid !== null) transfer.add(c.valid.buffer as ArrayBuffer);
      if (c.heap !== null) transfer.add(c.heap.buffer as ArrayBuffer);
    }
  }
  const rows: PreparedDuckdbRows = { chunks };
  return { rows, transfer: [...transfer] };
}
