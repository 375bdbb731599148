import { type RetentionPolicy, retentionDaysOf } from "@qes/core";

/**
 * How the ClickHouse backend reaches its engine (DESIGN.md §8, §12).
 *
 * @example
 * ```ts
 * // embedded chDB in this process (the tests' engine)
 * createClickhouseBackend({ path: "./data/qes.chdb" });
 * // a server or cluster over HTTP; queries run as a read-only user
 * createClickhouseBackend({
 *   url: "http://qes_owner:secret@clickhouse:8123/qes",
 *   queryUrl: "http://qes_reader:secret@clickhouse:8123/qes",
 *   cluster: "logs",
 * });
 * ```
 */
export interface ClickhouseConfig {
  /**
   * owner connection to a server (`QES_CLICKHOUSE_URL`, `http(s)://user:password@host:8123/database`):
   * creates tables, loads, retention. Unset: embedded chDB at `path`.
   */
  url?: string;
  /**
   * read-only user for queries (`QES_CLICKHOUSE_QUERY_URL`). Default with `url`: the user
   * `qes_reader_<database>` that qes creates, with a password derived from the owner's.
   */
  queryUrl?: string;
  /** embedded chDB data directory (`QES_CLICKHOUSE_PATH`, default `./data/qes.chdb`) */
  path?: string;
  /**
   * database of the log tables; default: the database of `url`, else `qes`. Several backends of
   * one process share its one chDB engine and are kept apart by database.
   */
  database?: string;
  /** cluster name (`QES_CLICKHOUSE_CLUSTER`): ON CLUSTER DDL, ReplicatedMergeTree + Distributed */
  cluster?: string;
  /** `max_memory_usage` per query in bytes (`QES_CLICKHOUSE_MAX_MEMORY`); unset = engine default */
  maxMemoryBytes?: number;
  /** default query timeout (`QES_QUERY_TIMEOUT_MS`), used when a call gives none */
  queryTimeoutMs?: number;
  /**
   * days a source keeps events (`QES_RETENTION_DAYS`), written as each table's `TTL`;
   * 0 or unset = keep forever (tables created by tests keep everything)
   */
  retention?: RetentionPolicy;
}

export const DEFAULT_CLICKHOUSE_PATH = "./data/qes.chdb";
export const DEFAULT_CLICKHOUSE_DATABASE = "qes";
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A database or cluster name qes writes into DDL unquoted-safe: `[A-Za-z_][A-Za-z0-9_]*`. */
export function isClickhouseIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** The database named by a server URL's path (`/qes`), if any. */
export function databaseOfUrl(url: string): string | undefined {
  const path = new URL(url).pathname.replace(/^\/+|\/+$/g, "");
  return path === "" ? undefined : decodeURIComponent(path);
}

/** The database of a config: explicit, else the URL's, else `qes`. */
export function databaseOf(config: ClickhouseConfig): string {
  return (
    config.database ??
    (config.url !== undefined ? databaseOfUrl(config.url) : undefined) ??
    DEFAULT_CLICKHOUSE_DATABASE
  );
}

/** Days to keep events of `source` (0 = forever). */
export function tableRetentionDays(config: ClickhouseConfig, source: string): number {
  return config.retention === undefined ? 0 : retentionDaysOf(config.retention, source);
}
