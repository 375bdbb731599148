import {
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBValue,
  StatementType,
} from "@duckdb/node-api";
import {
  type BoundValues,
  type CompiledQuery,
  CUT_FIRST_MAX_WINDOW,
  type CutFirstSql,
  type ExecuteOptions,
  MAX_RESULT_BYTES,
  QesError,
  type QueryResult,
  resultTooLarge,
  userSqlError,
  type WireValue,
} from "@qes/core";
import { type CutGuesses, cutGuessKey } from "./duckdb-cut-guesses.ts";
import { rowSize } from "./duckdb-result-size.ts";
import { duckdbRowToWire } from "./duckdb-values.ts";

/** how often a stopped query's connection is interrupted again (`executeOnDuckdb`) */
const REINTERRUPT_MS = 5;

/**
 * Engine error classes that mean "this SQL cannot run", as opposed to an engine failure. A
 * Syntax Error comes after the statement parsed: a LIKE pattern that ends in its escape character
 * (`id LIKE '\\'`, or a pattern read from a column), the query's text or its data.
 */
const SQL_ERROR =
  /^(Parser|Binder|Conversion|Invalid Input|Out of Range|Catalog|Not implemented|Syntax) Error/;

function engineMessage(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/^Error: /, "");
}

/** Maps a DuckDB error to a QesError with a stable code. */
export function duckdbQueryError(e: unknown): QesError {
  if (e instanceof QesError) return e;
  const message = engineMessage(e);
  if (message.startsWith("Permission Error")) {
    return new QesError("sql_not_allowed", `the query needs access the service does not allow (${message})`, {
      cause: e,
    });
  }
  if (message.startsWith("TransactionContext Error") && /read-only/.test(message)) {
    return new QesError("statement_not_allowed", "queries are read-only", { cause: e });
  }
  if (SQL_ERROR.test(message)) return userSqlError(message, e);
  // the query's own size against QES_DUCKDB_MEMORY_LIMIT (a 3,000-column sort was a 500)
  if (message.startsWith("Out of Memory Error")) {
    return new QesError(
      "sql_too_complex",
      "The query needs more memory than the engine may use (QES_DUCKDB_MEMORY_LIMIT); select fewer columns or rows.",
      { cause: e },
    );
  }
  return new QesError("internal", `DuckDB: ${message}`, { cause: e });
}

async function selectStatement(conn: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
  const prepared = await conn.prepare(sql);
  if (prepared.statementType !== StatementType.SELECT) {
    prepared.destroySync();
    throw new QesError("statement_not_allowed", "only a single SELECT statement can run");
  }
  return prepared;
}

function bind(prepared: DuckDBPreparedStatement, values: BoundValues): void {
  if (prepared.parameterCount !== values.length) {
    throw new QesError(
      "internal",
      `compiled query has ${prepared.parameterCount} parameters but ${values.length} values were bound`,
    );
  }
  values.forEach((value, i) => {
    if (value === null) prepared.bindNull(i + 1);
    else prepared.bindVarchar(i + 1, value);
  });
}

/**
 * Runs one compiled SELECT on its own connection inside `BEGIN TRANSACTION READ ONLY`. Parameters
 * are positional (`$1` = `values[0]`), each bound as text or NULL. The timeout (and `signal`)
 * interrupt the engine; at most `maxRows + 1` rows are read, chunk by chunk, so a huge result is
 * never materialised. The transaction is always rolled back.
 *
 * A cut-first query (`CutFirstSql`) is first tried with the cut an earlier run of the same query
 * and values found (`guesses`), which answers without the scan that computes the cut whenever it
 * returns the LIMIT's worth of rows; otherwise the cut is computed, then the rows past it read —
 * unless they are too many to hold (`CutFirstSql.window`), when the one-statement form runs.
 */
