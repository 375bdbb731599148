import { finished } from "node:stream/promises";
import {
  checkSourceName,
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
  type WideningCheck,
  widenForEvent,
} from "@qes/core";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { toQesError } from "./postgres-errors.ts";
import { BatchEncoder, type EncodedBatch } from "./postgres-load-batch.ts";
import { LoadWorkers, loadWorkerCount } from "./postgres-load-workers.ts";
import { coveredDays, ensureDailyPartitions } from "./postgres-partitions.ts";
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
/** lines per batch: the unit of encoding (here or in a worker) and of writing */
const BATCH_LINES = 2000;
/** a load's first lines are encoded on its own thread (small loads never start workers) */
const IN_THREAD_LINES = 20_000;
/** batches out at workers at once */
const MAX_INFLIGHT = 8;
/** progress is reported every this many events, and at the end */
const PROGRESS_EVERY = 10_000;
/** COPY data is sent in chunks of about this many characters */
const CHUNK_CHARS = 1 << 18;

/** A COPY … FROM STDIN in progress on the load's connection. */
export class CopyWriter {
  private readonly stream: ReturnType<typeof copyFrom>;
  private failure: Error | null = null;

  constructor(client: pg.ClientBase, sql: string) {
    // a deep buffer lets parsing run ahead while the server consumes the previous chunks
    this.stream = client.query(copyFrom(sql, { highWaterMark: 1 << 22 }));
    this.stream.on("error", (e: Error) => {
      this.failure ??= e;
    });
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.write(data)) return;
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

/**
 * The rows of one load call, written batch by batch in input order. A batch comes encoded
 * against some schema version (here or in a worker); one encoded against an older version is
 * encoded again. Events the schema does not cover widen the working model: the changes are
 * applied at once (ALTER TABLE between two COPY statements, same transaction) and those events
 * are written after them.
 */
class SourceLoad {
  private encoder: BatchEncoder;
  private copy: CopyWriter | null = null;
  private text = "";
  /** input line of each row of the current COPY, to point a refused value at its line */
  private copyLines: number[] = [];
  private changed = false;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly schema: string,
    /** the working model, widened in place */
    private readonly source: SourceSchema,
    private readonly now: bigint,
    /** told about every new version of the model */
    private readonly onWidened: (source: SourceSchema, version: number) => void,
    /** days the table has partitions for, updated as partitions are added */
    private readonly partitions: Set<number>,
    private readonly checkWidening: WideningCheck | undefined,
  ) {
    this.encoder = new BatchEncoder(source, 0);
  }

  get schemaChanged(): boolean {
    return this.changed;
  }

  get version(): number {
    return this.encoder.version;
  }

  /** Encodes a batch on this thread. */
  encodeHere(lines: string[], firstLine: number): EncodedBatch {
    return this.encoder.encode(lines, firstLine, this.now);
  }

  /** Writes a batch's rows; `encoded` may come from a worker, or be null when one failed. */
  async write(lines: string[], firstLine: number, encoded: EncodedBatch | null): Promise<number> {
    const batch =
      encoded !== null && encoded.version === this.version ? encoded : this.encodeHere(lines, firstLine);
    if (batch.error) throw new QesError("invalid_event", batch.error.message, { line: batch.error.line });
    await this.append(batch.text, batch.rowLines, batch.days);
    if (batch.uncovered.length > 0)
      await this.widen(batch.uncovered.map((i) => [lines[i]!, firstLine + i] as const));
    return batch.events;
  }

  /** Ends the last COPY. */
  async finish(): Promise<void> {
    await this.endCopy();
  }

  private async widen(uncovered: (readonly [string, number])[]): Promise<void> {
    const events: LogEvent[] = [];
    const lines: number[] = [];
    const changes: SchemaChange[] = [];
    for (const [text, line] of uncovered) {
      const event = parseEvent(text, line, this.now)!;
      for (const change of widenForEvent(this.source, event.body, line, this.checkWidening))
        changes.push(change);
      events.push(event);
      lines.push(line);
    }
    if (changes.length > 0) {
      await this.endCopy();
      await applySchemaChanges(this.client, this.schema, this.source, changes);
      this.encoder = new BatchEncoder(this.source, this.version + 1);
      this.changed = true;
      this.onWidened(this.source, this.version);
    }
    const { text, rowLines, days } = this.encoder.encodeEvents(events, lines);
    await this.append(text, rowLines, days);
  }

