import type { BoundValues, CompiledQuery } from "./compile/compiled-query.ts";
import type { Dialect } from "./dialect/dialect.ts";
import type { LogEvent } from "./schema/parse-event.ts";
import type { LogSchema, SourceSchema } from "./schema/schema-model.ts";
import type { WideningCheck } from "./schema/widen-for-event.ts";
import type { WireValue } from "./wire/wire-type.ts";

export interface ExecuteOptions {
  /** rows beyond this are not returned; `rowLimitReached` says so */
  maxRows: number;
  timeoutMs: number;
  /**
   * Cancellation (DESIGN.md §11): when it aborts (the client went away and nobody else waits for
   * this query), the backend stops the query in the engine at once — DuckDB `interrupt()`,
   * PostgreSQL's cancel request, ClickHouse `KILL QUERY` or its client's abort — and rejects with
   * `signal.reason`. A backend must not leave the query running after it settles.
   */
  signal?: AbortSignal;
  /**
   * The caller has used much of the engine lately and others want it too (admission control):
   * run this query on one core where the engine allows it per query (PostgreSQL without parallel
   * workers, ClickHouse `max_threads = 1`); the answer is the same.
   */
  modest?: boolean;
}

/** how long a plan estimate may take, and its cancellation (`Backend.estimateHeavy`) */
export interface EstimateOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface QueryResult {
  /** rows as wire values (DESIGN.md §4), keys in `CompiledQuery.columns` order */
  rows: Record<string, WireValue>[];
  rowLimitReached: boolean;
}

export interface LoadProgress {
  events: number;
  bytes: number;
}

export interface LoadSummary {
  source: string;
  /** events read (stored or left out as duplicates) */
  events: number;
  /**
   * events not stored because their id the source stored already, or an earlier line of the load
   * had (DESIGN.md §10: a file loaded twice stores each event once)
   */
  duplicates: number;
  seconds: number;
  eventsPerSecond: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  /** `Date.now()`-style clock in µs for events without a timestamp */
  nowMicros?: bigint;
  /** sees every widening before it is applied (core's `widenForEvent`); throwing refuses the load */
  checkWidening?: WideningCheck;
}

/** Events of one source, already validated and normalised by core (ids filled in). */
export interface IngestBatch {
  source: string;
  events: readonly LogEvent[];
  /**
   * A schema of the source the sender found to cover every event, the batch's own widenings
   * applied (the ingest route's check). A store whose schema has the same fields skips walking
   * the events again for widenings (`batchCoveredBy`); any other may not trust it.
   */
  coveredBy?: SourceSchema;
  /**
   * The batch's rows encoded ahead of its commit by the backend's `ingestPreparer` (off the
   * server's main thread), against the schema `coveredBy`. A store uses them only while its
   * source has exactly the fields they were encoded for; else it reads `events`, which on such a
   * batch are made on first use.
   */
  prepared?: PreparedIngest;
  /**
   * On a store that bounds the days a source holds (`sourceDayLimit`): the instant (unix µs,
   * the server's clock less the days of the past the store always takes) before which an event
   * opens a new day only while the source holds fewer days than the bound. Later days are always
   * taken. Absent: the store counts from its own clock.
   */
  boundedBefore?: bigint;
}

/** An ingest batch's rows as a backend's `ingestPreparer` encoded them (`IngestBatch.prepared`). */
export interface PreparedIngest {
  /** `JSON.stringify` of the fields of the schema the rows were encoded against */
  fields: string;
  /** each event's id, in the batch's order */
  ids: readonly string[];
  /** the backend's own encoding of the events, in the batch's order (structured-cloneable) */
  rows: unknown;
}

export interface IngestResult {
  source: string;
  /** events written by this call */
  stored: number;
  /** events not written because their id was already stored in the source, or repeated in the call */
  duplicates: number;
}

/** `Backend.sourceDayLimit` */
export interface SourceDayLimit {
  /** UTC days one source may hold */
  days: number;
  /** what bounds them in this engine and how an operator raises the bound, for the start-up refusal */
  reason: string;
}

/** Days of events kept per source; 0 keeps forever (DESIGN.md §10, QES_RETENTION_DAYS). */
export interface RetentionPolicy {
  defaultDays: number;
  perSource: Readonly<Record<string, number>>;
}

export interface RetentionReport {
  source: string;
  deletedEvents: number;
  /** whole daily partitions dropped (backends that partition by day) */
  droppedPartitions?: number;
  /**
   * daily partitions old enough to drop that this run left to the next one: their table was busy
   * (PostgreSQL: a query or a write held it longer than a drop waits). Absent when none.
   */
  leftPartitions?: number;
}

