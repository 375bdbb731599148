import { QesError } from "./errors.ts";

/**
 * An engine's error caused by the user's SQL (a value that cannot be cast, a division by zero, a
 * pattern the engine refuses), told in terms of the SQL the user wrote: 422 `sql_invalid` with the
 * engine's first sentence only — never the compiled SQL it quotes (`LINE 3: …` and its caret),
 * hints about engine settings (`* SET …`, `HINT: …`) or the compiler's internal names
 * (`"r18"."c1"`, `t0.f7`), which mean nothing to the user and describe the service's internals.
 */
export function userSqlError(message: string, cause: unknown): QesError {
  return new QesError("sql_invalid", `The query cannot run: ${userFacingEngineMessage(message)}`, { cause });
}

/** Names the compiler generates: aliases (`t0`, `r18`, `__q`), columns (`f7`, `c1`, `q3_h0`). */
const INTERNAL_NAME = String.raw`(?:__[a-z]+|[a-z]{1,2}\d+(?:_h\d+)?)`;
const QUOTED_INTERNAL = new RegExp(
  String.raw`"${INTERNAL_NAME}"(?:\."[^"]*")?|"${INTERNAL_NAME}\.[^"]*"|\b${INTERNAL_NAME}\.${INTERNAL_NAME}\b`,
  "g",
);

export function userFacingEngineMessage(message: string): string {
  const firstLine =
    message
      .replace(/^Error: /, "")
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? "the engine refused it";
  const cleaned = firstLine
    .replace(/\s*LINE \d+:.*$/, "")
    .replace(/^[A-Z][A-Za-z ]* Error: /, "")
    .replace(/\s*(HINT|DETAIL):.*$/, "")
    // DuckDB names the physical column a cast read
    .replace(/ when casting from source column .*$/, "")
    .replace(QUOTED_INTERNAL, "a value of the query")
    .replace(/\s*\* SET .*$/, "")
    // DuckDB's advice to change a setting the service locks (`Use "SET max_expression_depth TO x"…`)
    .replace(/\s*Use "SET .*$/, "")
    .trim();
  return cleaned === "" ? "the engine refused it" : cleaned;
}

/**
 * The most bytes of rows a query may return, on every backend: far beneath the longest string V8
 * makes (2^29 - 24 characters), with room for the response built from them. Consumer SQL can
 * make any size (`string_agg` over a generated array: 600 MB in one value), and a driver turning
 * such a value into a string threw outside any promise — the process would end.
 */
export const MAX_RESULT_BYTES = 128 * 1024 * 1024;

/** the message of a result past `MAX_RESULT_BYTES` (a 422 `sql_invalid`) */
export const RESULT_TOO_LARGE = `the query's result is larger than the service returns (${MAX_RESULT_BYTES / 1024 / 1024} MB): select fewer rows or shorter values`;

export function resultTooLarge(cause?: unknown): QesError {
  return new QesError("sql_invalid", RESULT_TOO_LARGE, cause === undefined ? {} : { cause });
}
