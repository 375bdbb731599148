import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import {
  type Backend,
  type BoundValues,
  type CompiledQuery,
  type ExecuteOptions,
  type IngestBatch,
  type IngestResult,
  iterateLinesNow,
  type LoadOptions,
  type LoadSummary,
  type LogSchema,
  QesError,
  type QueryResult,
  type RetentionPolicy,
  type RetentionReport,
  type SourceSchema,
  type SourceStats,
} from "@qes/core";
import { CHECKPOINT_WAIT_MS } from "./duckdb-checkpoint.ts";
import { DUCKDB_DEFAULTS, type DuckdbConfig, duckdbInstanceOptions } from "./duckdb-config.ts";
import { CutGuesses } from "./duckdb-cut-guesses.ts";
import { duckdbDialect } from "./duckdb-dialect.ts";
import { executeOnDuckdb } from "./duckdb-executor.ts";
import { ingestIntoDuckdb } from "./duckdb-ingest.ts";
import { loadIntoDuckdb } from "./duckdb-loader.ts";
import { applyDuckdbRetention, duckdbSourceStats } from "./duckdb-retention.ts";
import { RunningQueries } from "./duckdb-running-queries.ts";
import { SourceStatsCache } from "./duckdb-stats-cache.ts";
import { checkpointSchemaChange, initStorage, readLogSchema, readTimeIndexSql } from "./duckdb-storage.ts";
import { StoredIds } from "./duckdb-stored-ids.ts";
import { keepLeadingByteOrderMarks } from "./duckdb-varchar-decoder.ts";

/**
 * Files opened by a backend of this process. DuckDB's file lock is per process, so a second
 * instance on the same file in the same process would not be refused by the engine, yet two
 * writers would corrupt it.
 */
const openFiles = new Set<string>();

function storeLocked(path: string, detail: string, cause?: unknown): QesError {
  return new QesError(
    "store_locked",
    `the DuckDB store ${path} is held by another process (${detail}), most likely a running qes server. ` +
      "DuckDB allows one process per file: stop that server, or load through it (qes serve seeds and " +
      "loads itself), or point QES_DUCKDB_PATH at another file, or use PostgreSQL (QES_BACKEND=postgres) " +
      "to run several processes.",
    cause === undefined ? {} : { cause },
  );
}

class DuckdbBackend implements Backend {
  readonly name = "duckdb";
  readonly ingestPreparer = new URL("./duckdb-ingest-prepare.ts", import.meta.url).href;
  readonly dialect = duckdbDialect;
  /**
   * A running query holds one of Node's libuv pool threads (UV_THREADPOOL_SIZE, 4 by default) for
   * its whole run, and files, DNS and crypto queue behind them: keep one free. More queries than
   * DuckDB threads only interleave.
   */
  readonly queryConcurrency: number;
  private instance: DuckDBInstance | undefined;
  /** init and loads; queries and health checks use connections of their own */
  private admin: DuckDBConnection | undefined;
  private current: LogSchema | undefined;
  private executed = 0;
  private loads: Promise<unknown> = Promise.resolve();
  private warming: Promise<void> = Promise.resolve();
  private closing = false;
  /** which ids each source stores, for ingest's dedupe */
  private readonly storedIds = new StoredIds();
  /** cuts of cut-first queries tried again as guesses (rows written since count against them) */
  private readonly cutGuesses = new CutGuesses();
  /** /metrics' per-source statistics, read again for a source only once this process wrote it */
  private readonly stats = new SourceStatsCache();
  /** queries running now: retention's checkpoint waits for those begun before its deletes */
  private readonly queries = new RunningQueries();
  private readonly file: string | null;

  constructor(private readonly config: DuckdbConfig) {
    const uvPool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    this.queryConcurrency = Math.max(
      1,
      Math.min(Math.max(2, config.threads ?? DUCKDB_DEFAULTS.threads), uvPool - 1),
    );
    this.file = config.path === ":memory:" || config.path === "" ? null : resolve(config.path);
  }

