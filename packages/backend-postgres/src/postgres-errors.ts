import { FLOAT64_OVERFLOW, isQesError, QesError, RAISED_MESSAGE_MARK, userSqlError } from "@qes/core";

/** Node socket errors that mean "the server cannot be reached right now". */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
]);

/**
 * SQLSTATEs of a server that is down, restarting or out of resources: 08 connection exception,
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53 insufficient resources.
 */
function isUnavailableState(state: string): boolean {
  return (
    state.startsWith("08") ||
    state.startsWith("53") ||
    state === "57P01" ||
    state === "57P02" ||
    state === "57P03"
  );
}

/** What pg says when a socket dies under it, or the pool cannot open one in time. */
const CONNECTION_MESSAGES = [
  "Connection terminated",
  "connection error and is not queryable",
  "timeout exceeded when trying to connect",
  "Connection terminated due to connection timeout",
  "server closed the connection",
  "the database system is",
];

function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** True when an error means PostgreSQL is unreachable (down, restarting, refusing connections). */
export function isUnavailableError(e: unknown): boolean {
  const code = sqlState(e);
  if (code !== undefined && (NETWORK_CODES.has(code) || (code.length === 5 && isUnavailableState(code))))
    return true;
  // AggregateError: `localhost` resolves to ::1 and 127.0.0.1, both refused.
  if (e instanceof AggregateError) return e.errors.some(isUnavailableError);
  const message = messageOf(e);
  return CONNECTION_MESSAGES.some((m) => message.includes(m));
}

/**
 * True when an error says the server itself is unreachable or refusing, as opposed to the pool's
 * own wait for a free connection running out ("timeout exceeded when trying to connect").
 */
export function isUnavailableServer(e: unknown): boolean {
  return isUnavailableError(e) && !messageOf(e).includes("timeout exceeded when trying to connect");
}

/**
 * 53200 "out of shared memory" with its hint about max_locks_per_transaction: the request touched
 * more partitions than the lock table holds (a load over thousands of days), not a server that is
 * down — which is what other 53xxx states (disk full, too many connections) mean here.
 */
export function isLockTableFull(code: string | undefined, e: unknown): boolean {
  return code === "53200" && /shared memory/.test(messageOf(e));
}

/**
 * The lock table full while ingesting: the route holds a request to 366 days and a group commit to
 * `ingestDaysPerTransaction` source-days, which the lock table of a server with the defaults
 * takes alone, so it was other transactions' locks (a scan of a source of many days): a 503 with
 * `Retry-After` that shippers retry, where sql_too_complex (422) made Vector drop the batch.
 */
export function lockTableBusy(e: unknown): QesError | undefined {
  if (!isLockTableFull(sqlState(e), e)) return undefined;
  return new QesError(
    "backend_unavailable",
    `PostgreSQL's lock table is full (ingesting events): ${messageOf(e)}. Other transactions hold its locks now ` +
      "(scans of sources of many days); nothing was stored: send again shortly, or raise the server's max_locks_per_transaction.",
    { cause: e, retryAfterSeconds: 5 },
  );
}

/**
 * Maps a pg error to a QesError with a stable code. Messages of server-side failures are the
 * server's own (they name no secrets); internals keep the original as `cause` for the logs.
 */
export function toQesError(e: unknown, doing: string): QesError {
  if (isQesError(e)) return e;
  const code = sqlState(e);
  if (isLockTableFull(code, e)) {
    return new QesError(
      "sql_too_complex",
      `PostgreSQL's lock table is full (${doing}): ${messageOf(e)}. Every day's partition a ` +
        "transaction reads or writes takes its locks: touch fewer days at once (split a load by " +
        "time, narrow a query's time range) or raise the server's max_locks_per_transaction.",
      { cause: e },
    );
  }
  if (isUnavailableError(e)) {
    return new QesError("backend_unavailable", `PostgreSQL is unavailable (${doing}): ${messageOf(e)}`, {
      cause: e,
    });
  }
  if (code?.startsWith("28")) {
    return new QesError("backend_unavailable", `PostgreSQL refused the login (${doing}): ${messageOf(e)}`, {
      cause: e,
    });
  }
  if (code === "57014" || code === "55P03") {
    return new QesError("query_timeout", "the query took longer than its time limit and was cancelled", {
      cause: e,
    });
  }
  if (code === "42601" && messageOf(e).includes("multiple commands")) {
    return new QesError("statement_not_allowed", "only one statement per query is allowed", { cause: e });
  }
  if (code === "42501") {
    return new QesError("sql_not_allowed", `not allowed: ${messageOf(e)}`, { cause: e });
  }
  // 21 cardinality violation (a scalar subquery of more than one row), 22 data exception, 42
  // syntax error or access rule violation (42501, the reader role's limits, is above): caused by
  // the query's SQL or its data. So is 0A000 feature_not_supported, which a read-only SELECT
  // meets only through what its SQL asks: a NaN cast to an integer ("cannot convert NaN to
  // bigint"), a FULL JOIN on a condition that is not an equality, COUNT(DISTINCT …) OVER (…)
  // BigQuery's error raised by the compiled SQL itself (SqlEmitter.raiseWhen): its message alone
  const raised = code === "22P02" ? raisedMessage(messageOf(e)) : undefined;
  if (raised !== undefined) return userSqlError(raised, e);
  // its FLOAT64 arithmetic's own overflow, in the words the other engines' check raises
  if (code === "22003" && messageOf(e) === "value out of range: overflow")
    return userSqlError(FLOAT64_OVERFLOW, e);
  if (code?.startsWith("21") || code?.startsWith("22") || code?.startsWith("42") || code === "0A000")
    return userSqlError(messageOf(e), e);
  if (code?.startsWith("54")) {
    return new QesError("sql_too_complex", messageOf(e), { cause: e });
  }
  return new QesError("internal", `PostgreSQL failed while ${doing}: ${messageOf(e)}`, { cause: e });
}

/** The message of SqlEmitter.raiseWhen's cast: `invalid input syntax for type bigint: "qes-error: …"`. */
function raisedMessage(message: string): string | undefined {
  const at = message.indexOf(`"${RAISED_MESSAGE_MARK}`);
  if (at < 0 || !message.endsWith('"')) return undefined;
  return message.slice(at + 1 + RAISED_MESSAGE_MARK.length, -1);
}
