import { totalmem } from "node:os";
import { type RetentionPolicy, retentionDaysOf } from "@qes/core";
import type { LeaseTiming } from "./clickhouse-lease.ts";

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
  /**
   * `max_memory_usage` per query in bytes (`QES_CLICKHOUSE_MAX_MEMORY`); 0 = no bound. Unset: on
   * embedded chDB `embeddedMaxMemoryBytes()` (the engine runs inside qes's process), on a server
   * the server's own setting
   */
  maxMemoryBytes?: number;
  /** default query timeout (`QES_QUERY_TIMEOUT_MS`), used when a call gives none */
  queryTimeoutMs?: number;
  /**
   * days a source keeps events (`QES_RETENTION_DAYS`), written as each table's `TTL`;
   * 0 or unset = keep forever (tables created by tests keep everything)
   */
  retention?: RetentionPolicy;
  /**
   * the lease that lets one instance at a time rebuild tables at start-up (clickhouse-lease.ts):
   * default a beat every 2 s, stale (its holder dead) after 30 s; tests shorten it
   */
  leaseTiming?: LeaseTiming;
}

export const DEFAULT_CLICKHOUSE_PATH = "./data/qes.chdb";
export const DEFAULT_CLICKHOUSE_DATABASE = "qes";
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** the per-query bound on embedded chDB never goes below this, on however small a machine */
const EMBEDDED_MEMORY_FLOOR = 256 * 1024 ** 2;
/** …nor above this, on however large a one */
const EMBEDDED_MEMORY_CAP = 2 * 1024 ** 3;

/** the memory this process may use: the machine's, or its cgroup's limit when lower */
export function availableMemoryBytes(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return constrained > 0 && constrained < total ? constrained : total;
}

/**
 * `max_memory_usage` of one query on embedded chDB when `QES_CLICKHOUSE_MAX_MEMORY` is unset:
 * an eighth of the memory available, within 256 MiB … 2 GiB. chDB allocates inside qes's own
 * process, and its default (0, no per-query bound; only the whole engine's 90 % of RAM) let one
 * consumer query (`groupArray` of 2M strings of 1,000 characters) take the process to 5.4 GB.
 * An eighth: the default engine slots (4) together stay under half, leaving the rest to V8, the
 * result bodies (up to 128 MB each, and their JSON) and the cache. 2 GiB: twice what DuckDB's
 * whole engine gets by default (`QES_DUCKDB_MEMORY_LIMIT` 1GB), far above what the built-in
 * endpoints need (a GROUP BY over a day of events), so only a runaway query meets it. 256 MiB:
 * below that, ordinary aggregations of a small machine would fail. A server's memory is its own
 * (its profiles): qes sets nothing there unless told to.
 */
export function embeddedMaxMemoryBytes(available = availableMemoryBytes()): number {
  return Math.min(EMBEDDED_MEMORY_CAP, Math.max(EMBEDDED_MEMORY_FLOOR, Math.floor(available / 8)));
}

/** the per-query memory bound of a config (bytes; undefined = the server's own) */
export function maxMemoryOf(config: ClickhouseConfig): number | undefined {
  if (config.maxMemoryBytes !== undefined) return config.maxMemoryBytes;
  return config.url === undefined ? embeddedMaxMemoryBytes() : undefined;
}

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
