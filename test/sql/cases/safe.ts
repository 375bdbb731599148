import { type SqlCase, us } from "./case.ts";

// BigQuery's SAFE. prefix ("Function calls": SAFE. prefix): a scalar function whose own errors
// are NULL instead; its arguments' errors still raise; aggregates, window functions and anything
// outside the catalogue are refused as without the prefix.

export const safeCases: SqlCase[] = [
  {
    name: "SAFE.PARSE_TIMESTAMP of text that does not match is NULL",
    rule: "BigQuery SAFE. prefix: SAFE.PARSE_TIMESTAMP returns NULL where PARSE_TIMESTAMP raises; text that parses is the time",
    sql: "select safe.parse_timestamp('%Y-%m-%d', 'junk') as bad, SAFE.PARSE_TIMESTAMP('%Y-%m-%d %H:%M:%S', '2025-01-15 10:00:00') as good",
    expect: [{ bad: null, good: us("2025-01-15T10:00:00Z") }],
  },
  {
    name: "SAFE.PARSE_TIMESTAMP row by row",
    rule: "BigQuery SAFE. prefix: each row that would raise is NULL, the others parse (an offset in the text included)",
    sql: "select t, safe.parse_timestamp('%Y-%m-%d %H:%M:%S%Ez', t) as ts from unnest(['2025-01-15 10:00:00+01:00', 'junk', '2025-01-15 10:00:00']) t",
    expect: [
      { t: "2025-01-15 10:00:00+01:00", ts: us("2025-01-15T09:00:00Z") },
      { t: "junk", ts: null },
      { t: "2025-01-15 10:00:00", ts: null },
    ],
  },
  {
    name: "SAFE.PARSE_TIMESTAMP of a day that does not exist is NULL",
    rule: "BigQuery SAFE. prefix: PARSE_TIMESTAMP raises on an out-of-range field (PostgreSQL's to_timestamp raised through SAFE.)",
    sql: "select safe.parse_timestamp('%Y-%m-%d', '2025-02-30') as feb30, safe.parse_timestamp('%Y-%m-%d %H:%M', '2025-13-01 10:00') as month13, safe.parse_timestamp('%Y-%m-%d', '2025-02-28') as good",
    expect: [{ feb30: null, month13: null, good: us("2025-02-28T00:00:00Z") }],
  },
  {
    name: "SAFE.TIMESTAMP_MILLIS outside TIMESTAMP's range is NULL",
    rule: "BigQuery SAFE. prefix over TIMESTAMP_MILLIS (an error outside TIMESTAMP's range)",
    sql: "select ms, safe.timestamp_millis(ms) as ts from unnest([1736935200000, 253402300800000, -62135596800001]) ms",
    expect: [
      { ms: 1736935200000, ts: us("2025-01-15T10:00:00Z") },
      { ms: 253402300800000, ts: null },
      { ms: -62135596800001, ts: null },
    ],
  },
  {
    name: "SAFE. math: a domain error is NULL",
    rule: "BigQuery SAFE. prefix: SQRT of a negative, LN and LOG10 of 0, POW(0, -1) raise without it",
    sql: "select safe.sqrt(-1) as s, safe.sqrt(4) as s4, safe.ln(0) as l, safe.log10(x) as l10, safe.pow(0, -1) as p from unnest([0]) x",
    expect: [{ s: null, s4: 2, l: null, l10: null, p: null }],
  },
  {
    name: "SAFE.DIV and SAFE.MOD by zero are NULL",
    rule: "BigQuery SAFE. prefix: DIV and MOD raise division by zero without it",
    sql: "select safe.div(7, y) as d, safe.mod(7, y) as m, safe.div(7, 2) as d2 from unnest([0]) y",
    expect: [{ d: null, m: null, d2: 3 }],
  },
  {
    name: "SAFE.SUBSTR with a negative length is NULL",
    rule: "BigQuery SAFE. prefix: SUBSTR raises for a negative length without it",
    sql: "select safe.substr('abc', 0, -1) as a, safe.substr('abc', 2, n) as b, safe.substr('abc', 2) as c from unnest([-1]) n",
    expect: [{ a: null, b: null, c: "bc" }],
  },
  {
    name: "SAFE.DATE of a day that does not exist is NULL",
    rule: "BigQuery SAFE. prefix: DATE(year, month, day) raises for no such day without it (DuckDB's and PostgreSQL's make_date raised in their own words)",
    sql: "select d, safe.date(2024, 2, d) as a, safe.date(2025, 2, d) as b, safe.date(2025, 13, 1) as c from unnest([29]) d",
    expect: [{ d: 29, a: "2024-02-29", b: null, c: null }],
  },
  {
    name: "SAFE.TIMESTAMP of text that is no timestamp is NULL",
    rule: "BigQuery SAFE. prefix: TIMESTAMP(string) raises for text that is no timestamp without it (each engine's own cast raised)",
    sql: "select s, safe.timestamp(s) as t, safe.timestamp(s, 'America/New_York') as ny from unnest(['2025-01-15 10:00:00', 'junk', '2025-02-30 00:00:00', '2025-01-15 10:00:00+01']) s",
    expect: [
      { s: "2025-01-15 10:00:00", t: us("2025-01-15T10:00:00Z"), ny: us("2025-01-15T15:00:00Z") },
      { s: "junk", t: null, ny: null },
      { s: "2025-02-30 00:00:00", t: null, ny: null },
      { s: "2025-01-15 10:00:00+01", t: us("2025-01-15T09:00:00Z"), ny: us("2025-01-15T09:00:00Z") },
    ],
  },
  {
    name: "SAFE. of a function that raises nothing",
    rule: "BigQuery SAFE. prefix: the function's own answer where it does not raise",
    sql: "select safe.upper('a') as u, SAFE.CONCAT('a', 'b') as c, safe.length(null) as n",
    expect: [{ u: "A", c: "ab", n: null }],
  },
  {
    name: "SAFE. leaves the errors of its arguments",
    rule: "BigQuery SAFE. prefix: only the prefixed function's own errors are NULL, not those of its argument expressions",
    sql: "select safe.ln(sqrt(x)) as a from unnest([-1.0]) x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE. leaves the errors of an INTERVAL argument",
    rule: "BigQuery SAFE. prefix: an error in an argument expression (DIV by zero in the INTERVAL) still raises, also where a dialect writes the argument inside the function's own SQL",
    sql: "select safe.timestamp_add(timestamp '2025-01-15 00:00:00', interval div(1, x) day) as a from unnest([0]) x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE. of an engine function outside the catalogue is refused",
    rule: "DESIGN.md §5 sandbox: only catalogue functions are callable, with or without SAFE.",
    sql: "select safe.pg_sleep(1) as a",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE. of a table-reading engine function is refused",
    rule: "DESIGN.md §5 sandbox: only catalogue functions are callable, with or without SAFE.",
    sql: "select safe.read_csv('/etc/passwd') as a",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE. of an unknown function is refused",
    rule: "BigQuery SAFE. prefix: the function must exist",
    sql: "select safe.nonexistent(1) as a",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE.COUNT(*) is refused",
    rule: "BigQuery SAFE. prefix: not supported for aggregate functions",
    sql: "select safe.count(*) as n, SAFE.COUNT(distinct x) as d from unnest([1, 2]) x",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE.SUM is refused",
    rule: "BigQuery SAFE. prefix: not supported for aggregate functions",
    sql: "select safe.sum(x) as n from unnest([1, 2]) x",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE. of a window function is refused",
    rule: "BigQuery SAFE. prefix: not supported for window functions",
    sql: "select safe.row_number() over (order by x) as n from unnest([1, 2]) x",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE.SAFE. is refused",
    rule: "BigQuery SAFE. prefix: it prefixes a function name once",
    sql: "select SAFE.SAFE.UPPER('a') as u",
    expect: { error: "function_not_allowed" },
  },
  {
    name: "SAFE. of qes' internal functions is refused",
    rule: "DESIGN.md §5 sandbox: names reserved for the compiler are not callable, with or without SAFE.",
    sql: "select SAFE.__qes_float('1') as x",
    // refused before any function is looked up, as without SAFE. (sql_invalid: a reserved name)
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE.PARSE_TIMESTAMP of a format of thirty %E*S over 200 digits is NULL, not a slow regular expression",
    rule: "BigQuery SAFE.PARSE_TIMESTAMP: text the format cannot read gives NULL",
    sql: `select SAFE.PARSE_TIMESTAMP('${"%E*S".repeat(30)}', '${"1".repeat(200)}') as t, PARSE_TIMESTAMP('%Y%m%d', '20250115') as ok`,
    expect: [{ t: null, ok: us("2025-01-15T00:00:00Z") }],
  },
  // the engines raised these themselves, through SAFE.: DuckDB's and PostgreSQL's INT64 overflow of
  // ABS, PostgreSQL's FLOAT64 overflow of EXP and POW
  {
    name: "SAFE.ABS of INT64's least value is NULL; other values are their absolute value",
    rule: "BigQuery ABS: an error if X is INT64's least value (its absolute value does not fit); SAFE. makes it NULL",
    sql: "select x, safe.abs(x) as a from unnest([-9223372036854775807 - 1, -9223372036854775807, -5, 0]) x",
    expect: [
      { x: "-9223372036854775808", a: null },
      { x: "-9223372036854775807", a: "9223372036854775807" },
      { x: -5, a: 5 },
      { x: 0, a: 0 },
    ],
  },
  {
    name: "ABS of INT64's least value raises",
    rule: "BigQuery ABS: an error if X is INT64's least value",
    sql: "select abs(x) as a from unnest([-9223372036854775807 - 1]) x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE.EXP and SAFE.POW past FLOAT64's range are NULL; at its edge, NaN and infinities they are values",
    rule: "BigQuery EXP and POW: an error if the result overflows; SAFE. makes it NULL. NaN in, NaN out; infinities as IEEE",
    sql:
      "select safe.exp(1000) as e1, safe.exp(709.782712893384) as e2, safe.exp(cast('nan' as float64)) as e3, " +
      "safe.exp(cast('inf' as float64)) as e4, safe.pow(10, 400) as p1, safe.pow(-10, 309) as p2, " +
      "safe.pow(cast('nan' as float64), 2) as p3, safe.pow(2, cast('inf' as float64)) as p4, safe.pow(10, -400) as p5",
    expect: [
      {
        e1: null,
        e2: 1.7976931348622732e308,
        e3: "NaN",
        e4: "Infinity",
        p1: null,
        p2: null,
        p3: "NaN",
        p4: "Infinity",
        p5: 0,
      },
    ],
  },
  {
    name: "EXP past FLOAT64's range raises",
    rule: "BigQuery EXP: an error if the result overflows",
    sql: "select exp(x) as a from unnest([710.0]) x",
    expect: { error: "sql_invalid" },
  },
];
