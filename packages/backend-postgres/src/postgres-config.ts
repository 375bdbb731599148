import { QesError } from "@qes/core";
import { MAX_DAYS_PER_TRANSACTION } from "./postgres-day-groups.ts";

/**
 * How the PostgreSQL backend connects (DESIGN.md §8).
 *
 * ```ts
 * const backend = createPostgresBackend({
 *   url: "postgres://qes_owner:secret@db:5432/logs", // owner: schema, migrations, loads
 *   schema: "qes",                                   // log tables live here
 *   pool: 10,                                        // query connections per process
 * });
 * ```
 */
export interface PostgresBackendConfig {
  /** owner connection (`QES_POSTGRES_URL`): creates and migrates the schema, loads events */
  url: string;
  /** schema of the log tables (`QES_POSTGRES_SCHEMA`); also names the query role `qes_reader_<schema>` */
  schema: string;
  /**
   * connection of the SELECT-only role used for queries (`QES_POSTGRES_QUERY_URL`). Default: the
   * owner URL with the user replaced by `qes_reader_<schema>` and, when the owner URL carries a
   * password, a password derived from it (see `readerPasswordFor`).
   */
  queryUrl?: string;
  /** query connections per process (`QES_POSTGRES_POOL`, default 10) */
  pool?: number;
  /** default statement timeout of query connections (`QES_QUERY_TIMEOUT_MS`, default 30000) */
  statementTimeoutMs?: number;
  /** how long to wait for a connection before answering backend_unavailable (default 5000) */
  connectTimeoutMs?: number;
  /**
   * planner cost (`EXPLAIN`'s total cost) from which a consumer's query counts as heavy before it
   * runs (`QES_POSTGRES_HEAVY_QUERY_COST`, default 1e7; 0: never): it then waits while other
   * callers use the engine (DESIGN.md §11)
   */
  heavyQueryCost?: number;
  /**
   * distinct (source, day) pairs one ingest transaction may write (default 366, the days one
   * request may bring): a group commit on more is committed in several transactions of whole
   * requests (postgres-day-groups.ts)
   */
  ingestDaysPerTransaction?: number;
}

export const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres";
export const DEFAULT_POSTGRES_SCHEMA = "qes";
export const DEFAULT_POSTGRES_POOL = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/**
 * Planner cost units are not seconds. Measured: the built-in endpoints plan at 3e2–3e3 on the
 * seeded store and 1e5–3e5 over 1M events (the usage counters); a three-way cross join of the
 * 20,000 seeded events at 4e7 (docs/benchmarks.md)
 */
export const DEFAULT_HEAVY_QUERY_COST = 10_000_000;

const READER_PREFIX = "qes_reader_";
/** PostgreSQL truncates identifiers beyond 63 bytes; a truncated role name could collide. */
const MAX_IDENTIFIER = 63;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/** The SELECT-only login role of a schema (roles are cluster-wide, so the schema names it). */
export function readerRoleFor(schema: string): string {
  return READER_PREFIX + schema;
}

/** Checks a schema name: lower-case identifier short enough for its reader role's name. */
export function validateSchemaName(schema: string, variable = "QES_POSTGRES_SCHEMA"): string {
  if (!SCHEMA_NAME.test(schema) || schema.length > MAX_IDENTIFIER - READER_PREFIX.length) {
    throw new QesError(
      "invalid_config",
      `${variable} must be a lower-case identifier ([a-z_][a-z0-9_]*) of at most ` +
        `${MAX_IDENTIFIER - READER_PREFIX.length} characters, got "${schema}"`,
    );
  }
  if (schema.startsWith("pg_")) {
    throw new QesError("invalid_config", `${variable} must not start with "pg_" (reserved by PostgreSQL)`);
  }
  return schema;
}

function parseUrl(url: string, variable: string): URL {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") throw new Error("protocol");
    return parsed;
  } catch {
    throw new QesError("invalid_config", `${variable} must be a postgres:// URL`);
  }
}

/** The user name a connection URL logs in as (PostgreSQL's default: the OS user). */
export function userOfUrl(url: string): string {
  const user = decodeURIComponent(parseUrl(url, "QES_POSTGRES_URL").username);
  return user === "" ? (process.env.PGUSER ?? process.env.USER ?? "postgres") : user;
}

/** The configuration with defaults filled in and every value checked. */
export interface ResolvedPostgresConfig {
  url: string;
  schema: string;
  queryUrl: string;
  /** the role queries run as */
  readerRole: string;
  /** true when qes derived the query URL and so manages the reader role itself */
  managesReaderRole: boolean;
  /** password set on a managed reader role; null when the owner URL has none (trust/peer auth) */
  readerPassword: string | null;
  pool: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  heavyQueryCost: number;
  ingestDaysPerTransaction: number;
}

export function resolvePostgresConfig(
  config: PostgresBackendConfig,
  derivePassword: (ownerPassword: string, role: string) => string,
): ResolvedPostgresConfig {
  const owner = parseUrl(config.url, "QES_POSTGRES_URL");
  const schema = validateSchemaName(config.schema);
  const pool = config.pool ?? DEFAULT_POSTGRES_POOL;
  const statementTimeoutMs = config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const connectTimeoutMs = config.connectTimeoutMs ?? 5000;
  const heavyQueryCost = config.heavyQueryCost ?? DEFAULT_HEAVY_QUERY_COST;
  if (!Number.isFinite(heavyQueryCost) || heavyQueryCost < 0)
    throw new QesError("invalid_config", "QES_POSTGRES_HEAVY_QUERY_COST must be ≥ 0");
  const ingestDaysPerTransaction = config.ingestDaysPerTransaction ?? MAX_DAYS_PER_TRANSACTION;
  if (!Number.isInteger(ingestDaysPerTransaction) || ingestDaysPerTransaction < 1)
    throw new QesError("invalid_config", "ingestDaysPerTransaction must be an integer ≥ 1");
  if (!Number.isInteger(pool) || pool < 1)
    throw new QesError("invalid_config", "QES_POSTGRES_POOL must be ≥ 1");
  if (config.queryUrl) {
    parseUrl(config.queryUrl, "QES_POSTGRES_QUERY_URL");
    return {
      url: config.url,
      schema,
      queryUrl: config.queryUrl,
      readerRole: userOfUrl(config.queryUrl),
      managesReaderRole: false,
      readerPassword: null,
      pool,
      statementTimeoutMs,
      connectTimeoutMs,
      heavyQueryCost,
      ingestDaysPerTransaction,
    };
  }
  const readerRole = readerRoleFor(schema);
  const ownerPassword = decodeURIComponent(owner.password);
  const readerPassword = ownerPassword === "" ? null : derivePassword(ownerPassword, readerRole);
  const query = new URL(config.url);
  query.username = encodeURIComponent(readerRole);
  query.password = readerPassword === null ? "" : encodeURIComponent(readerPassword);
  return {
    url: config.url,
    schema,
    queryUrl: query.toString(),
    readerRole,
    managesReaderRole: true,
    readerPassword,
    pool,
    statementTimeoutMs,
    connectTimeoutMs,
    heavyQueryCost,
    ingestDaysPerTransaction,
  };
}
