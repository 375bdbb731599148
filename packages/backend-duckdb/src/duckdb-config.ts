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
  /** DuckDB `memory_limit` (`QES_DUCKDB_MEMORY_LIMIT`), default `1GB` */
  memoryLimit?: string;
  /** DuckDB `threads` (`QES_DUCKDB_THREADS`), default 2 */
  threads?: number;
  /** open the file read-only: queries only, no loads, no schema creation */
  readOnly?: boolean;
}

export const DUCKDB_DEFAULTS = { memoryLimit: "1GB", threads: 2 } as const;

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
    memory_limit: config.memoryLimit ?? DUCKDB_DEFAULTS.memoryLimit,
    threads: String(config.threads ?? DUCKDB_DEFAULTS.threads),
    lock_configuration: "true",
  };
  if (config.readOnly) options.access_mode = "READ_ONLY";
  return options;
}
