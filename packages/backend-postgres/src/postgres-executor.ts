import type { BoundValues, CompiledQuery, EstimateOptions, ExecuteOptions, QueryResult } from "@qes/core";
import { MAX_RESULT_BYTES, QesError, RAISED_MESSAGE_MARK, RESULT_TOO_LARGE } from "@qes/core";
import pg from "pg";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { isUnavailableError, isUnavailableServer, toQesError } from "./postgres-errors.ts";
import { literal } from "./postgres-sql.ts";
import { withSessionOptions } from "./postgres-url-options.ts";
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
 * Compiled SQL names log tables unqualified: the search path is the log schema only. JIT is off:
 * the usage counters over 1M events (plan costs 1e5–3e5, past `jit_above_cost`) ran 6–15 % slower
 * with it, its compilation (~0.6 s in EXPLAIN) outweighing what it saved (docs/benchmarks.md).
 * `extra_float_digits=1` (PostgreSQL's default, pinned) gives the shortest digits that
 * CAST(FLOAT64 AS STRING) spells (postgres-float-text.ts).
 */
export function querySessionOptions(statementTimeoutMs: number, schema: string): string {
  return [
    `-c search_path=${schema}`,
    "-c default_transaction_read_only=on",
    `-c statement_timeout=${statementTimeoutMs}`,
    "-c TimeZone=UTC",
    "-c DateStyle=ISO",
    "-c jit=off",
    "-c extra_float_digits=1",
  ].join(" ");
}

export function createQueryPool(config: ResolvedPostgresConfig): pg.Pool {
  const pool = new pg.Pool({
    ...withSessionOptions(config.queryUrl, querySessionOptions(config.statementTimeoutMs, config.schema)),
    max: config.pool,
    connectionTimeoutMillis: config.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: "qes-query",
    types: queryTypeParsers,
  });
  // An idle connection dropped by the server (restart, admin shutdown) is removed by the pool;
  // without a listener the 'error' event would end the process.
  pool.on("error", () => undefined);
  ignoreErrorsOfCheckedOutClients(pool);
  return pool;
}

/**
 * A pooled client that is checked out but between queries when the server ends its session
 * (restart, `pg_terminate_backend`) emits 'error' with no listener — the pool listens only while
 * the client is idle — and that would end the process. Its next query fails instead ("not
 * queryable"), which the caller reports as unavailable and releases the client as broken.
 */
export function ignoreErrorsOfCheckedOutClients(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
}

const TOO_LARGE = `${RAISED_MESSAGE_MARK}${RESULT_TOO_LARGE}`;

/**
 * Wraps the compiled query so the server stops after `maxRows + 1` rows: PostgreSQL keeps the
 * inner ORDER BY through the outer LIMIT, and the LIMIT lets the planner stop early.
 *
 * And so that no result passes `MAX_RESULT_BYTES`: a running sum of each row's size fails the
 * statement (SqlEmitter.raiseWhen's marked cast, a 422) at the row that would pass it, before that
 * row is sent. Unbounded, consumer SQL such as `string_agg(format('%10000s', 'x'), '')` over 60,000
 * generated rows made one 600 MB value: node-postgres threw ERR_STRING_TOO_LONG turning it into a
 * string inside the socket's data handler, outside any promise, which would end the process; and
 * many large rows could take its memory. The guard is an extra last column the rows are read
 * without (`toWireRows` reads the query's columns by position).
 */
export function limitedSql(sql: string, maxRows: number, maxBytes = MAX_RESULT_BYTES): string {
  return (
    // the CASE inside the cast, so that no constant is left for the planner to fold (and raise)
    `select qes_result.*, cast(case when sum(${rowSize(maxBytes)}) over (rows unbounded preceding) > ` +
    `${maxBytes} then ${literal(TOO_LARGE)} end as bigint) as qes_size_guard ` +
    `from (\n${sql}\n) as qes_result limit ${maxRows + 1}`
  );
}

/**
 * A result row's size as the client receives it. `pg_column_size` counts a stored value as it is
 * stored: compressed, a 150,000-character text read from a table counted 1,729 bytes, so 1,000
 * such rows passed the guard as 1.7 MB. The row's text (node-postgres reads text) counts what is
 * sent; it is taken only for rows whose stored size is under the limit, so that a computed value
 * past it (one `string_agg` of 600 MB) is refused without being written out once more.
 */
function rowSize(maxBytes: number): string {
  return (
    `case when pg_column_size(qes_result.*) > ${maxBytes} then pg_column_size(qes_result.*) ` +
    "else octet_length(cast(qes_result as text)) end"
  );
}

/**
 * A query in the extended protocol (Parse/Bind/Execute): pg would use the simple protocol, which
 * runs several statements, whenever `values` is empty, unless told otherwise.
 */
export function extendedArrayQuery(text: string, values: BoundValues): pg.QueryArrayConfig<BoundValues> {
  return { text, values, rowMode: "array", queryMode: "extended" } as pg.QueryArrayConfig<BoundValues>;
}

interface CancelConnection {
  on(event: "error", listener: () => void): void;
  once(event: "connect" | "end" | "error", listener: () => void): void;
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  end(): void;
}

const WATCHDOG = Symbol("watchdog");
const WATCHDOG_GRACE_MS = 5000;
/**
 * How long a connection whose query was cancelled waits for the cancel to reach the server before
 * it goes back to the pool; past it the connection is dropped instead (`inSession`).
 */
const CANCEL_DELIVERY_MS = 2000;

interface SessionState {
  statementTimeoutMs: number;
  /** parallel workers are off in this session (`ExecuteOptions.modest`) */
  modest?: boolean;
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
    return this.inSession(opts, "running a query", async (client) => {
      await this.setModest(client, opts.modest === true);
      this.executed++;
      const result = await this.watch(
        client.query<unknown[]>(extendedArrayQuery(limitedSql(query.sql, opts.maxRows), values)),
        opts.timeoutMs,
      );
      const rows = result.rows;
      const rowLimitReached = rows.length > opts.maxRows;
      if (rowLimitReached) rows.length = opts.maxRows;
      return { rows: toWireRows(rows, query.columns), rowLimitReached };
    });
  }

  /**
   * The planner's total cost of the query (`EXPLAIN`, nothing run) against
   * `QES_POSTGRES_HEAVY_QUERY_COST`. Planning a cross join of three tables takes milliseconds;
   * running it takes a core for the query timeout. An error while planning is left for `execute`
   * to report in the user's terms: the estimate then says "not heavy". Planning past the time
   * limit is the query's `query_timeout`. It knows what the planner knows: a three-way equi-join
   * on a column an endpoint's CTE computes (`requests a join requests b on a.bucket = b.bucket …`,
   * no statistics, so 1/200 of the pairs) plans below 1e6 and ran to the timeout among others;
   * only the caller's engine time (`QuerySlots`) held its next query back.
   */
  async estimateHeavy(query: CompiledQuery, values: BoundValues, opts: EstimateOptions): Promise<boolean> {
    if (this.config.heavyQueryCost === 0) return false;
    let cost: number;
    try {
      cost = await this.inSession(opts, "estimating a query", async (client) => {
        const result = await this.watch(
          client.query<unknown[]>(extendedArrayQuery(`explain (format json) ${query.sql}`, values)),
          opts.timeoutMs,
        );
        return totalCost(result.rows[0]?.[0]);
      });
    } catch (e) {
      // planning alone took the time limit: running it would plan again for as long, then fail
      // the same way (a UNION ALL of 150 eight-way joins plans for seconds within the token limit)
      if (opts.signal?.aborted || (e as { code?: unknown }).code === "query_timeout") throw e;
      return false;
    }
    return cost >= this.config.heavyQueryCost;
  }

  /**
   * A pooled connection with the statement timeout of `opts`, cancelled in the engine when
   * `opts.signal` aborts; a connection that failed or stopped answering is dropped, not reused.
   */
  private async inSession<T>(
    opts: EstimateOptions,
    doing: string,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    opts.signal?.throwIfAborted();
    const client = await this.connect();
    let broken = false;
    let cancelled: Promise<boolean> | undefined;
    const onAbort = () => {
      cancelled = this.cancel(client);
    };
    try {
      await this.setTimeout(client, opts.timeoutMs);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      return await work(client);
    } catch (e) {
      broken = isUnavailableError(e) || e === WATCHDOG;
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (e === WATCHDOG) {
        throw new QesError("query_timeout", "the query took longer than its time limit and was abandoned");
      }
      throw toQesError(e, doing);
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
      // A cancel names the server process, not the query: one still on its way when the query had
      // ended would cancel whatever the connection runs next, another caller's query (a 504 in no
      // time, seen in the soak). The connection goes back once the server has taken the cancel
      // (it is ignored by an idle process), or is dropped if that does not come.
      if (cancelled !== undefined && !(await cancelled)) broken = true;
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
      // every connection of the pool is open and busy with other queries: the server answers, this
      // process is at its limit. That is not an outage (503) but a moment of overload (429).
      if (this.pool.totalCount >= this.config.pool && this.pool.idleCount === 0 && !isUnavailableServer(e)) {
        throw new QesError(
          "too_many_requests",
          "Every PostgreSQL connection of this instance is busy; try again shortly.",
          { retryAfterSeconds: 1, cause: e },
        );
      }
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

  /**
   * A modest query runs without parallel workers: one process, one core, where a parallel plan
   * would take up to `max_parallel_workers_per_gather` more (the server's setting comes back with
   * RESET for the next query that is not modest).
   */
  private async setModest(client: pg.PoolClient, modest: boolean): Promise<void> {
    const state = this.sessions.get(client)!;
    if ((state.modest ?? false) === modest) return;
    await client.query(
      modest
        ? extendedArrayQuery("select set_config('max_parallel_workers_per_gather', '0', false)", [])
        : extendedArrayQuery("reset max_parallel_workers_per_gather", []),
    );
    state.modest = modest;
  }

  /**
   * Cancels the running statement of a pooled connection with the protocol's CancelRequest (what
   * libpq's PQcancel sends): a short unauthenticated connection carrying the backend's pid and
   * secret key, so it needs no free connection slot and no login. The statement then fails with
   * 57014 and the connection stays usable. Resolves true once the server has taken the request
   * (it closes the socket after signalling the process), false when that did not happen within
   * CANCEL_DELIVERY_MS.
   */
  private cancel(client: pg.PoolClient): Promise<boolean> {
    const { processID, secretKey, host, port } = client as unknown as {
      processID?: number;
      secretKey?: number;
      host: string;
      port: number;
    };
    if (processID === undefined || secretKey === undefined) return Promise.resolve(false);
    // pg's wire connection: typed by @types/pg without the methods a cancel request uses
    const connection = new pg.Connection() as unknown as CancelConnection;
    connection.on("error", () => undefined);
    return new Promise<boolean>((resolve) => {
      let sent = false;
      const timer = setTimeout(() => resolve(false), CANCEL_DELIVERY_MS);
      const done = (delivered: boolean) => {
        clearTimeout(timer);
        resolve(delivered);
      };
      connection.once("connect", () => {
        connection.cancel(processID, secretKey);
        sent = true;
        // the server closes the socket once it has read the request
        connection.end();
      });
      connection.once("end", () => done(sent));
      connection.once("error", () => done(false));
      // a Unix socket directory (`host=/var/run/postgresql`) or a TCP host
      if (host.startsWith("/")) connection.connect(`${host}/.s.PGSQL.${port}`);
      else connection.connect(port, host);
    });
  }
}

/**
 * The largest `Total Cost` of any node of `EXPLAIN (FORMAT JSON)`'s one row (text or parsed json),
 * not the top node's: a `Limit` (or an EXISTS) is costed as the fraction of its input the planner
 * expects to read before enough rows match, so `… a, b, c where <never true> limit 1` planned at
 * 0.08 and ran a three-way cross join to the query timeout. The node under it says the work.
 */
function totalCost(plan: unknown): number {
  const doc = typeof plan === "string" ? (JSON.parse(plan) as unknown) : plan;
  const top = (doc as { Plan?: PlanNode }[] | undefined)?.[0]?.Plan;
  if (typeof top?.["Total Cost"] !== "number") throw new Error("EXPLAIN gave no total cost");
  let most = 0;
  const nodes: PlanNode[] = [top];
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    const cost = node["Total Cost"];
    if (typeof cost === "number" && cost > most) most = cost;
    if (Array.isArray(node.Plans)) nodes.push(...node.Plans);
  }
  return most;
}

/** one node of `EXPLAIN (FORMAT JSON)`: its children (init plans and sub plans included) */
interface PlanNode {
  "Total Cost"?: unknown;
  Plans?: PlanNode[];
}
