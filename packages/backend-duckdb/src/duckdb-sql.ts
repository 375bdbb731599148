/** DuckDB identifiers and string literals in SQL text (names the service chose, never request values). */

import { bindOnce as bindOnceIn, type OnceBinding } from "@qes/core";

export function quoteIdent(name: string): string {
  return '"' + name.replaceAll('"', '""') + '"';
}

export function sqlString(text: string): string {
  return "'" + text.replaceAll("'", "''") + "'";
}

/**
 * A value DuckDB evaluates once inside an expression (core's bindOnce). What one level writes
 * inline DuckDB evaluates once anyway (common subexpressions), a lambda's body it does not: one
 * TIMESTAMP_TRUNC in a zone over a million rows took 3× the time with its wall-clock reading
 * bound, so only what a level below built, past 512 characters, is.
 */
const DUCKDB_ONCE: OnceBinding = {
  inlineChars: 512,
  bind: (name, value, body) => `list_transform([${value}], lambda ${name}: ${body})[1]`,
  // "subqueries in lambda expressions are not supported"
  holds: (body) => !/\bselect\b/i.test(body),
};

/** `body` of `value`, `value` evaluated and written once */
export function bindOnce(value: string, body: (v: string) => string): string {
  return bindOnceIn(value, body, DUCKDB_ONCE);
}
