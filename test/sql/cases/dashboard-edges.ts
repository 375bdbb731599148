import { EDGE, type SqlCase, us } from "./case.ts";

// Edges of BigQuery's semantics where a probe of dashboard-style SQL found the three backends
// answering differently (the probe of ./dashboard-diff.ts, second round). Expected rows and errors
// are BigQuery's, from its documentation.

const FLOAT_OVERFLOW = /floating point overflow/;

export const dashboardEdgeCases: SqlCase[] = [
  // ---------------------------------------------------------------- FLOAT64 overflow
  {
    name: "a FLOAT64 product past the range raises floating point overflow",
    rule: "BigQuery operators: all operators throw an error if the result overflows; ±inf and NaN only come from an operand that is one (DuckDB and ClickHouse answered Infinity)",
    sql: "select 1e308 * 10 as a",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "a FLOAT64 sum, difference and quotient past the range raise",
    rule: "BigQuery operators: an overflow of + - / is an error (DuckDB and ClickHouse answered ±Infinity)",
    sql: "select x + x as a, x - (-x) as b, x / 1e-10 as c from unnest([1.7e308]) as x",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "an overflow inside a divisor raises, though the quotient is finite",
    rule: "BigQuery operators: the overflow of x * 10 is the error, whatever 1 / inf would be (0)",
    sql: "select 1 / (x * 10) as a, (x * 10) - (x * 10) as b from unnest([1e308]) as x",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "a scaled event field past the range raises",
    rule: "BigQuery operators: an overflow of a column's arithmetic is an error (DuckDB and ClickHouse charted Infinity)",
    sql: `select id, m.request.cf.latitude * 1e307 as scaled from ${EDGE} cross join unnest(metadata) as m where id = 'e01'`,
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "SUM and AVG of FLOAT64 values whose total is past the range raise",
    rule: "BigQuery SUM / AVG: if there is numeric overflow, produces an error (DuckDB and ClickHouse answered Infinity)",
    sql: "select sum(x) as s from unnest([1.7e308, 1.7e308]) as x",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "AVG of FLOAT64 values whose total is past the range raises",
    rule: "BigQuery AVG: if there is numeric overflow, produces an error",
    sql: "select avg(x) as a from unnest([1.7e308, 1.7e308]) as x",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "a windowed SUM past the range raises",
    rule: "BigQuery SUM as a window function: numeric overflow is an error",
    sql: "select sum(x) over () as s from unnest([1.7e308, 1.7e308]) as x",
    expect: { error: "sql_invalid", message: FLOAT_OVERFLOW },
  },
  {
    name: "arithmetic of an infinite operand, and SUM or AVG of an infinite value, answer ±inf or NaN",
    rule: "BigQuery operators: +/-inf and NaN may be returned when an operand is ±inf or NaN; SUM/AVG: an ±Infinity value gives ±Infinity or NaN",
    sql: "select x * 10 as a, x - x as b, -x + 1 as c, sum(x) over () as s, avg(y) over () as v from unnest([cast('inf' as float64)]) as x cross join unnest([1.0, 2.0, cast('-inf' as float64)]) as y",
    expect: [
      { a: "Infinity", b: "NaN", c: "-Infinity", s: "Infinity", v: "-Infinity" },
      { a: "Infinity", b: "NaN", c: "-Infinity", s: "Infinity", v: "-Infinity" },
      { a: "Infinity", b: "NaN", c: "-Infinity", s: "Infinity", v: "-Infinity" },
    ],
  },
  {
    name: "FLOAT64 arithmetic and sums within the range answer as before",
    rule: "BigQuery operators and SUM/AVG: FLOAT64 arithmetic; an INT64 quotient is FLOAT64",
    sql: `select round(sum(m.request.cf.latitude * 2 - 1), 4) as s, round(avg(m.response.origin_time / 2), 3) as a, 7 / 2 * 3 as q, max(1.7e308 + x) as big from ${EDGE} cross join unnest(metadata) as m cross join unnest([0.0]) as x where id in ('e01', 'e02')`,
    expect: [{ s: 178.5898, a: 13, q: 10.5, big: 1.7e308 }],
  },
  {
    name: "SAFE_DIVIDE of a quotient past the range is NULL",
    rule: "BigQuery SAFE_DIVIDE: equivalent to the division operator, but returns NULL if an error occurs (DuckDB and ClickHouse answered Infinity, PostgreSQL raised)",
    sql: "select safe_divide(x, 1e-10) as a, safe_divide(x, 2) as b, safe_divide(cast('inf' as float64), 1e-10) as c, safe_divide(-x, 0.5) as d from unnest([1e308]) as x",
    expect: [{ a: null, b: 5e307, c: "Infinity", d: null }],
  },
  // ---------------------------------------------------------------- REGEXP_REPLACE and empty matches
  {
    name: "REGEXP_REPLACE skips an empty match where the previous match ended",
    rule: "BigQuery REGEXP_REPLACE replaces as RE2's GlobalReplace (ZetaSQL RegExp::Replace): an empty match right after a match is not replaced (PostgreSQL and ClickHouse gave xx, -b--c-, [ab][])",
    sql: "select regexp_replace('aaa', 'a*', 'x') as a, regexp_replace('baaac', 'a*', '-') as b, regexp_replace('abab', '(ab)*', '[\\\\1]') as c, regexp_replace('a.b', r'\\.?', '-') as d, regexp_replace('xaay', 'a|', '-') as e, regexp_replace('a\\nb', 'a*', '<\\\\0>') as f",
    expect: [{ a: "x", b: "-b-c-", c: "[ab]", d: "-a-b-", e: "-x--y-", f: "<a>\n<>b<>" }],
  },
  {
    name: "REGEXP_REPLACE of a pattern matching only the empty string replaces at every gap",
    rule: "BigQuery REGEXP_REPLACE (RE2 GlobalReplace): an empty match at each character boundary and at the end; ^ and $ once",
    sql: "select regexp_replace('abc', '', '-') as a, regexp_replace('abc', 'x*', '-') as b, regexp_replace('', 'a*', '-') as c, regexp_replace('a b', r'\\b', '|') as d, regexp_replace('abc', '$', '!') as e, regexp_replace('abc', '^', '!') as f, regexp_replace('aaa', 'a*?', 'x') as g",
    expect: [{ a: "-a-b-c-", b: "-a-b-c-", c: "-", d: "|a| |b|", e: "abc!", f: "!abc", g: "xaxaxax" }],
  },
  {
    name: "REGEXP_REPLACE with a pattern from each row skips the same empty matches",
    rule: "BigQuery REGEXP_REPLACE (RE2 GlobalReplace) with a computed pattern",
    sql: "select x, y, regexp_replace(x, y, 'x') as r from unnest(['aaa', 'bab']) as x cross join unnest(['a*', 'b']) as y order by x, y",
    expect: [
      { x: "aaa", y: "a*", r: "x" },
      { x: "aaa", y: "b", r: "aaa" },
      { x: "bab", y: "a*", r: "xbxbx" },
      { x: "bab", y: "b", r: "xax" },
    ],
  },
  {
    name: "REGEXP_REPLACE of a path pattern that cannot match empty is unchanged",
    rule: "BigQuery REGEXP_REPLACE: every non-overlapping match replaced",
    sql: `select regexp_replace(m.request.path, r'/[0-9a-z]+$', '/:x') as p from ${EDGE} cross join unnest(metadata) as m where id = 'e01'`,
    expect: [{ p: "/rest/v1/:x" }],
  },
  // ---------------------------------------------------------------- REGEXP_EXTRACT and groups that took no part
  {
    name: "REGEXP_EXTRACT of a capturing group that took no part in the match is NULL",
    rule: "BigQuery REGEXP_EXTRACT (ZetaSQL RegExp::Extract): a group RE2 leaves unset gives NULL, one that captured nothing '' (DuckDB and ClickHouse gave '' for both)",
    sql: "select regexp_extract('ab', 'a(x)?b') as a, regexp_extract('ab', 'a(x*)b') as b, regexp_extract('ab', 'a(x)|b') as c, regexp_extract('zz', 'a(x)?b') as d, regexp_extract('ab', '(a)|b') as e, regexp_extract('ab', '(?i)A(X)?B') as f, regexp_extract('a(b', r'\\((b)') as g",
    expect: [{ a: null, b: "", c: null, d: null, e: "a", f: null, g: "b" }],
  },
  {
    name: "REGEXP_EXTRACT of an optional port in a host header is NULL without one",
    rule: "BigQuery REGEXP_EXTRACT: an optional group that did not match is NULL, so COALESCE can default it (DuckDB and ClickHouse gave '')",
    sql: `select coalesce(regexp_extract(m.request.host, r'^[a-z.]+(?::([0-9]+))?$'), 'default') as port from ${EDGE} cross join unnest(metadata) as m where id = 'e01'`,
    expect: [{ port: "default" }],
  },
  // ---------------------------------------------------------------- time text with more than six fraction digits
  {
    name: "CAST of text with seven fraction digits to TIMESTAMP is an error",
    rule: "BigQuery CAST to TIMESTAMP: the subsecond part is at most microseconds; extra digits are an error (ZetaSQL ParseStringToDatetimeParts; PostgreSQL rounded, DuckDB and ClickHouse cut)",
    sql: "select cast(x as timestamp) as t from unnest(['2020-01-01 00:00:00.9999995']) as x",
    expect: { error: "sql_invalid", message: /six fraction digits/ },
  },
  {
    name: "CAST of text with seven fraction digits to DATETIME, and TIMESTAMP() of it, are errors",
    rule: "BigQuery CAST to DATETIME and TIMESTAMP(string): extra subsecond digits are an error",
    sql: "select cast('2020-01-01 00:00:00.1234567' as datetime) as a, timestamp('2020-01-01 00:00:00.1234567') as b",
    expect: { error: "sql_invalid", message: /six fraction digits/ },
  },
  {
    name: "a TIMESTAMP or DATETIME literal with seven fraction digits is an error, in a comparison too",
    rule: "BigQuery timestamp and datetime literals: [.F] is up to six fractional digits; more is an invalid literal (it was cut to microseconds, a time other than the one written)",
    sql: "select timestamp '2020-01-01 00:00:00.1234567' as a",
    expect: { error: "sql_invalid", message: /six fraction digits/ },
  },
  {
    name: "a DATETIME literal with seven fraction digits is an error",
    rule: "BigQuery datetime literals: [.F] is up to six fractional digits",
    sql: "select datetime '2020-01-01T00:00:00.0000001' as a",
    expect: { error: "sql_invalid", message: /six fraction digits/ },
  },
  {
    name: "a string literal with seven fraction digits compared with a TIMESTAMP is an error; six compare",
    rule: "BigQuery literal coercion: a string literal compared with a TIMESTAMP is a TIMESTAMP literal, up to six fractional digits",
    sql: `select count(*) as n from ${EDGE} where timestamp > '2020-01-01 00:00:00.0000001'`,
    expect: { error: "sql_invalid", message: /six fraction digits/ },
  },
  {
    name: "SAFE_CAST and SAFE.TIMESTAMP of text with seven fraction digits are NULL; six are kept",
    rule: "BigQuery SAFE_CAST / SAFE. prefix: NULL where the conversion would raise",
    sql: "select safe_cast('2020-01-01 00:00:00.1234567' as timestamp) as a, safe_cast('2020-01-01T00:00:00.9999999' as datetime) as b, safe.timestamp('2020-01-01 00:00:00.1234567') as c, safe_cast('2020-01-01 00:00:00.123456' as timestamp) as d, safe_cast('2020-01-01 00:00:00.123456+01:00' as timestamp) as e, cast('2020-01-01T00:00:00.5' as datetime) as f",
    expect: [
      {
        a: null,
        b: null,
        c: null,
        d: us("2020-01-01T00:00:00.123456Z"),
        e: us("2019-12-31T23:00:00.123456Z"),
        f: "2020-01-01T00:00:00.500000",
      },
    ],
  },
  // ---------------------------------------------------------------- RANGE frames of unix microseconds
  {
    name: "a RANGE frame of an hour of microseconds counts the same rows on every backend",
    rule: "BigQuery window frame: RANGE n PRECEDING covers keys within n of the current one; over unix microseconds an hour is 3600000000, past ClickHouse's 32-bit offsets (it refused the query)",
    sql: `select id, count(*) over (order by unix_micros(timestamp) range between 3600000000 preceding and current row) as last_hour, count(*) over (partition by project order by unix_micros(timestamp) desc range between 86400000000 preceding and 1800000000 following) as around from ${EDGE} where id <= 'e06' order by id`,
    expect: [
      { id: "e01", last_hour: 1, around: 5 },
      { id: "e02", last_hour: 2, around: 5 },
      { id: "e03", last_hour: 3, around: 3 },
      { id: "e04", last_hour: 4, around: 3 },
      { id: "e05", last_hour: 5, around: 3 },
      { id: "e06", last_hour: 4, around: 1 },
    ],
  },
];
