import { type ExecuteOptions, QesError, userSqlError } from "@qes/core";

/** ClickHouse error codes (`Code: N`) that mean "this SQL cannot run here", not an engine failure. */
const SQL_ERRORS = new Set([
  1, // UNSUPPORTED_METHOD
  6, // CANNOT_PARSE_TEXT
  32, // ATTEMPT_TO_READ_AFTER_EOF: a cast of '' to a number (`CAST('' AS INT64)`)
  25, // CANNOT_PARSE_ESCAPE_SEQUENCE: a LIKE pattern that ends in a backslash
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  36, // BAD_ARGUMENTS
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  42, // NUMBER_OF_ARGUMENTS_DOESNT_MATCH
  43, // ILLEGAL_TYPE_OF_ARGUMENT
  44, // ILLEGAL_COLUMN
  46, // UNKNOWN_FUNCTION
  47, // UNKNOWN_IDENTIFIER
  48, // NOT_IMPLEMENTED
  53, // TYPE_MISMATCH
  60, // UNKNOWN_TABLE
  62, // SYNTAX_ERROR
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  76, // CANNOT_PARSE_ESCAPE_SEQUENCE? (kept: a parse of the query's own text)
  80, // INCORRECT_QUERY
  81, // UNKNOWN_DATABASE
  26, // CANNOT_PARSE_QUOTED_STRING
  117, // INCORRECT_DATA
  125, // INCORRECT_RESULT_OF_SCALAR_SUBQUERY: more than one row, as PostgreSQL's 21000
  128, // TOO_LARGE_ARRAY_SIZE
  131, // TOO_LARGE_STRING_SIZE
  153, // ILLEGAL_DIVISION: an integer division by zero, or of -2^63 by -1
  190, // SIZES_OF_ARRAYS_DONT_MATCH
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  184, // ILLEGAL_AGGREGATION
  215, // NOT_AN_AGGREGATE
  352, // AMBIGUOUS_COLUMN_NAME
  386, // NO_COMMON_TYPE
  395, // FUNCTION_THROW_IF_VALUE_IS_NON_ZERO
  407, // DECIMAL_OVERFLOW
  427, // CANNOT_COMPILE_REGEXP
  691, // UNKNOWN_ELEMENT_OF_ENUM
]);
/**
 * The engine's own bounds on a query's size and depth, met by SQL inside qes's limits (a JSONPath
 * of 3,000 steps: TOO_SLOW_PARSING; 1,000: TOO_BIG_AST): the query's fault, 500 before.
 */
const TOO_COMPLEX = new Set([
  167, // TOO_DEEP_AST
  168, // TOO_BIG_AST
  306, // TOO_DEEP_RECURSION
  718, // TOO_SLOW_PARSING: "Maximum amount of backtracking … exceeded in the parser"
]);
const READONLY = 164; // READONLY: "Cannot execute query in readonly mode"
const ACCESS_DENIED = 497;
const TIMEOUT = 159; // TIMEOUT_EXCEEDED
const QUERY_WAS_CANCELLED = 394;
const MEMORY_LIMIT = 241; // MEMORY_LIMIT_EXCEEDED
const TOO_MANY_ROWS_OR_BYTES = 396;
const CANNOT_CONVERT_TYPE = 70;
const INVALID_JOIN_ON_EXPRESSION = 403;

function codeOf(e: unknown): number | null {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === "string" && /^\d+$/.test(code)) return Number(code);
  if (typeof code === "number") return code;
  const m = /Code: (\d+)\./.exec(e instanceof Error ? e.message : String(e));
  return m ? Number(m[1]) : null;
}

function messageOf(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).trim();
}

