import { createRequire } from "node:module";
import { endianness } from "node:os";
import type { DuckDBDataChunk } from "@duckdb/node-api";
import type { ColumnEncoder, ColumnType, ColumnValue } from "@qes/core";

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

if (endianness() !== "LE") throw new Error("the DuckDB chunk writer assumes a little-endian machine");

/**
 * Core's values as they are, for `ChunkColumns.set`: INT64 stays the `number` JSON.parse read
 * (a `bigint` only beyond 2^53), so no BigInt is made per value as `COLUMN_VALUES` does.
 */
export const CHUNK_VALUES: ColumnEncoder<ColumnValue> = {
  null: null,
  text: (value) => value,
  json: (value) => value,
  int64: (value) => value,
  float64: (value) => value,
  bool: (value) => value,
  timestamp: (micros) => micros,
};

/** how a column's values are laid out in its DuckDB vector */
type Layout = "varchar" | "int64" | "double" | "bool" | "none";

function layoutOf(type: ColumnType): Layout {
  switch (type) {
    case "STRING":
    case "JSON":
      return "varchar";
    case "INT64":
    case "TIMESTAMP":
    case "DATETIME":
      return "int64";
    case "FLOAT64":
      return "double";
    case "BOOL":
    case "PRESENCE":
      return "bool";
    // core's row encoder gives these no value (only the fixed timestamp column is a TIMESTAMP)
    case "DATE":
      return "none";
  }
}

/** bytes per value in a vector: `duckdb_string_t` is 16 (length, then 12 inlined bytes or a prefix and pointer) */
const WIDTH: Record<Layout, number> = { varchar: 16, int64: 8, double: 8, bool: 1, none: 0 };
/** the longest string `duckdb_string_t` holds inline; longer ones live in the vector's heap */
const INLINE_BYTES = 12;
const TWO_32 = 2 ** 32;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function unfit(value: ColumnValue, expected: string): TypeError {
  return new TypeError(`cannot append ${typeof value} ${String(value)} where DuckDB expects ${expected}`);
}

/** a BIGINT or TIMESTAMP value, refused where a BigInt64Array would silently wrap it */
function int64Of(value: ColumnValue): bigint {
  const n = typeof value === "number" && Number.isInteger(value) ? BigInt(value) : value;
  if (typeof n !== "bigint") throw unfit(value, "an integer");
  if (n < INT64_MIN || n > INT64_MAX) throw new RangeError(`${n} is beyond a 64-bit integer`);
  return n;
}

/** UTF-8 of a column's strings, grown as needed; one per process (chunks are written one at a time) */
let utf8 = Buffer.allocUnsafe(1 << 20);

function utf8Room(bytes: number): Buffer {
  if (utf8.length < bytes) utf8 = Buffer.allocUnsafe(Math.max(bytes, utf8.length * 2));
  return utf8;
}

class Column {
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  readonly doubles: Float64Array;
  readonly int64s: BigInt64Array;
  /** validity: one bit per row, set = valid, in 64-bit words as DuckDB keeps them */
  readonly valid: Uint32Array;
  nulls = false;
  /** a VARCHAR column's strings by row ("" for NULL) */
  readonly texts: string[] = [];
  /** where each row's UTF-8 starts in `utf8`, and its length */
  private readonly starts: Uint32Array;
  private readonly lengths: Uint32Array;

  constructor(
    readonly layout: Layout,
    rows: number,
  ) {
    const buffer = new ArrayBuffer(rows * WIDTH[layout] + 8);
    this.bytes = new Uint8Array(buffer);
    this.words = new Uint32Array(buffer, 0, buffer.byteLength >> 2);
    this.doubles = new Float64Array(buffer, 0, buffer.byteLength >> 3);
    this.int64s = new BigInt64Array(buffer, 0, buffer.byteLength >> 3);
    this.valid = new Uint32Array(Math.ceil(rows / 64) * 2).fill(0xffffffff);
    const strings = layout === "varchar" ? rows : 0;
    this.starts = new Uint32Array(strings);
    this.lengths = new Uint32Array(strings);
  }

  reset(rows: number): void {
    this.bytes.fill(0, 0, rows * WIDTH[this.layout]);
    this.valid.fill(0xffffffff);
    this.nulls = false;
    this.texts.length = 0;
  }

  /** forgets what a row that was not added left (its NULL marks; values are overwritten) */
  clear(row: number): void {
    this.valid[row >>> 5]! |= 1 << (row & 31);
    if (this.layout === "varchar") this.texts.length = row;
  }

  setNull(row: number): void {
    this.valid[row >>> 5]! &= ~(1 << (row & 31));
    this.nulls = true;
    if (this.layout === "varchar") this.texts[row] = "";
  }

  set(row: number, value: ColumnValue): void {
    switch (this.layout) {
      case "varchar":
        if (typeof value !== "string") throw unfit(value, "a string");
        this.texts[row] = value;
        return;
      case "int64":
        if (typeof value === "number" && Number.isSafeInteger(value)) {
          // two 32-bit halves: no BigInt made
          const high = Math.floor(value / TWO_32);
          this.words[row * 2] = value - high * TWO_32;
          this.words[row * 2 + 1] = high | 0;
        } else this.int64s[row] = int64Of(value);
        return;
      case "double":
        if (typeof value !== "number") throw unfit(value, "a number");
        this.doubles[row] = value;
        return;
      case "bool":
        this.bytes[row] = value ? 1 : 0;
        return;
      case "none":
        throw new Error(`a value for a column DuckDB's chunk writer does not fill: ${String(value)}`);
    }
  }

