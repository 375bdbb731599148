import { finished } from "node:stream/promises";
import {
  civilFromDays,
  cloneSourceSchema,
  iterateLinesNow,
  type LoadOptions,
  type LoadSummary,
  type LogEvent,
  nowMicros,
  parseEvent,
  QesError,
  type SchemaChange,
  type SourceSchema,
  widenSchema,
} from "@qes/core";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { schemaCoversEvent } from "./event-coverage.ts";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { type CopyRowEncoder, createCopyRowEncoder } from "./postgres-copy-row.ts";
import { toQesError } from "./postgres-errors.ts";
import { ident, qualified } from "./postgres-sql.ts";
import {
  applySchemaChanges,
  createSource,
  lockSourceForLoad,
  readSource,
  saveSource,
} from "./postgres-storage.ts";

/**
 * Bulk load (DESIGN.md §3, §6): NDJSON lines → core's parse / widen / flatten → COPY, all in
 * one transaction. The input is read once; schema changes are applied as they are found (ALTER
 * TABLE between COPY statements, same transaction). A malformed line, or a value PostgreSQL
 * refuses, rolls everything back.
 */

/** a load of at least this many events that also grows its table by ANALYZE_GROWTH × analyzes it */
const ANALYZE_MIN_EVENTS = 1000;
const ANALYZE_GROWTH = 0.2;
/** progress is reported every this many events, and at the end */
const PROGRESS_EVERY = 10_000;
/** COPY data is sent in chunks of about this many characters */
const CHUNK_CHARS = 1 << 18;

const MICROS_PER_DAY = 86_400_000_000n;

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

/**
 * `YYYY-MM-DD HH:MM:SS.ffffff+00` of unix microseconds. The date part is formatted once per day
 * seen (events of a load cluster in few days); the rest is integer arithmetic on numbers.
 */
class TimestampText {
  private day = Number.NaN;
  private dayText = "";

  format(micros: bigint): string {
    let days = micros / MICROS_PER_DAY;
    let within = micros % MICROS_PER_DAY;
    if (within < 0n) {
      within += MICROS_PER_DAY;
      days -= 1n;
    }
    const d = Number(days);
    if (d !== this.day) {
      const { year, month, day } = civilFromDays(d);
      if (!(year >= 1 && year <= 9999)) throw new RangeError("timestamp out of range");
      this.day = d;
      this.dayText = `${String(year).padStart(4, "0")}-${pad2(month)}-${pad2(day)} `;
    }
    const t = Number(within);
    const seconds = Math.floor(t / 1_000_000);
    const fraction = t - seconds * 1_000_000;
    return (
      this.dayText +
      pad2(Math.floor(seconds / 3600)) +
      ":" +
      pad2(Math.floor(seconds / 60) % 60) +
      ":" +
      pad2(seconds % 60) +
      "." +
      String(fraction).padStart(6, "0") +
      "+00"
    );
  }
}

/** A COPY … FROM STDIN in progress on the load's connection. */
class CopyWriter {
  private readonly stream: ReturnType<typeof copyFrom>;
  private failure: Error | null = null;

  constructor(client: pg.ClientBase, sql: string) {
    // a deep buffer lets parsing run ahead while the server consumes the previous chunks
    this.stream = client.query(copyFrom(sql, { highWaterMark: 1 << 22 }));
    this.stream.on("error", (e: Error) => {
      this.failure ??= e;
    });
  }

  async write(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        this.stream.off("error", onError);
        resolve();
      };
      const onError = (e: Error) => {
        this.stream.off("drain", onDrain);
        reject(e);
      };
      this.stream.once("drain", onDrain);
      this.stream.once("error", onError);
    });
  }

  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    this.stream.end();
    await finished(this.stream);
    if (this.failure) throw this.failure;
  }

  /** Sends CopyFail; the server aborts the statement (and with it the transaction). */
  async abort(reason: Error): Promise<void> {
    if (this.stream.destroyed) return;
    this.stream.destroy(reason);
    await finished(this.stream).catch(() => undefined);
  }
}

/** Where a COPY error points: `COPY src_x, line 12, column f3: "…"` → line 12 of that COPY. */
function copyLineOf(e: unknown): number | undefined {
  const where = (e as { where?: unknown }).where;
  const m = typeof where === "string" ? /COPY [^,]+, line (\d+)/.exec(where) : null;
  return m ? Number(m[1]) : undefined;
}

/** Events held while schema changes wait to be applied (only while a load discovers fields). */
const MAX_PENDING = 2000;