export async function executeOnDuckdb(
  conn: DuckDBConnection,
  query: CompiledQuery,
  values: BoundValues,
  opts: ExecuteOptions,
  guesses?: CutGuesses,
): Promise<QueryResult> {
  let stopped: "timeout" | "aborted" | null = null;
  // DuckDB drops an interrupt that reaches no running statement: one that lands while the next
  // statement is prepared or waits for a libuv thread would let it run to its end. So once
  // stopped, the connection is interrupted again until the executor returns.
  let interrupting: ReturnType<typeof setInterval> | undefined;
  const stop = (why: "timeout" | "aborted") => {
    if (stopped === null) stopped = why;
    conn.interrupt();
    interrupting ??= setInterval(() => conn.interrupt(), REINTERRUPT_MS);
  };
  if (opts.signal?.aborted) throw abortError(opts.signal);
  const timer = setTimeout(() => stop("timeout"), opts.timeoutMs);
  const onAbort = () => stop("aborted");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  // an interrupt between two statements reaches no running query: do not start the next
  const checkStopped = () => {
    if (stopped !== null) throw stoppedError(stopped, opts);
  };
  const writesBefore = query.cutFirst && guesses?.writesOf(query.cutFirst.table);
  try {
    await conn.run("BEGIN TRANSACTION READ ONLY");
    checkStopped();
    const oneStatement = async () => {
      const result = await readRows(conn, query, query.sql, values, opts.maxRows);
      checkStopped();
      return result;
    };
    const plan = query.cutFirst;
    if (plan === undefined) return await oneStatement();
    const key = cutGuessKey(plan.sql, values, query.params);
    const guess = guesses?.guess(key, plan.table);
    if (guess === null) return await oneStatement();
    if (guess !== undefined) {
      const result = await readRows(conn, query, plan.sql, [...values, guess], opts.maxRows);
      checkStopped();
      if (answersWhole(result, plan)) return result;
    }
    const cut = await scalarText(
      conn,
      plan.cut,
      plan.cutValues.map((i) => values[i] ?? null),
    );
    checkStopped();
    // the table's rows at or past the cut, counted up to CUT_FIRST_MAX_WINDOW + 1
    if (cut !== null && Number(await scalarText(conn, plan.window, [cut])) > CUT_FIRST_MAX_WINDOW) {
      // a selective filter whose n-th row is old: too many rows past it to hold
      checkStopped();
      guesses?.remember(key, plan.table, null, writesBefore);
      return await oneStatement();
    }
    checkStopped();
    const result = await readRows(conn, query, plan.sql, [...values, cut], opts.maxRows);
    checkStopped();
    if (cut !== null && answersWhole(result, plan)) guesses?.remember(key, plan.table, cut, writesBefore);
    return result;
  } catch (e) {
    if (stopped !== null) throw stoppedError(stopped, opts, e);
    throw duckdbQueryError(e);
  } finally {
    clearTimeout(timer);
    clearInterval(interrupting);
    opts.signal?.removeEventListener("abort", onAbort);
    await conn.run("ROLLBACK").catch(() => {});
  }
}

/** whether a cut-first select run with a guessed cut returned rows only the exact cut would */
function answersWhole(result: QueryResult, plan: CutFirstSql): boolean {
  return result.rowLimitReached || result.rows.length >= plan.limit;
}

/** the first value of a one-row SELECT as the engine's text, or NULL */
async function scalarText(conn: DuckDBConnection, sql: string, values: BoundValues): Promise<string | null> {
  const prepared = await selectStatement(conn, sql);
  try {
    bind(prepared, values);
    const value = (await prepared.runAndReadAll()).getRows()[0]?.[0];
    return value === null || value === undefined ? null : String(value);
  } finally {
    prepared.destroySync();
  }
}

/** the rows of one SELECT, at most `maxRows` (and whether there were more) */
async function readRows(
  conn: DuckDBConnection,
  query: CompiledQuery,
  sql: string,
  values: BoundValues,
  maxRows: number,
): Promise<QueryResult> {
  const prepared = await selectStatement(conn, sql);
  try {
    bind(prepared, values);
    const result = await prepared.stream();
    const rows: Record<string, WireValue>[] = [];
    let rowLimitReached = false;
    let size = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) break;
      const room = maxRows - rows.length;
      const chunkRows = readChunkRows(chunk);
      for (let i = 0; i < Math.min(room, chunkRows.length); i++) {
        const raw = chunkRows[i]!;
        size += rowSize(raw);
        if (size > MAX_RESULT_BYTES) throw resultTooLarge();
        rows.push(duckdbRowToWire(query.columns, raw));
      }
      if (chunkRows.length > room) {
        rowLimitReached = true;
        break;
      }
    }
    return { rows, rowLimitReached };
  } finally {
    prepared.destroySync();
  }
}

/** a chunk's values; a value longer than V8's longest string is the result's size, not a fault */
function readChunkRows(chunk: { getRows(): DuckDBValue[][] }): DuckDBValue[][] {
  try {
    return chunk.getRows();
  } catch (e) {
    if (e instanceof RangeError || (e as { code?: unknown }).code === "ERR_STRING_TOO_LONG")
      throw resultTooLarge(e);
    throw e;
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
