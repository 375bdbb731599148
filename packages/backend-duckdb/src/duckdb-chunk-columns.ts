import { endianness } from "node:os";
import type { ColumnEncoder, ColumnType, ColumnValue } from "@qes/core";

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

/** Rows per DataChunk: DuckDB's vector size. Row-by-row appending is ~30× slower (NOTES.md). */
export const CHUNK_ROWS = 2048;

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
export const INLINE_BYTES = 12;
/** the string units of a chunk past which it is written early (see `ChunkColumns.full`) */
const MAX_CHUNK_CHARS = 1 << 25;
export const TWO_32 = 2 ** 32;
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

/** a column's UTF-8 room past which it is let go when a chunk needs much less */
const UTF8_KEPT = 1 << 24;

/**
 * One column of a chunk in its vector's byte layout, ready to copy: views of the column's own
 * buffers, valid until the next row is added (a load worker could make them as buffers of their
 * own and hand them over without a copy; tried: docs/benchmarks.md).
 */
export interface PreparedColumn {
  /** rows × the type's width; a string longer than 12 bytes holds its offset in `heap` as pointer */
  bytes: Uint8Array;
  /** validity words (bit set = valid), or null when every row is valid */
  valid: Uint32Array | null;
  /** the UTF-8 of a VARCHAR column's strings, or null when every string is inline */
  heap: Uint8Array | null;
}

export interface PreparedChunk {
  rows: number;
  columns: PreparedColumn[];
}

class Column {
  bytes!: Uint8Array;
  words!: Uint32Array;
  doubles!: Float64Array;
  int64s!: BigInt64Array;
  /** validity: one bit per row, set = valid, in 64-bit words as DuckDB keeps them */
  valid!: Uint32Array;
  nulls = false;
  /** a VARCHAR column's strings by row ("" for NULL) */
  readonly texts: string[] = [];
  /** the UTF-8 of a VARCHAR column's strings, grown as needed */
  private utf8: Buffer = Buffer.alloc(0);

  constructor(
    readonly layout: Layout,
    capacity: number,
  ) {
    const buffer = new ArrayBuffer(capacity * WIDTH[this.layout] + 8);
    this.bytes = new Uint8Array(buffer);
    this.words = new Uint32Array(buffer, 0, buffer.byteLength >> 2);
    this.doubles = new Float64Array(buffer, 0, buffer.byteLength >> 3);
    this.int64s = new BigInt64Array(buffer, 0, buffer.byteLength >> 3);
    this.valid = new Uint32Array(Math.ceil(capacity / 64) * 2).fill(0xffffffff);
  }

  /** empties the column for the next chunk, once the last prepared one was written */
  reset(rows: number): void {
    this.bytes.fill(0, 0, rows * WIDTH[this.layout]);
    this.valid.fill(0xffffffff);
    this.nulls = false;
    this.texts.length = 0;
  }

  private utf8Room(bytes: number): Buffer {
    if (this.utf8.length < bytes || (this.utf8.length > UTF8_KEPT && bytes < UTF8_KEPT >> 4))
      this.utf8 = Buffer.allocUnsafe(Math.max(bytes, 1 << 16));
    return this.utf8;
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

  /** sets a row's value; returns its length in UTF-16 units for a string, else 0 */
  set(row: number, value: ColumnValue): number {
    switch (this.layout) {
      case "varchar":
        if (typeof value !== "string") throw unfit(value, "a string");
        this.texts[row] = value;
        return value.length;
      case "int64":
        if (typeof value === "number" && Number.isSafeInteger(value)) {
          // two 32-bit halves: no BigInt made
          const high = Math.floor(value / TWO_32);
          this.words[row * 2] = value - high * TWO_32;
          this.words[row * 2 + 1] = high | 0;
        } else this.int64s[row] = int64Of(value);
        return 0;
      case "double":
        if (typeof value !== "number") throw unfit(value, "a number");
        this.doubles[row] = value;
        return 0;
      case "bool":
        this.bytes[row] = value ? 1 : 0;
        return 0;
      case "none":
        throw new Error(`a value for a column DuckDB's chunk writer does not fill: ${String(value)}`);
    }
  }

  /** The column's `rows` rows as a prepared column (views of its buffers: see PreparedColumn). */
  prepare(rows: number): PreparedColumn {
    const heap = this.layout === "varchar" ? this.encodeStrings(rows) : null;
    if (this.layout === "none") this.valid.fill(0);
    return {
      bytes: this.bytes.subarray(0, rows * WIDTH[this.layout]),
      valid: this.nulls || this.layout === "none" ? this.valid : null,
      heap,
    };
  }

  /**
   * Writes the column's `duckdb_string_t`s into `bytes`: a string of up to 12 bytes inline; a
   * longer one with its first 4 bytes and, as its pointer, its offset in the returned UTF-8 of
   * all the column's strings, which `writePreparedChunk` puts in the vector's heap with one
   * native call (one call per string was most of a load's time) and turns offsets into addresses.
   * UTF-8 as Node writes it, the same bytes the bindings' own conversion gives: lone surrogates
   * become U+FFFD, NUL stays.
   */
  private encodeStrings(rows: number): Uint8Array | null {
    const texts = this.texts;
    const joined = texts.join("");
    // room for the UTF-8 of every string on its own: at most 3 bytes per UTF-16 unit, measured
    // exactly for a large column (a lone surrogate joined to its neighbour's half takes 2 more)
    const out = this.utf8Room(
      joined.length < 1 << 22 ? joined.length * 3 : Buffer.byteLength(joined) + 2 * rows,
    );
    let total = out.write(joined, 0, "utf8");
    const bytes = this.bytes;
    const words = this.words;
    let long = false;
    const ascii = total === joined.length;
    // ASCII (each other UTF-16 unit takes 2 or more bytes): the bytes of row r are its characters.
    // Otherwise each string on its own: joined, two halves of a surrogate pair would make one.
    if (!ascii) total = 0;
    let start = 0;
    for (let r = 0; r < rows; r++) {
      let length: number;
      if (ascii) length = texts[r]!.length;
      else {
        start = total;
        length = out.write(texts[r]!, total, "utf8");
        total += length;
      }
      const at = r * 16;
      words[r * 4] = length;
      if (length <= INLINE_BYTES) {
        for (let i = 0; i < length; i++) bytes[at + 4 + i] = out[start + i]!;
      } else {
        for (let i = 0; i < 4; i++) bytes[at + 4 + i] = out[start + i]!;
        words[r * 4 + 2] = start;
        long = true;
      }
      if (ascii) start += length;
    }
    return long ? out.subarray(0, total) : null;
  }
}

/**
 * The values of up to one chunk of rows, column by column, in the byte layout of DuckDB's vectors
 * (`prepare`, on any thread), so that a chunk is filled with one copy per column
 * (`writePreparedChunk`) and no JavaScript object per value (`setColumnValues` takes a BigInt per
 * BIGINT and a DuckDBTimestampValue per TIMESTAMP, and caches every value before it copies).
 */
export class ChunkColumns {
  private readonly columns: Column[];
  rows = 0;
  /** the UTF-16 units of the rows' strings */
  private chars = 0;
  /** rows of the last prepared chunk, which the next row's adding clears first */
  private prepared = 0;

