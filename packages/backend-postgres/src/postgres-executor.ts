import type { BoundValues, CompiledQuery, ExecuteOptions, QueryResult } from "@qes/core";
import { QesError } from "@qes/core";
import pg from "pg";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { isUnavailableError, toQesError } from "./postgres-errors.ts";
import { queryTypeParsers, toWireRows } from "./postgres-values.ts";

/**
 * Read-only execution (DESIGN.md §6). Queries run on their own pool, logged in as the reader
 * role (SELECT on the log tables, nothing else), with these guards set at connection start:
 * `default_transaction_read_only`, `statement_timeout`, `TimeZone=UTC`. Every call uses the
 * extended protocol, so a second statement in the text is refused by the server, and bound
 * values never become SQL.
 */

/**
 * Connection options of query sessions (libpq `options`, applied before any statement runs).
 * Compiled SQL names log tables unqualified: the search path is the log schema only.
 */
export function querySessionOptions(statementTimeoutMs: number, schema: string): string {
  return [
    `-c search_path=${schema}`,
    "-c default_transaction_read_only=on",
    `-c statement_timeout=${statementTimeoutMs}`,
    "-c TimeZone=UTC",
    "-c DateStyle=ISO",
  ].join(" ");
}

export function createQueryPool(config: ResolvedPostgresConfig): pg.Pool {
  // pg lets `options` in the URL replace the one given here: merge them, ours last (last wins)
  const url = new URL(config.queryUrl);
  const fromUrl = url.searchParams.get("options");
  url.searchParams.delete("options");
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: config.pool,
    connectionTimeoutMillis: config.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: "qes-query",
    options: [fromUrl, querySessionOptions(config.statementTimeoutMs, config.schema)]
      .filter(Boolean)
      .join(" "),
    types: queryTypeParsers,
  });
  // An idle connection dropped by the server (restart, admin shutdown) is removed by the pool;
  // without a listener the 'error' event would end the process.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Wraps the compiled query so the server stops after `maxRows + 1` rows: PostgreSQL keeps the
 * inner ORDER BY through a plain outer LIMIT, and the LIMIT lets the planner stop early.
 */
export function limitedSql(sql: string, maxRows: number): string {
  return `select * from (\n${sql}\n) as qes_result limit ${maxRows + 1}`;
}

/**
 * A query in the extended protocol (Parse/Bind/Execute): pg would use the simple protocol, which
 * runs several statements, whenever `values` is empty, unless told otherwise.
 */
export function extendedArrayQuery(text: string, values: BoundValues): pg.QueryArrayConfig<BoundValues> {
  return { text, values, rowMode: "array", queryMode: "extended" } as pg.QueryArrayConfig<BoundValues>;
}

const WATCHDOG = Symbol("watchdog");
const WATCHDOG_GRACE_MS = 5000;

interface SessionState {
  statementTimeoutMs: number;
}

export class PostgresExecutor {
  private executed = 0;
  /** the statement timeout each pooled connection has now (set at connect, changed on demand) */
  private readonly sessions = new WeakMap<pg.PoolClient, SessionState>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly config: ResolvedPostgresConfig,
  ) {}

  executedQueries(): number {
    return this.executed;
  }

  async execute(query: CompiledQuery, values: BoundValues, opts: ExecuteOptions): Promise<QueryResult> {
    if (values.length !== query.params.length) {
      throw new QesError(
        "internal",
        `the query has ${query.params.length} parameters but ${values.length} values were bound`,
      );
    }
    opts.signal?.throwIfAborted();
    const client = await this.connect();
    let broken = false;
    const onAbort = () => void this.cancel(client);
    try {
      await this.setTimeout(client, opts.timeoutMs);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      this.executed++;
      const running = client.query<unknown[]>(
        extendedArrayQuery(limitedSql(query.sql, opts.maxRows), values),
      );
      const result = await this.watch(running, opts.timeoutMs);
      const rows = result.rows;
      const rowLimitReached = rows.length > opts.maxRows;
      if (rowLimitReached) rows.length = opts.maxRows;
      return { rows: toWireRows(rows, query.columns), rowLimitReached };
    } catch (e) {
      broken = isUnavailableError(e) || e === WATCHDOG;
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (e === WATCHDOG) {
        throw new QesError("query_timeout", "the query took longer than its time limit and was abandoned");
      }
      throw toQesError(e, "running a query");
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
      client.release(broken);
    }
  }

  /**
   * The server ends a statement at its timeout; this guards against a server that stops
   * answering at all (a network partition): the connection is then dropped, not reused.
   */
  private async watch<T>(running: Promise<T>, timeoutMs: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(WATCHDOG), timeoutMs + WATCHDOG_GRACE_MS);
    });
    running.catch(() => undefined);
    try {
      return await Promise.race([running, watchdog]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `select 1` as the reader: the pool can connect and the role can log in. */
  async health(): Promise<void> {
    try {
      await this.pool.query(extendedArrayQuery("select 1", []));
    } catch (e) {
      throw toQesError(e, "checking health");
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (e) {
      throw toQesError(e, "connecting");
    }
  }

  private async setTimeout(client: pg.PoolClient, timeoutMs: number): Promise<void> {
    const state = this.sessions.get(client) ?? { statementTimeoutMs: this.config.statementTimeoutMs };
    this.sessions.set(client, state);
    if (state.statementTimeoutMs === timeoutMs) return;
    await client.query(
      extendedArrayQuery("select set_config('statement_timeout', $1, false)", [
        String(Math.max(1, Math.floor(timeoutMs))),
      ]),
    );
    state.statementTimeoutMs = timeoutMs;
  }

  /** Cancels the running statement of a pooled connection (a separate short connection). */
  private async cancel(client: pg.PoolClient): Promise<void> {
    const pid = (client as unknown as { processID?: number }).processID;
    if (pid === undefined) return;
    const canceller = new pg.Client({
      connectionString: this.config.queryUrl,
      connectionTimeoutMillis: 2000,
    });
    canceller.on("error", () => undefined);
    try {
      await canceller.connect();
      await canceller.query("select pg_cancel_backend($1)", [pid]);
    } catch {
      // the statement timeout still ends it
    } finally {
      await canceller.end().catch(() => undefined);
    }
  }
}
