import {
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
} from "@duckdb/node-api";
import {
  type ColumnValue,
  cloneSourceSchema,
  createRowEncoder,
  iterateLinesNow,
  LoadIds,
  type LoadOptions,
  type LoadSummary,
  type LogEvent,
  type LogSchema,
  loadLines,
  loadSummary,
  newSourceSchema,
  nowMicros,
  type RowEncoder,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import { CHUNK_ROWS, CHUNK_VALUES, ChunkColumns, type PreparedChunk } from "./duckdb-chunk-columns.ts";
import { writePreparedChunk } from "./duckdb-chunk-write.ts";
import {
  applySchemaChanges,
  bumpSchemaVersion,
  createSource,
  duckdbType,
  quoteIdent,
  sqlString,
  writeSourceSchema,
} from "./duckdb-storage.ts";
import { eachStoredId, storedInTable } from "./duckdb-stored-ids.ts";

/** Chunks between appender flushes: one row group (122,880 rows), so buffered rows stay bounded. */
const CHUNKS_PER_FLUSH = 60;
/**
 * Events whose ids are checked together (`LoadIds`): a look-up reads the table's whole `id`
 * column (DuckDB keeps no index on it), so a load re-run over stored events reads it once per
 * this many, not once per chunk.
 */
const CHECKED_EVENTS = 5 * CHUNK_ROWS;
/** ids of a load into a non-empty source looked up in the engine before it reads them all (LoadIds) */
const PROBED_EVENTS = 4 * CHECKED_EVENTS;

export interface LoadOutcome {
  summary: LoadSummary;
  /** the source's schema after the load and the new schema version, when the schema changed */
  schema?: { source: SourceSchema; version: number };
}

/**
 * Appends flattened events to one table through DataChunks. Its column order follows the table's
 * actual column order, read from the catalogue after every change.
 */
export class ChunkWriter {
  private appender: DuckDBAppender | undefined;
  private rows!: RowEncoder<ColumnValue>;
  private row: ColumnValue[] = [];
  /** for each table column, the index into the row encoder's values */
  private order: number[] = [];
  private types: DuckDBType[] = [];
  private columns!: ChunkColumns;
  private unflushed = 0;

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly table: string,
  ) {}

  async open(schema: SourceSchema): Promise<void> {
    this.rows = createRowEncoder(schema, CHUNK_VALUES);
    this.row = new Array<ColumnValue>(this.rows.columns.length);
    const reader = await this.conn.runAndReadAll(
      `SELECT column_name FROM duckdb_columns() WHERE table_name = ${sqlString(this.table)} ` +
        `AND schema_name = 'main' ORDER BY column_index`,
    );
    const position = new Map(this.rows.columns.map((c, i) => [c.column, i]));
    this.order = reader.getRows().map(([name]) => {
      const i = position.get(name as string);
      if (i === undefined)
        throw new Error(`table ${this.table} has column ${name} that its schema does not know`);
      return i;
    });
    const columnTypes = this.order.map((i) => this.rows.columns[i]!.type);
    this.types = columnTypes.map(duckdbType);
    this.columns = new ChunkColumns(columnTypes, CHUNK_ROWS);
    this.appender = await this.conn.createAppender(this.table);
  }

  add(event: LogEvent): void {
    this.columns.add(this.rows.encode(event, this.row), this.order);
    if (this.columns.full) this.writePending();
  }

  writePending(): void {
    if (this.columns.rows === 0) return;
    this.append(this.columns.prepare());
  }

  /** Appends a chunk prepared for this table's columns (here or by a load worker). */
  append(prepared: PreparedChunk): void {
    const chunk = DuckDBDataChunk.create(this.types, prepared.rows);
    writePreparedChunk(chunk, prepared);
    this.appender!.appendDataChunk(chunk);
    if (++this.unflushed >= CHUNKS_PER_FLUSH) {
      this.appender!.flushSync();
      this.unflushed = 0;
    }
  }

  /**
   * Appends a chunk whose columns are in core's order (`createRowEncoder`'s), prepared off this
   * thread for this table's schema (`duckdb-ingest-prepare.ts`), after what is pending.
   */
  appendInCoreOrder(prepared: PreparedChunk): void {
    this.writePending();
    this.append({ rows: prepared.rows, columns: this.order.map((i) => prepared.columns[i]!) });
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
 * Loads NDJSON lines into a source inside one transaction on `conn`: parse, leave out events
 * whose id the source stores or an earlier line had (`LoadIds`), widen the schema (DDL as fields
 * appear or widen), flatten and append in DataChunks. A malformed line rolls back everything,
 * including a new source's table, and rethrows QesError('invalid_event', …, {line}).
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
  const existing = current.sources[sourceName];
  const schema = existing
    ? cloneSourceSchema(existing)
    : newSourceSchema(
        sourceName,
        Object.values(current.sources).map((s) => s.table),
      );
  let changed = existing === undefined;

  await conn.run("BEGIN TRANSACTION");
  try {
    if (!existing) await createSource(conn, schema);
    const writer = new ChunkWriter(conn, schema.table);
    await writer.open(schema);
    const ids = new LoadIds({
      storedBefore: existing ? await countRows(conn, schema.table) : 0,
      // a look-up scans the id column in the engine, cheaper than reading it out into a filter
      // (~1 s per million ids): a small load (the demo's, every few seconds) only looks its ids
      // up; a long one reads the filter after a few batches, then looks up only what it flags
      probesBeforeRead: PROBED_EVENTS,
      readIds: (add) => eachStoredId(conn, schema.table, add),
      flush: async () => {
        writer.close();
        await writer.open(schema);
      },
      stored: (asked) => storedInTable(conn, schema.table, asked),
    });
    const read = await loadLines(
      input,
      {
        source: sourceName,
        nowMicros: opts.nowMicros ?? nowMicros(),
        batch: CHECKED_EVENTS,
        progressEvery: CHUNK_ROWS,
        ids,
        onProgress: opts.onProgress,
      },
      async (events) => {
        for (const { event, line } of events) {
          const changes = widenForEvent(schema, event.body, line, opts.checkWidening);
          if (changes.length > 0) {
            // Events before this one were flattened for the old layout: write them first.
            writer.close();
            await applySchemaChanges(conn, schema, changes);
            await writer.open(schema);
            changed = true;
          }
          writer.add(event);
        }
      },
    );
    writer.close();
    let version: number | undefined;
    if (changed) {
      await writeSourceSchema(conn, schema);
      version = await bumpSchemaVersion(conn);
    }
    // committed: the caller takes the new schema, then checkpoints it (`checkpointSchemaChange`),
    // so that a checkpoint that fails leaves the process knowing what the store holds
    await conn.run("COMMIT");
    opts.onProgress?.(read);
    const summary = loadSummary(sourceName, read.events, ids.duplicates, started);
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