  constructor(
    types: readonly ColumnType[],
    readonly capacity: number,
  ) {
    this.columns = types.map((t) => new Column(layoutOf(t), capacity));
  }

  /**
   * True when the chunk should be written now: `capacity` rows, or strings long enough that
   * joining a column's would near V8's longest string (~2^29 units) or its UTF-8 need a buffer of
   * hundreds of MB (a chunk of 2,048 edge events holds ~6M).
   */
  get full(): boolean {
    return this.rows >= this.capacity || this.chars >= MAX_CHUNK_CHARS;
  }

  /**
   * Adds one row: `values[order[c]]` is column c's value (core's row, in core's column order;
   * the table's order may differ).
   */
  add(values: readonly ColumnValue[], order: readonly number[]): void {
    if (this.prepared > 0) {
      for (const column of this.columns) column.reset(this.prepared);
      this.prepared = 0;
    }
    const row = this.rows;
    let chars = 0;
    try {
      for (let c = 0; c < this.columns.length; c++) {
        const value = values[order[c]!];
        if (value === null || value === undefined) this.columns[c]!.setNull(row);
        else chars += this.columns[c]!.set(row, value);
      }
    } catch (e) {
      // a value the column cannot hold: the row is not added, and the next one starts clean
      for (const column of this.columns) column.clear(row);
      throw e;
    }
    this.rows++;
    this.chars += chars;
  }

  /**
   * The rows added so far, prepared for `writePreparedChunk`: views of these buffers, to write
   * before the next row is added (which empties them).
   */
  prepare(): PreparedChunk {
    const rows = this.rows;
    this.rows = 0;
    this.chars = 0;
    this.prepared = rows;
    return { rows, columns: this.columns.map((c) => c.prepare(rows)) };
  }
}

/**
 * The rows at `rows` (ascending indexes) of a prepared chunk, as a chunk of their own: each
 * column's entries moved up, validity bits with them. A long string's entry keeps its offset into
 * the column's heap, which stays whole (the rows left out only leave unused bytes in it).
 */
export function selectRows(chunk: PreparedChunk, rows: readonly number[]): PreparedChunk {
  return { rows: rows.length, columns: chunk.columns.map((c) => selectColumnRows(c, chunk.rows, rows)) };
}

function selectColumnRows(column: PreparedColumn, total: number, rows: readonly number[]): PreparedColumn {
  const width = column.bytes.length / total;
  const bytes = new Uint8Array(rows.length * width);
  for (let i = 0; i < rows.length; i++)
    bytes.set(column.bytes.subarray(rows[i]! * width, (rows[i]! + 1) * width), i * width);
  const from = column.valid;
  if (from === null) return { bytes, valid: null, heap: column.heap };
  const valid = new Uint32Array(Math.ceil(rows.length / 64) * 2).fill(0xffffffff);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if ((from[r >>> 5]! & (1 << (r & 31))) === 0) valid[i >>> 5]! &= ~(1 << (i & 31));
  }
  return { bytes, valid, heap: column.heap };
}
