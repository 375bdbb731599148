import { bindOnce as bindOnceIn, type OnceBinding } from "@qes/core";

/**
 * A value PostgreSQL evaluates once inside an expression (core's bindOnce). PostgreSQL has no
 * lambda and no common subexpressions: ROUND's arithmetic names its value a dozen times, so each
 * nesting level multiplied the SQL (eight levels of ROUND past 4 MB, refused as too complex) and
 * the work per row. A scalar subquery over a one-row subquery kept apart by `OFFSET 0` (without
 * it the planner inlines the value back into every mention) names it once, for ~0.2 µs a row.
 *
 * An aggregate in the value is still the outer query's (an aggregate of outer columns belongs to
 * the outer query), but a window function would be the subquery's and see a single row: a value
 * that may hold one (`OVER` anywhere, even in a name or a string: the test only has to be safe)
 * is written where it is used.
 */
const POSTGRES_ONCE: OnceBinding = {
  inlineChars: 200,
  bind: (name, value, body) => `(SELECT ${body} FROM (SELECT ${value} AS ${name} OFFSET 0) AS ${name}_row)`,
};

const WINDOW = /\bover\b/i;

/** `body` of `value`, `value` evaluated and written once where the subquery can hold it */
export function bindOnce(value: string, body: (v: string) => string): string {
  if (WINDOW.test(value)) return body(value);
  return bindOnceIn(value, body, POSTGRES_ONCE);
}

/**
 * `body` of `value` read once whatever its length: for a value that is costly to evaluate even
 * when short (JSON_VALUE's parse of its text starts a subtransaction).
 */
export function bindAlways(value: string, body: (v: string) => string): string {
  if (WINDOW.test(value)) return body(value);
  return bindOnceIn(value, body, { ...POSTGRES_ONCE, inlineChars: 0 });
}
