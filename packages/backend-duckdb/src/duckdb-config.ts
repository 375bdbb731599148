import { totalmem } from "node:os";

/**
 * Configuration of the embedded DuckDB backend (DESIGN.md §6, §8).
 *
 * @example
 * ```ts
 * const backend = createDuckdbBackend({ path: "./data/qes.duckdb", memoryLimit: "1GB", threads: 2 });
 * await backend.init();
 * ```
 */
export interface DuckdbConfig {
  /** database file (`QES_DUCKDB_PATH`); `:memory:` for a private in-memory store */
  path: string;
  /** DuckDB `memory_limit` (`QES_DUCKDB_MEMORY_LIMIT`), default `defaultMemoryLimit()` */
  memoryLimit?: string;
  /** DuckDB `threads` (`QES_DUCKDB_THREADS`), default 2 */
  threads?: number;
  /** open the file read-only: queries only, no loads, no schema creation */
  readOnly?: boolean;
  /**
   * DuckDB `checkpoint_threshold` (WAL size that triggers a checkpoint), default DuckDB's 16MB.
   * Not a setting of the service: bench/duckdb-checkpoint.ts measures it (docs/benchmarks.md).
   */
  checkpointThreshold?: string;
  /**
   * How long a schema change's checkpoint waits for queries begun before the change (default
   * `CHECKPOINT_WAIT_MS`, 120 s). Not a setting of the service: tests shorten it to see a
   * checkpoint that gives up.
   */
  checkpointWaitMs?: number;
}

export const DUCKDB_DEFAULTS = { threads: 2 } as const;

const MiB = 2 ** 20;
/** the most DuckDB may use by default, where the machine has room for it */
const DEFAULT_MEMORY_CEILING = 1024 * MiB;
/** DuckDB's share of a small machine: Node, the OS and the page cache need the rest */
const DEFAULT_MEMORY_SHARE = 0.4;

/**
 * `1GB`, or 40 % of the memory this process may use (the machine's, or its cgroup's limit when
 * lower) where that is less. With a flat 1 GB, a consumer query that hashes a cross join took a
 * 1 GB container to its limit (docs/benchmarks.md, "A 1 GB machine"); DuckDB spills to disk or
 * refuses the query at its limit instead.
 */
export function defaultMemoryLimit(
  available = Math.min(totalmem(), process.constrainedMemory?.() || Number.POSITIVE_INFINITY),
): string {
  const bytes = Math.min(DEFAULT_MEMORY_CEILING, available * DEFAULT_MEMORY_SHARE);
  return `${Math.max(64, Math.floor(bytes / MiB))}MiB`;
}

/**
 * Instance options fixed when the database opens, then locked: no file, network or extension
 * access from SQL, bounded memory and threads. A query can read or change none of them.
 */
export function duckdbInstanceOptions(config: DuckdbConfig): Record<string, string> {
  const options: Record<string, string> = {
    enable_external_access: "false",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    allow_community_extensions: "false",
    allow_unsigned_extensions: "false",
    memory_limit: config.memoryLimit ?? defaultMemoryLimit(),
    threads: String(config.threads ?? DUCKDB_DEFAULTS.threads),
    lock_configuration: "true",
  };
  if (config.readOnly) options.access_mode = "READ_ONLY";
  if (config.checkpointThreshold !== undefined) options.checkpoint_threshold = config.checkpointThreshold;
  return options;
}