  private async append(text: string | Uint8Array, rowLines: number[], days: number[]): Promise<void> {
    if (text.length === 0) return;
    if (days.some((d) => !this.partitions.has(d))) {
      // a new day: its partition is attached between two COPY statements
      await this.endCopy();
      await ensureDailyPartitions(this.client, this.schema, this.source.table, days, this.partitions);
    }
    if (this.copy === null) {
      const columns = this.encoder.columns.map(ident).join(", ");
      this.copy = new CopyWriter(
        this.client,
        `copy ${qualified(this.schema, this.source.table)} (${columns}) from stdin`,
      );
      this.copyLines = [];
    }
    for (const line of rowLines) this.copyLines.push(line);
    if (typeof text !== "string") {
      await this.flushText();
      await this.writeCopy(text);
      return;
    }
    this.text += text;
    if (this.text.length >= CHUNK_CHARS) await this.flushText();
  }

  private async writeCopy(data: string | Uint8Array): Promise<void> {
    try {
      await this.copy!.write(data);
    } catch (e) {
      throw this.refused(e);
    }
  }

  private async flushText(): Promise<void> {
    if (this.copy === null || this.text === "") return;
    const text = this.text;
    this.text = "";
    await this.writeCopy(text);
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
  // a partitioned table keeps no count of its own: its partitions do
  const { rows } = await client.query<{ n: number }>(
    `select greatest(coalesce(sum(greatest(c.reltuples, 0)), 0), 1)::float8 as n
     from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = $1::regclass`,
    [qualified(schema, table)],
  );
  return rows[0]?.n ?? 1;
}

/**
 * Into an empty table (the caller checked), COPY without indexes and build them at the end: one sorted build instead
 * of a million scattered insertions (about 3× faster). Dropping them locks the table until the
 * load commits, which on an empty table keeps nobody from data. Returns the statements that
 * re-create them.
 */
async function deferIndexesOfEmptyTable(
  client: pg.ClientBase,
  schema: string,
  table: string,
): Promise<string[]> {
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    "select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = $2",
    [schema, table],
  );
  for (const row of rows) await client.query(`drop index ${qualified(schema, row.indexname)}`);
  // a partitioned index reads back as `ON ONLY`, which would not build the partitions' indexes
  return rows.map((r) => r.indexdef.replace(" ON ONLY ", " ON "));
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
  checkSourceName(sourceName);
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
  let workers: LoadWorkers | undefined;
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
    const loader = new SourceLoad(
      client,
      config.schema,
      working,
      now,
      (widened, version) => workers?.updateSchema(widened, version),
      await coveredDays(client, config.schema, source.table),
      opts.checkWidening,
    );
    load = loader;

    let events = 0;
    let bytesRead = 0;
    let bytesWritten = 0;
    let lineNumber = 0;
    let batch: string[] = [];
    let batchStart = 1;
    const inflight: { lines: string[]; firstLine: number; bytes: number; encoded: Promise<EncodedBatch> }[] =
      [];
    const written = (n: number, bytes: number) => {
      const before = events;
      events += n;
      bytesWritten += bytes;
      if (Math.floor(events / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY)) {
        opts.onProgress?.({ events, bytes: bytesWritten });
      }
    };
    const writeOldest = async () => {
      const oldest = inflight.shift()!;
      const encoded = await oldest.encoded.catch(() => null);
      written(await loader.write(oldest.lines, oldest.firstLine, encoded), oldest.bytes);
    };
    const dispatch = async () => {
      const lines = batch;
      const firstLine = batchStart;
      const bytes = bytesRead;
      batch = [];
      batchStart = lineNumber + 1;
      bytesRead = 0;
      if (workers === undefined && firstLine > IN_THREAD_LINES) {
        workers = new LoadWorkers(loadWorkerCount(), working, loader.version);
      }
      if (workers?.usable) {
        const encoded = workers.encode(lines, firstLine, now);
        // settled later in input order, or never when the load fails first
        encoded.catch(() => undefined);
        inflight.push({ lines, firstLine, bytes, encoded });
        if (inflight.length >= MAX_INFLIGHT) await writeOldest();
        return;
      }
      while (inflight.length > 0) await writeOldest();
      written(await loader.write(lines, firstLine, loader.encodeHere(lines, firstLine)), bytes);
    };
    for await (const line of input) {
      lineNumber++;
      bytesRead += Buffer.byteLength(line) + 1;
      batch.push(line);
      if (batch.length >= BATCH_LINES) await dispatch();
    }
    if (batch.length > 0) await dispatch();
    while (inflight.length > 0) await writeOldest();
    const bytes = bytesWritten;
    await load.finish();
    for (const definition of deferred) await client.query(definition);
    // fresh statistics right away, so the first queries after a large load plan with them
    if (events >= ANALYZE_MIN_EVENTS && events >= rowsBefore * ANALYZE_GROWTH) {
      await client.query(`analyze ${qualified(config.schema, source.table)}`);
    }
    opts.onProgress?.({ events, bytes });
    if (loader.schemaChanged) await saveSource(client, config.schema, working);
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
      schemaChanged: loader.schemaChanged || created,
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
    await workers?.close();
    client.release(broken);
  }
}
