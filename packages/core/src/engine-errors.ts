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