/** what one statistics pass did (`Backend.refreshStatistics`) */
export interface StatisticsReport {
  /** the tables analyzed, by the engine's own names */
  analyzed: string[];
  /** why the pass did nothing: the engine keeps statistics itself, or counts no changes to go by */
  skipped?: "autovacuum" | "untracked";
}

export interface SourceStats {
  source: string;
  events: number;
  /** storage the source's events take, as the engine counts it (may be an estimate) */
  bytes: number;
  /** timestamp of the oldest event in unix microseconds; null when the source is empty */
  oldestMicros: bigint | null;
}

/**
 * A storage and execution engine for log events (DESIGN.md §6). Execution is read-only by
 * construction; loads are all-or-nothing per call.
 */
export interface Backend {
  readonly name: string;
  /** the SQL dialect the compiler emits for this backend */
  readonly dialect: Dialect;
  /**
   * how many queries the engine runs at once without queueing inside (connection pool size,
   * threads): the default of `QES_MAX_CONCURRENT_QUERIES`; absent = 4
   */
  readonly queryConcurrency?: number;
  /** creates or migrates storage idempotently; the nine built-in sources exist afterwards */
  init(): Promise<void>;
  /**
   * The most UTC days of events one source may hold with every query of it still answered, and
   * why, where the engine has such a limit (PostgreSQL: a partition per day, each locked with its
   * indexes by a scan without a time filter, in a lock table the whole server shares). Known
   * after init(). Ingest refuses events older than it (less the days held besides the past), and
   * the server warns at start-up of a retention that would keep more (forever included).
   * Absent: no limit (DuckDB: no partitions; ClickHouse: daily parts, no locks).
   */
  readonly sourceDayLimit?: SourceDayLimit;
  /**
   * what `init` found that the operator must be told (storage it could not bring up to date);
   * the server logs them at start-up. Optional: none.
   */
  startupWarnings?(): readonly string[];
  /**
   * current schema; reflects another process's load within a second. `fresh`: asked of the store
   * now (the engine refused a query compiled for the model this process last read)
   */
  schema(opts?: { fresh?: boolean }): Promise<LogSchema>;
  /**
   * Stores NDJSON lines into a source (created when new). A malformed line refuses the whole
   * call with QesError('invalid_event', …, {line}) and stores nothing.
   */
  load(
    source: string,
    lines: AsyncIterable<string> | Iterable<string>,
    opts?: LoadOptions,
  ): Promise<LoadSummary>;
  /**
   * Stores every batch in ONE transaction (group commit: the server passes the batches of
   * concurrent requests together); resolves only after the commit is durable. Sources are created
   * and schemas widened as by load(). An event whose id is already stored in its source (or
   * repeated in this call) is not stored again. All or nothing. Results are in batch order.
   */
  ingest(batches: readonly IngestBatch[]): Promise<IngestResult[]>;
  /**
   * URL of an `IngestPreparerModule`: the server then parses each ingest request's body on a
   * worker thread and encodes its rows there too (`IngestBatch.prepared`), so that its main
   * thread, which drives the commits, is free. Optional: without it the main thread parses.
   */
  readonly ingestPreparer?: string;
  /**
   * Removes events older than their source's retention (`timestamp < now - days`), reclaiming
   * the space (DESIGN.md §10). Sources with 0 days are untouched.
   */
  applyRetention(policy: RetentionPolicy, nowMicros: bigint): Promise<RetentionReport[]>;
  /**
   * Keeps the planner's statistics of stored events current where the engine itself does not
   * (PostgreSQL with autovacuum off): analyzes what changed enough since it was last analyzed.
   * Optional; the server runs it at start-up and then every minute, once at a time across
   * instances where the engine can tell.
   */
  refreshStatistics?(): Promise<StatisticsReport>;
  /** per-source counters for /metrics; cheap (catalogue statistics where the engine keeps them) */
  sourceStats(): Promise<SourceStats[]>;
  /** runs a compiled query read-only with bound parameters, a timeout and a row cap */
  execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult>;
  /**
   * Whether the engine's planner expects `query` to be heavy, before anything runs (admission
   * control, DESIGN.md §11: a heavy query of a consumer waits while other callers use the engine,
   * instead of taking a core for the query timeout before its caller has any engine time on
   * record). Optional: without it only a caller's measured engine time counts. An error while
   * estimating is not the query's error: the estimate then says false and `execute` reports it;
   * but planning past `opts.timeoutMs` rejects with `query_timeout` (running would plan as long).
   */
  estimateHeavy?(query: CompiledQuery, values: BoundValues, opts: EstimateOptions): Promise<boolean>;
  /** throws QesError('backend_unavailable') when the engine cannot answer */
  health(): Promise<void>;
  /** number of queries executed since start (sandbox tests assert it does not move) */
  executedQueries(): number;
  close(): Promise<void>;
}
