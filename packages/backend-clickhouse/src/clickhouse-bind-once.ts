import { bindOnce as bindOnceIn, type OnceBinding } from "@qes/core";

/**
 * A value ClickHouse evaluates once inside an expression (core's bindOnce): the time arithmetic
 * names its value up to eight times, so a truncation of a truncation (a time zone's TIMESTAMP_TRUNC
 * of one) grew the query past ClickHouse's 50,000-node AST limit, a 4xx "too large", and three
 * levels in a zone to 5 MB of SQL. A short value (a column) is repeated: no array per row.
 */
const CLICKHOUSE_ONCE: OnceBinding = {
  inlineChars: 200,
  bind: (name, value, body) => `arrayElement(arrayMap(${name} -> ${body}, [${value}]), 1)`,
  // a subquery naming the lambda's parameter would be correlated, which ClickHouse does not run
  holds: (body) => !/\bselect\b/i.test(body),
};

/** `body` of `value`, `value` evaluated and written once */
export function bindOnce(value: string, body: (v: string) => string): string {
  return bindOnceIn(value, body, CLICKHOUSE_ONCE);
}
