import { createRequire } from "node:module";
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBDateValue,
  DuckDBTimestampValue,
  type DuckDBType,
  type DuckDBValue,
  TIMESTAMP,
  VARCHAR,
} from "@duckdb/node-api";
import {
  type ColumnType,
  type ColumnValue,
  cloneSourceSchema,
  createFlattener,
  type EventFlattener,
  iterateLinesNow,
  type LoadOptions,
  type LoadSummary,
  type LogEvent,
  type LogSchema,
  newSourceSchema,
  nowMicros,
  parseEvent,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import {
  applySchemaChanges,
  bumpSchemaVersion,
  createSource,
  quoteIdent,
  sqlString,
  writeSourceSchema,
} from "./duckdb-storage.ts";

/**
 * The native bindings under @duckdb/node-api, loaded from node-api's own location so that they are
 * the very instance whose handles its DataChunks hold.
 */
const bindings = createRequire(import.meta.resolve("@duckdb/node-api"))("@duckdb/node-bindings") as {
  data_chunk_get_vector(chunk: DuckDBDataChunk["chunk"], column: number): unknown;
  vector_assign_string_element(vector: unknown, index: number, text: string): void;
};

/** Rows per DataChunk: DuckDB's vector size. Row-by-row appending is ~30× slower (NOTES.md). */
const CHUNK_ROWS = 2048;
/** Chunks between appender flushes: one row group (122,880 rows), so buffered rows stay bounded. */
const CHUNKS_PER_FLUSH = 60;

export interface LoadOutcome {
  summary: LoadSummary;
  /** the source's schema after the load and the new schema version, when the schema changed */
  schema?: { source: SourceSchema; version: number };
}

function duckdbType(type: ColumnType): DuckDBType {
  switch (type) {
    case "INT64":
      return BIGINT;
    case "FLOAT64":
      return DOUBLE;
    case "BOOL":
    case "PRESENCE":
      return BOOLEAN;
    case "TIMESTAMP":
    case "DATETIME":
      return TIMESTAMP;
    case "DATE":
      return DATE;
    default:
      return VARCHAR;
  }
}

function toDuckdbValue(value: ColumnValue, type: ColumnType): DuckDBValue {
  if (value === null) return null;
  if (type === "TIMESTAMP" || type === "DATETIME") return new DuckDBTimestampValue(value as bigint);
  if (type === "DATE") return new DuckDBDateValue(Number(value));
  return value;
}

/**
 * Fills a VARCHAR column. `setColumnValues` costs ~0.44 µs per string (a cache per vector, then
 * one native call each); assigning through the bindings directly costs ~0.18 µs, and strings are
 * most of an event's values. NULLs still go through the vector so its validity mask is written.
 */
function writeStrings(chunk: DuckDBDataChunk, column: number, rows: ColumnValue[][], from: number): void {
  const vector = chunk.getColumnVector(column);
  const raw = bindings.data_chunk_get_vector(chunk.chunk, column);
  let nulls = false;
  for (let r = 0; r < rows.length; r++) {
    const value = rows[r]![from];
    if (value === null || value === undefined) {
      vector.setItem(r, null);
      nulls = true;
    } else bindings.vector_assign_string_element(raw, r, value as string);
  }
  if (nulls) vector.flush();
}

/**
 * Appends flattened events to one table through DataChunks. Its column order follows the table's
 * actual column order, read from the catalogue after every change.
 */
export class ChunkWriter {
  private appender: DuckDBAppender | undefined;
  private flattener!: EventFlattener;
  /** for each table column, the index into the flattener's values */
  private order: number[] = [];
  private types: DuckDBType[] = [];
  private columnTypes: ColumnType[] = [];
  private pending: LogEvent[] = [];
  private unflushed = 0;

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly table: string,
  ) {}

  async open(schema: SourceSchema): Promise<void> {
    this.flattener = createFlattener(schema);
    const reader = await this.conn.runAndReadAll(
      `SELECT column_name FROM duckdb_columns() WHERE table_name = ${sqlString(this.table)} ` +
        `AND schema_name = 'main' ORDER BY column_index`,
    );
    const position = new Map(this.flattener.columns.map((c, i) => [c.column, i]));
    this.order = reader.getRows().map(([name]) => {
      const i = position.get(name as string);
      if (i === undefined)
        throw new Error(`table ${this.table} has column ${name} that its schema does not know`);
      return i;
    });
    this.columnTypes = this.order.map((i) => this.flattener.columns[i]!.type);
    this.types = this.columnTypes.map(duckdbType);
    this.appender = await this.conn.createAppender(this.table);
  }

  add(event: LogEvent): void {
    this.pending.push(event);
    if (this.pending.length >= CHUNK_ROWS) this.writePending();
  }

  writePending(): void {
    const events = this.pending;
    if (events.length === 0) return;
    this.pending = [];
    const rows = events.map((e) => this.flattener.flatten(e));
    const chunk = DuckDBDataChunk.create(this.types, events.length);
    for (let c = 0; c < this.order.length; c++) {
      const from = this.order[c]!;
      const type = this.columnTypes[c]!;
      if (this.types[c] === VARCHAR) {
        writeStrings(chunk, c, rows, from);
        continue;
      }
      const values = new Array<DuckDBValue>(rows.length);
      for (let r = 0; r < rows.length; r++) values[r] = toDuckdbValue(rows[r]![from] ?? null, type);
      chunk.setColumnValues(c, values);
    }
    this.appender!.appendDataChunk(chunk);
    if (++this.unflushed >= CHUNKS_PER_FLUSH) {
      this.appender!.flushSync();
      this.unflushed = 0;
    }
  }

  /** Writes what is pending and closes the appender (before DDL, and at the end). */
  close(): void {
    this.writePending();
    this.appender?.flushSync();
    this.appender?.closeSync();
    this.appender = undefined;
    this.unflushed = 0;
  }
}

