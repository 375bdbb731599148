import { sqlString } from "./clickhouse-sql.ts";

/**
 * Query parameters on embedded chDB, bound on the call's own session instead of through chDB's
 * Node binding.
 *
 * The binding runs every parameterised call of the process one after another, on one chain
 * that advances only when the engine has finished the call (its libchdb sets parameters in state
 * shared by all sessions). Every qes query carries parameters, so one long query held every other
 * query, every schema check and /metrics' statistics behind it until its timeout: a caller flooding
 * the engine within its admission share (issue 12) stalled everyone for up to
 * `QES_QUERY_TIMEOUT_MS`. `SET param_<name> = '<value>'` is a setting of the session (each client
 * of the pool has a session of its own, see clickhouse-connection.ts), and the statement after it
 * runs without bound parameters, so calls run side by side. The value still never enters the
 * statement's text: it is a string literal of the SET, read as the parameter's text the way the
 * HTTP interface reads `param_<name>`.
 *
 * The SET must parse within the session's `max_query_size` (256 KiB by default: an ingest's id
 * list is longer): every session raises it first (`SESSION_SETUP_SQL`; the server's own limits on
 * consumer SQL are far lower). A SET longer still goes through the binding's own, queued path.
 */

/** `max_query_size` of every embedded session */
const SESSION_MAX_QUERY_SIZE = 64 * 1024 * 1024;

/** what a new embedded session runs once, before its first call */
export const SESSION_SETUP_SQL = `SET max_query_size = ${SESSION_MAX_QUERY_SIZE}`;

/** Beneath the session's `max_query_size`, with room for the statement around the values. */
const MAX_SET_BYTES = SESSION_MAX_QUERY_SIZE - 64 * 1024;

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** TSV escaping: how ClickHouse reads a top-level String parameter's text (`\N` is NULL). */
function tsvEscape(text: string): string {
  if (!/[\\\0\b\f\n\r\t]/.test(text)) return text;
  return text
    .replaceAll("\\", "\\\\")
    .replaceAll("\0", "\\0")
    .replaceAll("\b", "\\b")
    .replaceAll("\f", "\\f")
    .replaceAll("\n", "\\n")
    .replaceAll("\r", "\\r")
    .replaceAll("\t", "\\t");
}

/** The parameter's text as ClickHouse reads it, for the value shapes qes binds. */
export function parameterText(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value === "string") return tsvEscape(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    // an array parameter's text is its literal: elements quoted as SQL strings
    return `[${value.map((v) => sqlString(v)).join(",")}]`;
  }
  throw new Error(`a query parameter of this shape is not bound here: ${typeof value}`);
}

/** `SET param_a = '…', param_b = '…'`, or null when it would be too long for one statement. */
export function setParamsSql(params: Record<string, unknown>): string | null {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (!PARAM_NAME.test(name)) throw new Error(`not a query parameter name: ${name}`);
    parts.push(`param_${name} = ${sqlString(parameterText(value))}`);
  }
  const sql = `SET ${parts.join(", ")}`;
  return Buffer.byteLength(sql, "utf8") > MAX_SET_BYTES ? null : sql;
}

interface ParamsCall {
  query: string;
  query_params?: Record<string, unknown>;
  abort_signal?: AbortSignal;
  [key: string]: unknown;
}

type Run = (params: ParamsCall) => Promise<unknown>;

/**
 * The chDB connection `connection` (one session), with its calls' query parameters set on the
 * session by a statement of their own just before the call. Calls on one connection run one at a
 * time (a client of the pool makes one call at a time; this keeps a SET next to its statement
 * regardless).
 */
export function withSessionParams<C extends object>(connection: C): C {
  let tail: Promise<unknown> = Promise.resolve();
  const inner = connection as unknown as Record<string, Run>;
  const bind =
    (method: "query" | "exec" | "command"): Run =>
    (params) => {
      const given = params.query_params;
      if (given === undefined || Object.keys(given).length === 0)
        return inner[method]!.call(connection, params);
      const set = setParamsSql(given);
      if (set === null) return inner[method]!.call(connection, params);
      const { query_params: _bound, ...rest } = params;
      const run = async () => {
        await inner.command!.call(connection, {
          query: set,
          ...(params.abort_signal ? { abort_signal: params.abort_signal } : {}),
        });
        return inner[method]!.call(connection, rest);
      };
      const result = tail.then(run, run);
      tail = result.catch(() => {});
      return result;
    };
  const overrides: Record<string, Run> = {
    query: bind("query"),
    exec: bind("exec"),
    command: bind("command"),
  };
  return new Proxy(connection, {
    get(target, prop) {
      if (typeof prop === "string" && prop in overrides) return overrides[prop];
      // the connection keeps its state in private fields: its own methods run on it, not the proxy
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
