import type { BoundValues, CompiledQuery } from "./compile/compiled-query.ts";
import type { Dialect } from "./dialect/dialect.ts";
import type { LogSchema } from "./schema/schema-model.ts";
import type { WireValue } from "./wire/wire-type.ts";

export interface ExecuteOptions {
  /** rows beyond this are not returned; `rowLimitReached` says so */
  maxRows: number;
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
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  /** `Date.now()`-style clock in µs for events without a timestamp */
  nowMicros?: bigint;
}

/**
 * A storage and execution engine for log events (DESIGN.md §6). Execution is read-only by
 * construction; loads are all-or-nothing per call.
 */
export interface Backend {
  readonly name: string;
  /** the SQL dialect the compiler emits for this backend */
  readonly dialect: Dialect;
  /** creates or migrates storage idempotently; the nine built-in sources exist afterwards */
  init(): Promise<void>;
  /** current schema; reflects another process's load within a second */
  schema(): Promise<LogSchema>;
  /**
   * Stores NDJSON lines into a source (created when new). A malformed line refuses the whole
   * call with QesError('invalid_event', …, {line}) and stores nothing.
   */
  load(
    source: string,
    lines: AsyncIterable<string> | Iterable<string>,
    opts?: LoadOptions,
  ): Promise<LoadSummary>;
  /** runs a compiled query read-only with bound parameters, a timeout and a row cap */
  execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult>;
  /** throws QesError('backend_unavailable') when the engine cannot answer */
  health(): Promise<void>;
  /** number of queries executed since start (sandbox tests assert it does not move) */
  executedQueries(): number;
  close(): Promise<void>;
}