/**
 * The rows of one load call. Each event is encoded into COPY text as soon as it is parsed, so
 * its parsed form dies young (cheap to collect). An event the schema does not cover widens the
 * working model; it and the events after it wait until the changes are applied (ALTER TABLE
 * between two COPY statements, in the same transaction).
 */
class SourceLoad {
  private encoder: CopyRowEncoder;
  private copy: CopyWriter | null = null;
  private text = "";
  /** input line of each row of the current COPY, to point a refused value at its line */
  private copyLines: number[] = [];
  private readonly timestamps = new TimestampText();
  private changes: SchemaChange[] = [];
  private pending: LogEvent[] = [];
  private pendingLines: number[] = [];
  private changed = false;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly schema: string,
    /** the working model, widened in place */
    private readonly source: SourceSchema,
  ) {
    this.encoder = createCopyRowEncoder(source);
  }

  get schemaChanged(): boolean {
    return this.changed;
  }

  async add(event: LogEvent, line: number): Promise<void> {
    if (!schemaCoversEvent(this.source.fields, event.body)) {
      const changes = widenSchema(this.source, event.body);
      for (const change of changes) this.changes.push(change);
    }
    if (this.changes.length === 0) return this.encode(event, line);
    this.pending.push(event);
    this.pendingLines.push(line);
    if (this.pending.length >= MAX_PENDING) await this.applyChanges();
  }

  /** Applies pending changes and writes the events that waited for them; ends the last COPY. */
  async finish(): Promise<void> {
    await this.applyChanges();
    await this.endCopy();
  }

  private async applyChanges(): Promise<void> {
    if (this.changes.length > 0) {
      await this.endCopy();
      await applySchemaChanges(this.client, this.schema, this.source, this.changes);
      this.encoder = createCopyRowEncoder(this.source);
      this.changes = [];
      this.changed = true;
    }
    const pending = this.pending;
    const lines = this.pendingLines;
    this.pending = [];
    this.pendingLines = [];
    for (let i = 0; i < pending.length; i++) await this.encode(pending[i]!, lines[i]!);
  }

  private async encode(event: LogEvent, line: number): Promise<void> {
    if (this.copy === null) {
      const columns = this.encoder.columns.map((c) => ident(c.column)).join(", ");
      this.copy = new CopyWriter(
        this.client,
        `copy ${qualified(this.schema, this.source.table)} (${columns}) from stdin`,
      );
      this.copyLines = [];
    }
    let timestamp: string;
    try {
      timestamp = this.timestamps.format(event.timestamp);
    } catch {
      throw new QesError(
        "invalid_event",
        `line ${line}: "timestamp" is outside the years 0001–9999 that a TIMESTAMP can hold`,
        { line },
      );
    }
    this.text += this.encoder.encode(event, timestamp) + "\n";
    this.copyLines.push(line);
    if (this.text.length >= CHUNK_CHARS) await this.flushText();
  }

  private async flushText(): Promise<void> {
    if (this.copy === null || this.text === "") return;
    const text = this.text;
    this.text = "";
    try {
      await this.copy.write(text);
    } catch (e) {
      throw this.refused(e);
    }
  }

  private async endCopy(): Promise<void> {
    if (this.copy === null) return;
    await this.flushText();
    const copy = this.copy;
    this.copy = null;
    try {
      await copy.end();
    } catch (e) {
      throw this.refused(e);
    }
  }

  async abort(reason: Error): Promise<void> {
    if (this.copy !== null) await this.copy.abort(reason);
    this.copy = null;
  }

  /** A value PostgreSQL refused is the event's fault: answer invalid_event with its line. */
  private refused(e: unknown): QesError {
    const copyLine = copyLineOf(e);
    const line = copyLine === undefined ? undefined : this.copyLines[copyLine - 1];
    const state = (e as { code?: string }).code ?? "";
    if (line !== undefined && (state.startsWith("22") || state.startsWith("23"))) {
      return new QesError("invalid_event", `line ${line}: ${(e as Error).message}`, { line, cause: e });
    }
    return toQesError(e, "loading events");
  }
}

/**
 * Settings of the load's transaction: lz4 compresses the large JSON columns at several times
 * the speed of the default pglz (where the server has it); a larger sort memory builds deferred
 * indexes in one pass.
 */
async function tuneLoadTransaction(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ lz4: boolean }>(
    "select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'",
  );
  if (rows[0]?.lz4 === true) await client.query("set local default_toast_compression = 'lz4'");
  await client.query("set local maintenance_work_mem = '256MB'");
}

