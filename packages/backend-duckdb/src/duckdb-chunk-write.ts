import { createRequire } from "node:module";
import type { DuckDBDataChunk } from "@duckdb/node-api";
import { INLINE_BYTES, type PreparedChunk, TWO_32 } from "./duckdb-chunk-columns.ts";

/**
 * The native bindings under @duckdb/node-api, loaded from node-api's own location so that they are
 * the very instance whose handles its DataChunks hold.
 */
const bindings = createRequire(import.meta.resolve("@duckdb/node-api"))("@duckdb/node-bindings") as {
  data_chunk_get_vector(chunk: DuckDBDataChunk["chunk"], column: number): unknown;
  vector_assign_string_element_len(vector: unknown, index: number, bytes: Uint8Array): void;
  vector_get_data(vector: unknown, bytes: number): Uint8Array;
  vector_ensure_validity_writable(vector: unknown): void;
  copy_data_to_vector(vector: unknown, at: number, buffer: ArrayBuffer, from: number, bytes: number): void;
  copy_data_to_vector_validity(
    vector: unknown,
    at: number,
    buffer: ArrayBuffer,
    from: number,
    bytes: number,
  ): void;
};

/**
 * Fills `chunk` (created with the columns' DuckDB types and `prepared.rows` rows): one copy per
 * column, and for a VARCHAR column with long strings one native call that puts their UTF-8 in
 * the vector's heap (as row 0's value, which the copy then overwrites; the chunk owns it until it
 * is appended), whose address turns each long string's offset into its pointer.
 */
export function writePreparedChunk(chunk: DuckDBDataChunk, prepared: PreparedChunk): void {
  const rows = prepared.rows;
  for (let c = 0; c < prepared.columns.length; c++) {
    const { bytes, valid, heap } = prepared.columns[c]!;
    const vector = bindings.data_chunk_get_vector(chunk.chunk, c);
    if (heap !== null) {
      bindings.vector_assign_string_element_len(vector, 0, heap);
      const entry = bindings.vector_get_data(vector, 16);
      const view = new DataView(entry.buffer, entry.byteOffset, 16);
      const base = view.getUint32(12, true) * TWO_32 + view.getUint32(8, true);
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, rows * 4);
      for (let r = 0; r < rows; r++) {
        if (words[r * 4]! <= INLINE_BYTES) continue;
        const address = base + words[r * 4 + 2]!;
        const high = Math.floor(address / TWO_32);
        words[r * 4 + 2] = address - high * TWO_32;
        words[r * 4 + 3] = high;
      }
    }
    if (bytes.byteLength > 0)
      bindings.copy_data_to_vector(
        vector,
        0,
        bytes.buffer as ArrayBuffer,
        bytes.byteOffset,
        bytes.byteLength,
      );
    if (valid !== null) {
      bindings.vector_ensure_validity_writable(vector);
      bindings.copy_data_to_vector_validity(
        vector,
        0,
        valid.buffer as ArrayBuffer,
        valid.byteOffset,
        Math.ceil(rows / 64) * 8,
      );
    }
  }
}