  writeTo(vector: unknown, rows: number): void {
    if (this.layout === "varchar") this.writeStrings(vector, rows);
    const width = WIDTH[this.layout];
    if (width > 0) bindings.copy_data_to_vector(vector, 0, this.bytes.buffer as ArrayBuffer, 0, rows * width);
    if (this.nulls || this.layout === "none") {
      if (this.layout === "none") this.valid.fill(0);
      bindings.vector_ensure_validity_writable(vector);
      bindings.copy_data_to_vector_validity(
        vector,
        0,
        this.valid.buffer as ArrayBuffer,
        0,
        Math.ceil(rows / 64) * 8,
      );
    }
  }

  /**
   * Writes the column's `duckdb_string_t`s into `bytes`: a string of up to 12 bytes inline; the
   * longer ones point into one heap string of the vector that holds all the column's UTF-8, put
   * there by one native call (instead of one call per string, which was most of a load's time).
   * UTF-8 as Node writes it, the same bytes the bindings' own conversion gives: lone surrogates
   * become U+FFFD, NUL stays.
   */
  private writeStrings(vector: unknown, rows: number): void {
    const texts = this.texts;
    const joined = texts.join("");
    const out = utf8Room(joined.length * 3);
    const { starts, lengths } = this;
    let total = out.write(joined, 0, "utf8");
    if (total === joined.length) {
      // ASCII (each other UTF-16 unit takes 2 or more bytes): the bytes of row r are its characters
      let at = 0;
      for (let r = 0; r < rows; r++) {
        starts[r] = at;
        at += lengths[r] = texts[r]!.length;
      }
    } else {
      // each string on its own: joined, two halves of a surrogate pair would make one character
      total = 0;
      for (let r = 0; r < rows; r++) {
        starts[r] = total;
        total += lengths[r] = out.write(texts[r]!, total, "utf8");
      }
    }
    let heap = -1;
    const bytes = this.bytes;
    const words = this.words;
    for (let r = 0; r < rows; r++) {
      const length = lengths[r]!;
      const start = starts[r]!;
      const at = r * 16;
      words[r * 4] = length;
      if (length <= INLINE_BYTES) {
        for (let i = 0; i < length; i++) bytes[at + 4 + i] = out[start + i]!;
        continue;
      }
      if (heap < 0) heap = this.heapOf(vector, out, total);
      for (let i = 0; i < 4; i++) bytes[at + 4 + i] = out[start + i]!;
      const address = heap + start;
      const high = Math.floor(address / TWO_32);
      words[r * 4 + 2] = address - high * TWO_32;
      words[r * 4 + 3] = high;
    }
  }

  /**
   * Copies `out[0, total)` into the vector's string heap (as row 0's value, which the column's
   * own bytes then overwrite) and returns its address: the chunk owns it until it is appended.
   */
  private heapOf(vector: unknown, out: Buffer, total: number): number {
    bindings.vector_assign_string_element_len(vector, 0, out.subarray(0, total));
    const entry = bindings.vector_get_data(vector, 16);
    const view = new DataView(entry.buffer, entry.byteOffset, 16);
    return view.getUint32(12, true) * TWO_32 + view.getUint32(8, true);
  }
}

/**
 * The values of up to one chunk of rows, column by column, in the byte layout of DuckDB's vectors:
 * a chunk is then filled with one copy per column, plus one native call per string that does not
 * fit inline (longer than 12 bytes, or not ASCII) instead of one per string, and no JavaScript
 * object per value (`setColumnValues` takes a BigInt per BIGINT and a DuckDBTimestampValue per
 * TIMESTAMP, and caches every value before it copies).
 */
export class ChunkColumns {
  private readonly columns: Column[];
  rows = 0;

  constructor(
    types: readonly ColumnType[],
    readonly capacity: number,
  ) {
    this.columns = types.map((t) => new Column(layoutOf(t), capacity));
  }

  /**
   * Adds one row: `values[order[c]]` is column c's value (core's row, in core's column order;
   * the table's order may differ).
   */
  add(values: readonly ColumnValue[], order: readonly number[]): void {
    const row = this.rows;
    try {
      for (let c = 0; c < this.columns.length; c++) {
        const value = values[order[c]!];
        if (value === null || value === undefined) this.columns[c]!.setNull(row);
        else this.columns[c]!.set(row, value);
      }
    } catch (e) {
      // a value the column cannot hold: the row is not added, and the next one starts clean
      for (const column of this.columns) column.clear(row);
      throw e;
    }
    this.rows++;
  }

  /** Fills `chunk` (created with the columns' DuckDB types and `rows` rows) and empties these buffers. */
  writeTo(chunk: DuckDBDataChunk): void {
    for (let c = 0; c < this.columns.length; c++) {
      this.columns[c]!.writeTo(bindings.data_chunk_get_vector(chunk.chunk, c), this.rows);
      this.columns[c]!.reset(this.rows);
    }
    this.rows = 0;
  }
}
