import { randomUUID } from "node:crypto";
import type { ClickHouseClient } from "@clickhouse/client";
import {
  type BoundValues,
  type CompiledQuery,
  type ExecuteOptions,
  QesError,
  type QueryResult,
  type WireValue,
} from "@qes/core";
import { clickhouseQueryError } from "./clickhouse-errors.ts";
import { readResultRows } from "./clickhouse-result-rows.ts";
import { CLICKHOUSE_QUERY_SETTINGS } from "./clickhouse-types.ts";
import { clickhouseRowToWire, OUTPUT_SETTINGS } from "./clickhouse-values.ts";

export interface QueryLimits {
  /** `max_memory_usage` in bytes (0 = none); unset = the engine's default */
  maxMemoryBytes?: number;
  /** the largest result body read back (bytes); unset = MAX_RESULT_BYTES */
  maxResultBytes?: number;
}

/** The name of the `k`-th parameter (1-based) as the dialect writes it: `{p1:Nullable(String)}`. */
export function paramName(k: number): string {
  return `p${k}`;
}

/** `{p1: values[0], …}`: values go to the engine as query parameters, never into the SQL text. */
export function queryParams(values: BoundValues): Record<string, string | null> {
  const params: Record<string, string | null> = {};
  values.forEach((v, i) => {
    params[paramName(i + 1)] = v;
  });
  return params;
}

function settingValue(v: string | number): string {
  return typeof v === "number" ? String(v) : `'${v.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/**
 * The query's bounds as a SETTINGS clause of the query itself (not the session's: on chDB those
 * would outlive the call). `readonly = 1` comes last: after it, nothing may change a setting.
 * `max_result_rows` with `break` stops reading once the cap (+1, to tell a cut) is passed;
 * `limit` caps the top-level result the same way where `break` does not reach (a UNION).
 */
export function limitSettings(opts: ExecuteOptions, limits: QueryLimits): Record<string, string | number> {
  const settings: Record<string, string | number> = {
    max_execution_time: Math.max(opts.timeoutMs, 1) / 1000,
    timeout_overflow_mode: "throw",
    max_result_rows: opts.maxRows + 1,
    result_overflow_mode: "break",
    limit: opts.maxRows + 1,
    session_timezone: "UTC",
    ...CLICKHOUSE_QUERY_SETTINGS,
    ...OUTPUT_SETTINGS,
  };
  if (limits.maxMemoryBytes !== undefined) settings.max_memory_usage = limits.maxMemoryBytes;
  // a heavy caller among others (admission control) gets one thread
  if (opts.modest === true) settings.max_threads = 1;
  settings.readonly = 1;
  return settings;
}

/**
 * The SQL that runs: the query and its SETTINGS, led by `log_comment` = the marker KILL QUERY finds
 * it by in `system.processes` (a comment in the text would not do: chDB stores a parameterised
 * query re-formatted, without comments). It comes first because `readonly` ends the clause.
 */
export function boundedSql(sql: string, marker: string, settings: Record<string, string | number>): string {
  const clause = Object.entries({ log_comment: marker, ...settings })
    .map(([k, v]) => `${k} = ${settingValue(v)}`)
    .join(", ");
  return `${sql}\nSETTINGS ${clause}`;
}

const MARKER_PREFIX = "qes-query:";
const MARKER = /^qes-query:[0-9a-f-]{36}$/;

/**
 * The statement that stops the query carrying `marker` (its `log_comment`). It goes without query
 * parameters: chDB's Node binding runs every parameterised call of the process one after another,
 * so a parameterised KILL would wait behind the very query it stops. The marker is made here
 * (a UUID), never request text, and is checked before it becomes a literal.
 */
export function killQuerySql(marker: string): string {
  if (!MARKER.test(marker)) throw new Error(`not a query marker: ${marker}`);
  return `KILL QUERY WHERE Settings['log_comment'] = '${marker}' ASYNC`;
}

/**
 * How long after its deadline a query is answered `query_timeout` by qes itself when the engine
 * has not stopped it (issue 12: within ~100 ms). ClickHouse checks `max_execution_time` between
 * blocks: measured on chDB 26.7 (2 cores, 0.7 s deadline), its own timeout came 3–55 ms after the
 * deadline for cross joins, GROUP BYs and a logs.all consumer query — but a function over one huge
 * value is one step it does not interrupt (`arraySort` of 30M elements ran on 8.7–13.3 s past the
 * deadline; a consumer `ARRAY_AGG(… ORDER BY …)` of 30M rows 0.68 s), and this guard, at 1 s
 * before, made the caller wait for it.
 */
export const DEADLINE_GRACE_MS = 100;

/** How a running query is stopped from outside (KILL QUERY through the owner). */
export type KillQuery = (marker: string) => Promise<void>;

/**
 * Runs one compiled SELECT read-only with its parameters bound as ClickHouse query parameters, and
 * its limits in the query's SETTINGS. A timeout or an abort stops the query in the engine: the
 * engine's own `max_execution_time`, the client's abort, and KILL QUERY by its marker (the only
 * stop chDB has: its binding's abort settles the promise and leaves the engine running).
 */
export async function executeOnClickhouse(
  client: ClickHouseClient,
  query: CompiledQuery,
  values: BoundValues,
  opts: ExecuteOptions,
  limits: QueryLimits,
  kill: KillQuery,
): Promise<QueryResult> {
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const marker = `${MARKER_PREFIX}${randomUUID()}`;
  const controller = new AbortController();
  let stopped: "timeout" | "aborted" | null = null;
  const stop = (why: "timeout" | "aborted") => {
    if (stopped !== null) return;
    stopped = why;
    controller.abort();
    void kill(marker).catch(() => {});
  };
  // the engine stops itself at max_execution_time; past DEADLINE_GRACE_MS it is inside work it
  // does not interrupt, and the caller is answered now (KILL QUERY stops the rest)
  const timer = setTimeout(() => stop("timeout"), opts.timeoutMs + DEADLINE_GRACE_MS);
  const onAbort = () => stop("aborted");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const run = async (sql: string) => {
      // the body as it comes (exec), not the client's row stream: see readResultRows
      const { stream } = await client.exec({
        query: `${boundedSql(sql, marker, limitSettings(opts, limits))}\nFORMAT JSONCompactEachRow`,
        query_params: queryParams(values),
        abort_signal: controller.signal,
      });
      const data = await readResultRows(stream, limits.maxResultBytes);
      if (stopped !== null) throw stoppedError(stopped, opts);
      return data;
    };
    let data = await run(query.readAhead ?? query.sql);
    // the read-ahead's rows end with its retry flag (the same on every row): 1 = ties at its end
    if (query.readAhead !== undefined && data.length > 0 && Number(data[0]!.at(-1)) === 1) {
      data = await run(query.sql);
    }
    const rows: Record<string, WireValue>[] = [];
    const n = Math.min(data.length, opts.maxRows);
    for (let i = 0; i < n; i++) rows.push(clickhouseRowToWire(query.columns, data[i]!));
    return { rows, rowLimitReached: data.length > opts.maxRows };
  } catch (e) {
    if (stopped !== null) throw stoppedError(stopped, opts, e);
    throw clickhouseQueryError(e, opts);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new QesError("query_timeout", "the query was cancelled");
}

function stoppedError(why: "timeout" | "aborted", opts: ExecuteOptions, cause?: unknown): Error {
  if (why === "aborted" && opts.signal) return abortError(opts.signal);
  return new QesError("query_timeout", `the query did not finish within ${opts.timeoutMs} ms`, { cause });
}