/** Rows of a table: 0 when it is empty, else the planner's estimate (at least 1). */
async function estimatedRows(client: pg.ClientBase, schema: string, table: string): Promise<number> {
  const { rowCount } = await client.query(`select 1 from ${qualified(schema, table)} limit 1`);
  if ((rowCount ?? 0) === 0) return 0;
  const { rows } = await client.query<{ n: number }>(
    "select greatest(reltuples, 1)::float8 as n from pg_class where oid = $1::regclass",
    [qualified(schema, table)],
  );
  return rows[0]?.n ?? 1;
}

/**
 * Into an empty table, COPY without indexes and build them at the end: one sorted build instead
 * of a million scattered insertions (about 3× faster). Dropping them locks the table until the
 * load commits, which on an empty table keeps nobody from data. Returns the statements that
 * re-create them.
 */
async function deferIndexesOfEmptyTable(
  client: pg.ClientBase,
  schema: string,
  table: string,
): Promise<string[]> {
  const { rowCount } = await client.query(`select 1 from ${qualified(schema, table)} limit 1`);
  if ((rowCount ?? 0) > 0) return [];
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    "select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = $2",
    [schema, table],
  );
  for (const row of rows) await client.query(`drop index ${qualified(schema, row.indexname)}`);
  return rows.map((r) => r.indexdef);
}

/**
 * Loads NDJSON lines into one source in one transaction (COPY). Creates the source when new;
 * widens its schema (ALTER TABLE in the same transaction); a malformed line refuses the whole
 * call with QesError('invalid_event', …, {line}) and stores nothing. Returns the source's model
 * as committed.
 */
export async function loadEvents(
  pool: pg.Pool,
  config: ResolvedPostgresConfig,
  sourceName: string,
  lines: AsyncIterable<string> | Iterable<string>,
  opts: LoadOptions = {},
): Promise<{ summary: LoadSummary; source: SourceSchema; schemaChanged: boolean }> {
  if (sourceName.trim() === "" || sourceName.length > 200) {
    throw new QesError("invalid_event", "a source name must be 1 to 200 characters");
  }
  // before the first await: a readline interface drops lines emitted before an iterator listens
  const input = iterateLinesNow(lines);
  const started = performance.now();
  const now = opts.nowMicros ?? nowMicros();
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw toQesError(e, "connecting to load events");
  }
  let load: SourceLoad | null = null;
  let broken = false;
  try {
    await client.query("begin");
    await lockSourceForLoad(client, config.schema, sourceName);
    let source = await readSource(client, config.schema, sourceName);
    let created = false;
    if (source === null) {
      await lockSourceForLoad(client, config.schema);
      source =
        (await readSource(client, config.schema, sourceName)) ??
        (await createSource(client, config, sourceName));
      created = true;
    }
    await tuneLoadTransaction(client);
    const rowsBefore = await estimatedRows(client, config.schema, source.table);
    const deferred =
      rowsBefore === 0 ? await deferIndexesOfEmptyTable(client, config.schema, source.table) : [];
    const working = cloneSourceSchema(source);
    load = new SourceLoad(client, config.schema, working);

    let lineNumber = 0;
    let events = 0;
    let bytes = 0;
    for await (const line of input) {
      lineNumber++;
      bytes += Buffer.byteLength(line) + 1;
      const event = parseEvent(line, lineNumber, now);
      if (event === null) continue;
      await load.add(event, lineNumber);
      events++;
      if (events % PROGRESS_EVERY === 0) opts.onProgress?.({ events, bytes });
    }
    await load.finish();
    for (const definition of deferred) await client.query(definition);
    // fresh statistics right away, so the first queries after a large load plan with them
    if (events >= ANALYZE_MIN_EVENTS && events >= rowsBefore * ANALYZE_GROWTH) {
      await client.query(`analyze ${qualified(config.schema, source.table)}`);
    }
    opts.onProgress?.({ events, bytes });
    if (load.schemaChanged) await saveSource(client, config.schema, working);
    await client.query("commit");
    const seconds = (performance.now() - started) / 1000;
    return {
      summary: {
        source: sourceName,
        events,
        seconds,
        eventsPerSecond: seconds > 0 ? events / seconds : events,
      },
      source: working,
      schemaChanged: load.schemaChanged || created,
    };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    try {
      await load?.abort(error);
      await client.query("rollback");
    } catch {
      broken = true;
    }
    throw toQesError(error, "loading events");
  } finally {
    client.release(broken);
  }
}