/**
 * Loads NDJSON lines into a source inside one transaction on `conn`: parse, widen the schema (DDL
 * as fields appear or widen), flatten and append in DataChunks. A malformed line rolls back
 * everything, including a new source's table, and rethrows QesError('invalid_event', …, {line}).
 */
export async function loadIntoDuckdb(
  conn: DuckDBConnection,
  current: LogSchema,
  sourceName: string,
  lines: AsyncIterable<string> | Iterable<string>,
  opts: LoadOptions = {},
): Promise<LoadOutcome> {
  const started = performance.now();
  const input = iterateLinesNow(lines);
  const now = opts.nowMicros ?? nowMicros();
  const existing = current.sources[sourceName];
  const schema = existing
    ? cloneSourceSchema(existing)
    : newSourceSchema(
        sourceName,
        Object.values(current.sources).map((s) => s.table),
      );
  let changed = existing === undefined;
  let events = 0;
  let bytes = 0;
  let lineNumber = 0;

  await conn.run("BEGIN TRANSACTION");
  try {
    if (!existing) await createSource(conn, schema);
    const writer = new ChunkWriter(conn, schema.table);
    await writer.open(schema);
    for await (const line of input) {
      lineNumber++;
      bytes += Buffer.byteLength(line) + 1;
      const event = parseEvent(line, lineNumber, now);
      if (event === null) continue;
      const changes = widenForEvent(schema, event.body, lineNumber, opts.checkWidening);
      if (changes.length > 0) {
        // Events before this one were flattened for the old layout: write them first.
        writer.close();
        await applySchemaChanges(conn, schema, changes);
        await writer.open(schema);
        changed = true;
      }
      writer.add(event);
      events++;
      if (events % CHUNK_ROWS === 0) opts.onProgress?.({ events, bytes });
    }
    writer.close();
    let version: number | undefined;
    if (changed) {
      await writeSourceSchema(conn, schema);
      version = await bumpSchemaVersion(conn);
    }
    await conn.run("COMMIT");
    opts.onProgress?.({ events, bytes });
    const seconds = (performance.now() - started) / 1000;
    const summary: LoadSummary = {
      source: sourceName,
      events,
      seconds,
      eventsPerSecond: seconds > 0 ? events / seconds : events,
    };
    return version === undefined ? { summary } : { summary, schema: { source: schema, version } };
  } catch (e) {
    await conn.run("ROLLBACK").catch(() => {});
    throw e;
  }
}

/** Number of rows in a source's table (used by tests and seeding decisions). */
export async function countRows(conn: DuckDBConnection, table: string): Promise<number> {
  const r = await conn.runAndReadAll(`SELECT count(*) FROM ${quoteIdent(table)}`);
  return Number(r.getRows()[0]![0]);
}
