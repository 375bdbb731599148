import {
  checkSourceName,
  cloneSourceSchema,
  FIXED_COLUMNS,
  iterateLinesNow,
  LoadIds,
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
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import type { DayRows } from "./postgres-day-rows.ts";
import { toQesError } from "./postgres-errors.ts";
import { BatchEncoder, type EncodedBatch } from "./postgres-load-batch.ts";
import { LoadWorkers, loadWorkerCount } from "./postgres-load-workers.ts";
import { copyIntoPartition } from "./postgres-partition-copy.ts";
import {
  type DayPartitions,
  ensureDailyPartitions,
  indexNames,
  lockForWriting,
  partitionsByDay,
} from "./postgres-partitions.ts";
import { qualified } from "./postgres-sql.ts";
import { changesCounted } from "./postgres-statistics.ts";
import {
  applySchemaChanges,
  createSource,
  lockSourceForLoad,
  readSource,
  saveSource,
} from "./postgres-storage.ts";
import { eachStoredId } from "./postgres-stored-ids.ts";
import { replaceWriteToken } from "./postgres-write-token.ts";

/**
 * Bulk load (DESIGN.md §3, §6): NDJSON lines → core's parse / widen / flatten → COPY, all in
 * one transaction. The input is read once; schema changes are applied as they are found (ALTER
 * TABLE between COPY statements, same transaction). A malformed line, or a value PostgreSQL
 * refuses, rolls everything back.
 */

/** a load of at least this many events that also grows its table by ANALYZE_GROWTH × analyzes it */
const ANALYZE_MIN_EVENTS = 1000;
const ANALYZE_GROWTH = 0.2;
/**
 * What a load analyzes: the columns every source has and every query filters, groups or orders
 * by (the time-bucket statistics are built from `timestamp`), so the first queries after a large
 * load plan with them. ANALYZE of a partitioned table in PostgreSQL 15 samples the parent and
 * then each day's partition again, every column each time: 5.6 s of a 13.6 s load of 100,000
 * edge events (55 columns, 8 days) on an idle machine, against ~1 s for these four
 * (docs/benchmarks.md). A column list leaves the partitions' count of changes since their last
 * ANALYZE as it was, so the partitions are analyzed whole soon after, off the load's path: by
 * autovacuum, or where it is off by the server's statistics pass (postgres-statistics.ts, every
 * minute). The parent's statistics of the other columns (only GROUP BY estimates over the whole
 * table read them) wait for a later full ANALYZE, as autovacuum never analyzes a parent. Only
 * where the server counts no changes (`track_counts` off) would nothing follow: then the load
 * analyzes everything.
 */
const ANALYZED_COLUMNS = Object.keys(FIXED_COLUMNS)
  .map((c) => `"${c}"`)
  .join(", ");

/** the columns list of a load's ANALYZE: empty (all of them) when nothing could follow it */
async function analyzedColumns(client: pg.ClientBase): Promise<string> {
  return (await changesCounted(client)) ? ` (${ANALYZED_COLUMNS})` : "";
}

/** ids a load looks up in the id indexes, at least, before it reads every id of its source instead */
const PROBES_BEFORE_READ = 20_000;
/** lines per batch: the unit of encoding (here or in a worker) and of writing */
const BATCH_LINES = 2000;
/** a load's first lines are encoded on its own thread (small loads never start workers) */
const IN_THREAD_LINES = 20_000;
/** batches out at workers at once */
const MAX_INFLIGHT = 8;
/** progress is reported every this many events, and at the end */
const PROGRESS_EVERY = 10_000;
/** a day's waiting rows are COPYed into its partition once they hold this many characters */
const DAY_COPY_CHARS = 1 << 22;
/** all days' waiting rows are COPYed once they hold this many characters together */
const PENDING_CHARS = 1 << 25;

/** Where a COPY error points: `COPY src_x, line 12, column f3: "…"` → line 12 of that COPY. */
function copyLineOf(e: unknown): number | undefined {
  const where = (e as { where?: unknown }).where;
  const m = typeof where === "string" ? /COPY [^,]+, line (\d+)/.exec(where) : null;
  return m ? Number(m[1]) : undefined;
}

/** Rows of one day waiting for their COPY: chunks of COPY text and the input line of each row. */
interface PendingDay {
  chunks: (string | Uint8Array)[];
  length: number;
  rowLines: number[];
}

/**
 * The rows of one load call. A batch comes encoded against some schema version (here or in a
 * worker); one encoded against an older version is encoded again. Its rows wait by day and go
 * straight into their day's partition, one COPY per day once a day holds DAY_COPY_CHARS (or all
 * days hold PENDING_CHARS together, or the load ends). Events the schema does not cover widen the
 * working model: the waiting rows are written, the changes applied (ALTER TABLE, same
 * transaction), and those events are written after them.
 */
class SourceLoad {
  private encoder: BatchEncoder;
  private readonly pending = new Map<number, PendingDay>();
  private pendingLength = 0;
  /** input line of each row of the COPY under way, to point a refused value at its line */
  private copyLines: number[] = [];
  private changed = false;
  /** which events to leave out: their id is stored, or came earlier in the load */
  private ids: LoadIds | undefined;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly schema: string,
    /** the working model, widened in place */
    private readonly source: SourceSchema,
    private readonly now: bigint,
    /** told about every new version of the model */
    private readonly onWidened: (source: SourceSchema, version: number) => void,
    /** the table's partitions by day, updated as partitions are added */
    private readonly partitions: DayPartitions,
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

  get duplicates(): number {
    return this.ids?.duplicates ?? 0;
  }

  /** Leaves out events whose id the table stores (and `stored` finds) or an earlier line had. */
  checkIds(storedBefore: number, stored: (ids: string[]) => Promise<Set<string>>): void {
    this.ids = new LoadIds({
      storedBefore,
      // a look-up probes every day's id index; reading every id costs about 1/50 of that per id
      probesBeforeRead: Math.max(PROBES_BEFORE_READ, storedBefore / 50),
      readIds: (add) => eachStoredId(this.client, this.schema, this.source.table, add),
      flush: () => this.copyAll(),
      stored,
    });
  }

  /** Encodes a batch on this thread. */
  encodeHere(lines: string[], firstLine: number): EncodedBatch {
    return this.encoder.encode(lines, firstLine, this.now);
  }

  /** Writes a batch's rows; `encoded` may come from a worker, or be null when one failed. */
  async write(lines: string[], firstLine: number, encoded: EncodedBatch | null): Promise<number> {
    let batch =
      encoded !== null && encoded.version === this.version ? encoded : this.encodeHere(lines, firstLine);
    if (batch.error) throw new QesError("invalid_event", batch.error.message, { line: batch.error.line });
    const keep = await this.ids?.keep(batch.ids);
    if (keep !== undefined) {
      // rare (ids stored already): the batch is encoded again here without them, unless that is
      // all of it (a file loaded again)
      const skip = new Set(batch.at.filter((_, k) => !keep[k]));
      if (skip.size === batch.at.length) batch = { ...batch, days: [], uncovered: [] };
      else if (skip.size > 0) batch = this.encoder.encode(lines, firstLine, this.now, skip);
    }
    await this.append(batch.days);
    if (batch.uncovered.length > 0)
      await this.widen(batch.uncovered.map((i) => [lines[i]!, firstLine + i] as const));
    return batch.events;
  }

  /** Writes the rows still waiting. */
  async finish(): Promise<void> {
    await this.copyAll();
  }

  private async widen(uncovered: (readonly [string, number])[]): Promise<void> {
    const events: LogEvent[] = [];
    const lines: number[] = [];
    const changes: SchemaChange[] = [];
    for (const [text, line] of uncovered) {
      const event = parseEvent(text, line, this.now, this.source.name)!;
      for (const change of widenForEvent(this.source, event.body, line, this.checkWidening))
        changes.push(change);
      events.push(event);
      lines.push(line);
    }
    if (changes.length > 0) {
      // rows encoded for the old columns are stored before the change, which converts them
      await this.copyAll();
      await applySchemaChanges(this.client, this.schema, this.source, changes);
      this.encoder = new BatchEncoder(this.source, this.version + 1);
      this.changed = true;
      this.onWidened(this.source, this.version);
    }
    await this.append(this.encoder.encodeEvents(events, lines));
  }

  private async append(days: DayRows[]): Promise<void> {
    await ensureDailyPartitions(
      this.client,
      this.schema,
      this.source.table,
      days.map((d) => d.day),
      this.partitions,
    );
    for (const rows of days) {
      let day = this.pending.get(rows.day);
      if (day === undefined) {
        day = { chunks: [], length: 0, rowLines: [] };
        this.pending.set(rows.day, day);
      }
      day.chunks.push(rows.text);
      day.length += rows.text.length;
      for (const line of rows.rowLines) day.rowLines.push(line);
      this.pendingLength += rows.text.length;
      if (day.length >= DAY_COPY_CHARS) await this.copyDay(rows.day);
    }
    if (this.pendingLength >= PENDING_CHARS) await this.copyAll();
  }

  private async copyAll(): Promise<void> {
    for (const day of [...this.pending.keys()]) await this.copyDay(day);
  }

  private async copyDay(day: number): Promise<void> {
    const rows = this.pending.get(day)!;
    this.pending.delete(day);
    this.pendingLength -= rows.length;
    this.copyLines = rows.rowLines;
    try {
      await copyIntoPartition(
        this.client,
        this.schema,
        this.partitions.get(day)!,
        this.encoder.columns,
        rows.chunks,
      );
    } catch (e) {
      throw this.refused(e);
    }
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
 * re-create them, by index name.
 */
async function deferIndexesOfEmptyTable(
  client: pg.ClientBase,
  schema: string,
  table: string,
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ indexname: string; indexdef: string }>(
    "select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = $2",
    [schema, table],
  );
  for (const row of rows) await client.query(`drop index ${qualified(schema, row.indexname)}`);
  // a partitioned index reads back as `ON ONLY`, which would not build the partitions' indexes
  return new Map(rows.map((r) => [r.indexname, r.indexdef.replace(" ON ONLY ", " ON ")]));
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
      rowsBefore === 0
        ? await deferIndexesOfEmptyTable(client, config.schema, source.table)
        : new Map<string, string>();
    const working = cloneSourceSchema(source);
    await lockForWriting(client, config.schema, source.table);
    const loader = new SourceLoad(
      client,
      config.schema,
      working,
      now,
      (widened, version) => workers?.updateSchema(widened, version),
      await partitionsByDay(client, config.schema, source.table),
      opts.checkWidening,
    );
    const idIndex = indexNames(source.table)[2];
    loader.checkIds(rowsBefore, async (ids) => {
      // an id the load repeats is looked up among the rows it wrote: through the index, built now
      const definition = deferred.get(idIndex);
      if (definition !== undefined) {
        await client.query(definition);
        deferred.delete(idIndex);
      }
      const { rows } = await client.query<{ id: string }>(
        `select id from ${qualified(config.schema, source.table)} where id = any($1::text[])`,
        [ids],
      );
      return new Set(rows.map((r) => r.id));
    });

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
    await loader.finish();
    for (const definition of deferred.values()) await client.query(definition);
    // fresh statistics right away, so the first queries after a large load plan with them
    if (events >= ANALYZE_MIN_EVENTS && events >= rowsBefore * ANALYZE_GROWTH) {
      await client.query(`analyze ${qualified(config.schema, source.table)}${await analyzedColumns(client)}`);
    }
    opts.onProgress?.({ events, bytes });
    if (loader.schemaChanged) await saveSource(client, config.schema, working);
    // ingest's filters of this source's ids, in every process, are no longer trusted
    if (events > 0) await replaceWriteToken(client, config.schema, sourceName);
    await client.query("commit");
    const seconds = (performance.now() - started) / 1000;
    return {
      summary: {
        source: sourceName,
        events,
        duplicates: loader.duplicates,
        seconds,
        eventsPerSecond: seconds > 0 ? events / seconds : events,
      },
      source: working,
      schemaChanged: loader.schemaChanged || created,
    };
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    try {
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