  private async open(): Promise<DuckDBInstance> {
    if (this.instance) return this.instance;
    const path = this.file ?? ":memory:";
    if (this.file !== null) {
      if (openFiles.has(this.file)) throw storeLocked(this.file, "already open in this process");
      if (!this.config.readOnly) mkdirSync(dirname(this.file), { recursive: true });
    }
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(path, duckdbInstanceOptions(this.config));
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const lock = /Could not set lock on file .*?: (Conflicting lock is held in .*?\(PID \d+\))/.exec(
        message,
      );
      if (lock) throw storeLocked(path, lock[1]!.replace("Conflicting lock is held in", "held by"), e);
      throw new QesError("backend_unavailable", `cannot open the DuckDB store ${path}: ${message}`, {
        cause: e,
      });
    }
    if (this.file !== null) openFiles.add(this.file);
    this.instance = instance;
    return instance;
  }

  async init(): Promise<void> {
    this.closing = false;
    const instance = await this.open();
    this.admin ??= await instance.connect();
    if (this.config.readOnly) {
      const schema = await readLogSchema(this.admin);
      if (!schema) {
        throw new QesError(
          "backend_unavailable",
          `the DuckDB store ${this.config.path} has not been initialised`,
        );
      }
      this.current = schema;
    } else {
      this.current = await initStorage(this.admin);
    }
    this.warming = this.readTimeIndexes(instance, this.current);
  }

  /** loads every source's time index in the background (`readTimeIndexSql`); close waits for it */
  private async readTimeIndexes(instance: DuckDBInstance, schema: LogSchema): Promise<void> {
    const conn = await instance.connect();
    try {
      for (const source of Object.values(schema.sources)) await conn.run(readTimeIndexSql(source));
    } catch {
      // only a head start: a query reads the index itself when it needs it
    } finally {
      conn.closeSync();
    }
  }

  private ready(): { instance: DuckDBInstance; admin: DuckDBConnection; schema: LogSchema } {
    if (!this.instance || !this.admin || !this.current) {
      throw new QesError("backend_unavailable", "the DuckDB backend is not initialised (call init())");
    }
    return { instance: this.instance, admin: this.admin, schema: this.current };
  }

  async schema(): Promise<LogSchema> {
    // One process per file: this process's loads are the only writers, so memory is current.
    return this.ready().schema;
  }

  load(
    source: string,
    lines: AsyncIterable<string> | Iterable<string>,
    opts?: LoadOptions,
  ): Promise<LoadSummary> {
    const pending = iterateLinesNow(lines);
    return this.write(async (admin, schema) => {
      try {
        const outcome = await loadIntoDuckdb(admin, schema, source, pending, opts);
        if (outcome.schema) {
          this.adopt([outcome.schema.source], outcome.schema.version);
          await checkpointSchemaChange(admin, this.config.checkpointWaitMs);
        }
        return outcome.summary;
      } finally {
        // a load writes ids the ingest filter has not seen (a new source has no filter yet)
        const table = this.current?.sources[source]?.table;
        if (table !== undefined) this.storedIds.forget(table);
        this.cutGuesses.clear();
        this.stats.wrote([source]);
      }
    });
  }

  ingest(batches: readonly IngestBatch[]): Promise<IngestResult[]> {
    return this.write(async (admin, schema) => {
      let outcome: Awaited<ReturnType<typeof ingestIntoDuckdb>>;
      try {
        outcome = await ingestIntoDuckdb(admin, schema, batches, this.storedIds);
      } finally {
        this.stats.wrote(batches.map((b) => b.source));
      }
      if (outcome.schema) {
        this.adopt(outcome.schema.sources, outcome.schema.version);
        this.cutGuesses.clear();
      }
      for (const result of outcome.results) {
        const table = this.current?.sources[result.source]?.table;
        if (table !== undefined) this.cutGuesses.wrote(table, result.stored);
      }
      if (outcome.schema) await checkpointSchemaChange(admin, this.config.checkpointWaitMs);
      return outcome.results;
    });
  }

  applyRetention(policy: RetentionPolicy, nowMicros: bigint): Promise<RetentionReport[]> {
    return this.write(async (admin, schema) => {
      try {
        return await applyDuckdbRetention(admin, schema, policy, nowMicros, () =>
          this.queries.settled(this.config.checkpointWaitMs ?? CHECKPOINT_WAIT_MS),
        );
      } finally {
        this.cutGuesses.clear();
        this.stats.wrote();
      }
    });
  }

  // async: a store not open (before init, after close) rejects, as every other read does
  async sourceStats(): Promise<SourceStats[]> {
    const { instance, schema } = this.ready();
    return this.stats.get(Object.values(schema.sources), async (stale) => {
      const conn = await instance.connect();
      try {
        return await duckdbSourceStats(conn, stale);
      } finally {
        conn.closeSync();
      }
    });
  }

  /** Writes share one connection and one schema: run them one at a time, in call order. */
  private write<T>(work: (admin: DuckDBConnection, schema: LogSchema) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closing) throw new QesError("backend_unavailable", "the DuckDB store is closing");
      const { admin, schema } = this.ready();
      if (this.config.readOnly)
        throw new QesError("backend_unavailable", "the DuckDB store is open read-only");
      return work(admin, schema);
    };
    const result = this.loads.then(run, run);
    this.loads = result.catch(() => {});
    return result;
  }

  /** Takes committed source schemas into the in-memory model. */
  private adopt(sources: readonly SourceSchema[], version: number): void {
    const now = this.current!;
    const next = { ...now.sources };
    for (const source of sources) next[source.name] = source;
    this.current = { version, sources: next };
  }

  async execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult> {
    const { instance } = this.ready();
    this.executed++;
    const conn = await instance.connect();
    try {
      return await this.queries.track(executeOnDuckdb(conn, query, values, opts, this.cutGuesses));
    } finally {
      conn.closeSync();
    }
  }

  async health(): Promise<void> {
    try {
      const { instance } = this.ready();
      const conn = await instance.connect();
      try {
        await conn.run("SELECT 1");
      } finally {
        conn.closeSync();
      }
    } catch (e) {
      if (e instanceof QesError && e.code === "backend_unavailable") throw e;
      throw new QesError("backend_unavailable", `DuckDB does not answer: ${String(e)}`, { cause: e });
    }
  }

  executedQueries(): number {
    return this.executed;
  }

  async close(): Promise<void> {
    // no write may start once closing has begun: one that starts while close waits would run on
    // a connection closed under it (DuckDB: "bad_weak_ptr", and the process ends)
    this.closing = true;
    await this.warming;
    await this.loads;
    this.admin?.closeSync();
    this.instance?.closeSync();
    if (this.instance && this.file !== null) openFiles.delete(this.file);
    this.admin = undefined;
    this.instance = undefined;
    this.current = undefined;
    this.storedIds.clear();
    this.cutGuesses.clear();
    this.stats.clear();
  }
}

/**
 * The embedded DuckDB backend (DESIGN.md §6). Opens nothing until `init()`, which opens (or
 * creates) the file hardened per `duckdbInstanceOptions` and creates the built-in sources.
 * A file held by another process fails with QesError('store_locked').
 */
export function createDuckdbBackend(config: DuckdbConfig): Backend {
  keepLeadingByteOrderMarks();
  return new DuckdbBackend(config);
}