/** Maps a ClickHouse error to a QesError with a stable code. */
export function clickhouseQueryError(e: unknown, opts?: ExecuteOptions): QesError {
  if (e instanceof QesError) return e;
  const code = codeOf(e);
  const message = messageOf(e);
  if (code === TIMEOUT || /^Timeout exceeded/.test(message)) {
    return new QesError("query_timeout", `the query did not finish within ${opts?.timeoutMs ?? "its"} ms`, {
      cause: e,
    });
  }
  if (code === READONLY || code === ACCESS_DENIED || /readonly mode/.test(message)) {
    return new QesError("statement_not_allowed", "queries are read-only", { cause: e });
  }
  if (code === MEMORY_LIMIT || /^(?:Query )?[Mm]emory limit(?: \(\w+\))? exceeded/.test(message))
    return memoryLimitError(message, e);
  if (code === TOO_MANY_ROWS_OR_BYTES) {
    return new QesError("sql_invalid", `the query needs more than the service allows: ${message}`, {
      cause: e,
    });
  }
  if (code !== null && TOO_COMPLEX.has(code))
    return new QesError(
      "sql_too_complex",
      "The query is too large or too deeply nested for the engine (long JSONPaths and deep expressions count); shorten it.",
      { cause: e },
    );
  if (code === QUERY_WAS_CANCELLED)
    return new QesError("query_timeout", "the query was cancelled", { cause: e });
  // checkedInt64's narrowing: say what BigQuery says, not which ClickHouse column type overflowed
  if (code === CANNOT_CONVERT_TYPE && /cannot be safely converted into type Int64/.test(message))
    return userSqlError("INT64 overflow: a value is outside -2^63 … 2^63-1", e);
  // its message names compiled columns (`less(__table1.c1, __table3.c1)`): say what to write
  if (code === INVALID_JOIN_ON_EXPRESSION)
    return userSqlError("this JOIN needs an equality between the two sides' columns in its ON condition", e);
  // its message lists the compiled columns it looked for (`'__table4.f21' in current header: …`)
  // NOT_FOUND_COLUMN_IN_BLOCK (10) is how its analyser fails on other correlated subqueries
  // (`(SELECT string_agg(DISTINCT x) FROM UNNEST([t.id]) AS x)`): a 500 for the user's SQL before
  if (
    /Current query is not supported yet, because can't find correlated column/.test(message) ||
    (code === 10 && /Not found column \S+ in block/.test(message))
  )
    return userSqlError(
      "this subquery reads a column of the query around it in a way ClickHouse does not support; join the values in instead",
      e,
    );
  if (code !== null && SQL_ERRORS.has(code)) return userSqlError(withoutCompiledSql(message), e);
  if (isUnavailable(e)) {
    return new QesError("backend_unavailable", `ClickHouse does not answer: ${message}`, { cause: e });
  }
  return new QesError("internal", `ClickHouse: ${message}`, { cause: e });
}

/**
 * A query past its memory bound, in the user's terms: which bound (the query's own, or the
 * engine's for all queries at once) and its size, from the engine's `maximum: 2.00 GiB` — not the
 * engine's account of its threads and transforms (`Untracked memory …: While executing
 * AggregatingTransform`). A 422: the query asked for it, and the engine goes on answering others.
 */
function memoryLimitError(message: string, cause: unknown): QesError {
  const maximum = /maximum: ([\d.]+ [KMGTP]?i?B)/.exec(message)?.[1];
  const whole = /\((?:total|for user)\)|[Tt]otal memory limit|[Uu]ser memory limit/.test(message);
  const bound = maximum === undefined ? "" : ` (${maximum})`;
  const text = whole
    ? `The query cannot run: the engine's memory for all queries at once${bound} is used up; try again, or ask for fewer rows or shorter values`
    : `The query needs more memory than the service allows one query${bound}: aggregate fewer rows or shorter values`;
  return new QesError("sql_invalid", text, { cause });
}

/**
 * ClickHouse's message without what quotes the compiled SQL: the `Code: N. DB::Exception: `
 * prefix, `: while executing 'FUNCTION …'`, `(line L, col C): <query text>` and `failed at
 * position N (<query text>)`, and ClickHouse's `Note:` advice; core's userSqlError then keeps the first sentence.
 */
function withoutCompiledSql(message: string): string {
  return (
    message
      .replace(/^Code: \d+\. DB::Exception: /, "")
      .replace(/: while executing (?:'|function )[\s\S]*$/, "")
      .replace(/,? but found in expression: [\s\S]*$/, "")
      .replace(/\. In query [\s\S]*$/, "")
      .replace(/: In scope [\s\S]*$/, "")
      .replace(/ \(line \d+, col \d+\)[\s\S]*$/, "")
      .replace(/: failed at position \d+ \([\s\S]*$/, "")
      .replace(/\. \(([A-Z_]+)\)[\s\S]*$/, "")
      // advice in ClickHouse's own function names (`toInt64OrNull`), which the user's SQL cannot call
      .replace(/\. Note: [\s\S]*$/, "")
      .trim()
  );
}

/** A connection failure (server down, refused, reset), as opposed to an error of the query. */
export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return (
    typeof code === "string" &&
    ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EPIPE"].includes(code)
  );
}
