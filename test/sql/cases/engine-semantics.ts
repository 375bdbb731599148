import { EDGE, PG, REST, type SqlCase, us } from "./case.ts";

const RESP = `${EDGE}, unnest(metadata) m, unnest(m.response) r`;
const REQ = `${EDGE}, unnest(metadata) m, unnest(m.request) q`;
/** BigQuery's arithmetic operators: "If an overflow occurs, an error is produced" (INT64 is 64-bit signed). */
const OVERFLOW = "BigQuery arithmetic operators on INT64: an overflow is an error, never a wrapped value";

// BigQuery semantics where an engine's defaults differ (ClickHouse's above all: unsigned counts,
// backslash escapes in literals, byte-wise string functions, defaults instead of NULLs in outer
// joins and window edges, NULLs skipped by IN). Each expected row is BigQuery's documented answer.

export const engineSemanticsCases: SqlCase[] = [
  {
    name: "a chain of 5,000 || concatenations",
    rule: "BigQuery || is CONCAT; README limits: a chain of || counts as one level, however long (DuckDB's expression depth is 1,000, PostgreSQL's stack shorter)",
    sql: `select length(${Array.from({ length: 5000 }, (_, i) => (i % 2 ? "id" : "'x'")).join(" || ")}) as n from ${REST} where id = 't01'`,
    expect: [{ n: 2500 + 2500 * 3 }],
  },
  {
    name: "a count minus a larger number is negative",
    rule: "BigQuery COUNT returns INT64 (signed); arithmetic on it is INT64 arithmetic",
    sql: `select count(*) - 100 as d, -count(*) as neg, count(*) * -2 as twice, 1 - count(*) as one from ${PG}`,
    expect: [{ d: -90, neg: -10, twice: -20, one: -9 }],
  },
  {
    name: "DIV and MOD of sums",
    rule: "BigQuery DIV(X, Y) and MOD(X, Y) take whole expressions as arguments",
    sql: "select mod(5 + 1, 4) as m, div(7 + 1, 2) as d, mod(7, 2 + 1) as m2, div(9, 1 + 2) as d2, div(-7 - 1, 3) as d3",
    expect: [{ m: 2, d: 4, m2: 1, d2: 3, d3: -2 }],
  },
  {
    name: "TIMESTAMP_MILLIS and TIMESTAMP_SECONDS of sums",
    rule: "BigQuery TIMESTAMP_MILLIS(INT64) / TIMESTAMP_SECONDS(INT64) take whole expressions as arguments",
    sql: "select timestamp_millis(1000 + 1000) as a, timestamp_seconds(1 + 1) as b, timestamp_micros(1 + 1) as c",
    expect: [{ a: 2000000, b: 2000000, c: 2 }],
  },
  {
    name: "INT64 sums as arguments: interval amounts, positions, offsets",
    rule: "BigQuery: any INT64 expression may be an INTERVAL amount, a SUBSTR position, a ROUND digit count or a LAG offset",
    sql: "select x, timestamp_add(timestamp '2025-01-15 10:00:00+00', interval 1 + 1 hour) as t, date_add(date '2025-01-15', interval 2 * 1 day) as d, substr('abcdef', 1 + 1, 1 + 1) as s, round(1.234, 1 + 1) as r, lag(x, 2 - 1) over (order by x) as lg from unnest([1, 2]) as x order by x",
    expect: [
      { x: 1, t: us("2025-01-15T12:00:00Z"), d: "2025-01-17", s: "bc", r: 1.23, lg: null },
      { x: 2, t: us("2025-01-15T12:00:00Z"), d: "2025-01-17", s: "bc", r: 1.23, lg: 1 },
    ],
  },
  {
    name: "DIV and MOD of a count",
    rule: "BigQuery DIV and MOD on INT64",
    sql: `select div(count(*), 2) as d, mod(count(*), 2) as m from ${REST}`,
    expect: [{ d: 1, m: 1 }],
  },
  {
    name: "a string literal with an escaped quote and backslash",
    rule: "BigQuery string literals: \\' is a quote, \\\\ a backslash; a raw string keeps its backslashes",
    sql: String.raw`select 'it\'s a \\ path' as s, length('a\\b') as n, r'a\b' as raw, concat('a\\', 'b') as c`,
    expect: [{ s: "it's a \\ path", n: 3, raw: "a\\b", c: "a\\b" }],
  },
  {
    name: "UTF-8 text is counted, cut and searched by character",
    rule: "BigQuery string functions count characters of STRING, not bytes",
    sql: `select length('héllo') as n, substr('héllo', 2, 3) as s, reverse('héllo') as r, strpos('héllo', 'l') as p, left('héllo', 2) as l, right('héllo', 2) as rt, 'héllo' like 'h_llo' as lk`,
    expect: [{ n: 5, s: "éll", r: "olléh", p: 3, l: "hé", rt: "lo", lk: true }],
  },
  {
    name: "aggregates over no rows are NULL, counts are 0",
    rule: "BigQuery aggregate functions: NULL for an empty input, except COUNT and COUNTIF (0)",
    sql: `select sum(length(id)) as s, min(id) as mi, max(timestamp) as ma, avg(length(id)) as a, count(*) as c, countif(true) as ci, logical_or(true) as lo from ${REST} where id = 'none'`,
    expect: [{ s: null, mi: null, ma: null, a: null, c: 0, ci: 0, lo: null }],
  },
  {
    name: "an outer join's missing side is NULL in every type",
    rule: "BigQuery LEFT OUTER JOIN: columns of the unmatched side are NULL",
    sql: `select e.id, r.id as rid, length(r.id) as n, r.timestamp as t, r.id is null as missing from ${EDGE} as e left join ${REST} as r on r.project = e.project where e.id = 'e10'`,
    expect: [{ id: "e10", rid: null, n: null, t: null, missing: true }],
  },
  {
    name: "IN a list holding NULL is NULL when nothing matches",
    rule: "BigQuery IN: x IN (…, NULL) is NULL unless x equals an element; NOT IN likewise",
    sql: "select 1 in (2, null) as a, 1 in (1, null) as b, 1 not in (2, null) as c, cast(null as int64) in (1, 2) as d",
    expect: [{ a: null, b: true, c: null, d: null }],
  },
  {
    name: "NOT IN a list holding NULL keeps no row",
    rule: "BigQuery NOT IN with a NULL element is never TRUE",
    sql: `select count(*) as n from ${REST} where project not in ('zzz', null)`,
    expect: [{ n: 0 }],
  },
  {
    name: "LAG before the first row and LEAD after the last are NULL",
    rule: "BigQuery LAG/LEAD: NULL beyond the partition without a default",
    sql: `select id, lag(length(id)) over (order by id) as prev, lead(length(id)) over (order by id) as next from ${REST} order by id`,
    expect: [
      { id: "t01", prev: null, next: 3 },
      { id: "t02", prev: 3, next: 3 },
      { id: "t03", prev: 3, next: null },
    ],
  },
  {
    name: "microseconds survive timestamp arithmetic and truncation",
    rule: "BigQuery TIMESTAMP has microsecond precision",
    sql: "select timestamp_add(timestamp '2025-01-15 10:00:00.000001', interval 1 microsecond) as t, timestamp_trunc(timestamp '2025-01-15 10:59:59.999999', minute) as m, unix_micros(timestamp '2025-01-15 10:00:00.123456') as u",
    expect: [
      {
        t: us("2025-01-15T10:00:00.000002Z"),
        m: us("2025-01-15T10:59:00Z"),
        u: us("2025-01-15T10:00:00.123456Z"),
      },
    ],
  },
  {
    name: "a result column named like a column of the table",
    rule: "BigQuery name resolution: WHERE sees the table's column, not the SELECT alias",
    sql: `select upper(project) as project from ${REST} where project = 'alpha'`,
    expect: [{ project: "ALPHA" }, { project: "ALPHA" }],
  },

  // ---------------------------------------------------------------- INT64 overflow
  {
    name: "INT64 addition that overflows is an error",
    rule: OVERFLOW,
    sql: `select r.status_code + 9223372036854775807 as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "INT64 subtraction that overflows is an error",
    rule: OVERFLOW,
    sql: `select -9223372036854775807 - r.status_code as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "INT64 multiplication that overflows is an error",
    rule: OVERFLOW,
    sql: `select r.status_code * 4611686018427387904 as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a literal INT64 sum that overflows is an error",
    rule: OVERFLOW,
    sql: "select 9223372036854775807 + 1 as x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "negating the smallest INT64 is an error",
    rule: "BigQuery unary minus on INT64: -(-2^63) overflows, an error",
    sql: `select -(r.status_code - 200 - 9223372036854775807 - 1) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "ABS of the smallest INT64 is an error",
    rule: "BigQuery ABS: an error if the argument is an integer and the output value cannot be represented as the same type (only the largest negative input)",
    sql: `select abs(r.status_code - 200 - 9223372036854775807 - 1) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an INT64 SUM that overflows is an error",
    rule: "BigQuery SUM of INT64: an error if the result overflows",
    sql: `select sum(r.status_code + 9223372036854775000) as s from ${RESP}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of out-of-range text to INT64 is an error",
    rule: "BigQuery CAST AS INT64 from STRING: a value outside INT64's range is an error",
    sql: `select cast(concat('922337203685477580', cast(r.status_code - 192 as string)) as int64) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of an out-of-range FLOAT64 to INT64 is an error",
    rule: "BigQuery CAST AS INT64 from FLOAT64: a value outside INT64's range is an error",
    sql: `select cast(r.status_code * 1e17 as int64) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE_CAST of out-of-range values to INT64 is NULL",
    rule: "BigQuery SAFE_CAST: NULL where CAST would raise (out of range included)",
    sql: "select safe_cast('9223372036854775808' as int64) as a, safe_cast('-9223372036854775809' as int64) as b, safe_cast(1e19 as int64) as c, safe_cast('-9223372036854775808' as int64) as d",
    expect: [{ a: null, b: null, c: null, d: "-9223372036854775808" }],
  },
  {
    name: "a bare NULL as a function's argument",
    rule: "BigQuery: a bare NULL literal is a NULL of the type the call needs (INT64 by default); SUM(NULL), TIMESTAMP_MICROS(NULL), -NULL are NULL",
    sql: "select sum(null) as a, avg(null) as b, timestamp_micros(null) as c, unix_micros(null) as d, timestamp_add(null, interval 1 day) as e, -null as f, first_value(null) over () as g, format_timestamp('%Y', null) as h from unnest([1]) x",
    expect: [{ a: null, b: null, c: null, d: null, e: null, f: null, g: null, h: null }],
  },
  {
    name: "CASE x WHEN NULL never matches",
    rule: "BigQuery CASE expr WHEN value: compares with =, and NULL = NULL is not TRUE (ClickHouse's CASE found NULL equal to NULL)",
    sql: "select case null when null then 1 else 2 end as a, case cast(null as string) when 'x' then 1 end as b",
    expect: [{ a: 2, b: null }],
  },
  {
    name: "a decimal literal is a FLOAT64",
    rule: "BigQuery numeric literals: 0.1 is FLOAT64, so 0.1 + 0.2 is 0.30000000000000004, not 0.3 (DuckDB's DECIMAL, PostgreSQL's numeric)",
    sql: "select cast(0.1 + 0.2 as string) as a, 0.1 + 0.2 = 0.3 as b, 1.5 * 2 as c",
    expect: [{ a: "0.30000000000000004", b: false, c: 3 }],
  },
  {
    name: "CAST of a computed FLOAT64 halfway value to INT64 rounds away from zero",
    rule: "BigQuery CAST AS INT64 from FLOAT64: the closest integer, halfway cases away from zero (DuckDB's cast of a DOUBLE rounds them to even)",
    sql: `select cast(r.status_code / 400 as int64) as a, cast(r.status_code / 80 as int64) as b, safe_cast(-r.status_code / 80 as int64) as c from ${RESP} where id = 'e01'`,
    expect: [{ a: 1, b: 3, c: -3 }],
  },
  {
    name: "negating INT64's least literal overflows",
    rule: "BigQuery arithmetic on INT64: an overflow is an error (ClickHouse wrapped -(-2^63) to -2^63)",
    sql: "select -(-9223372036854775808) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "the literal -9223372036854775808 is INT64's least value",
    rule: "BigQuery integer literals: -9223372036854775808 is a valid INT64 (its digits alone are not)",
    sql: "select -9223372036854775808 as a, -9223372036854775808 + 1 as b, -9223372036854775808 < 0 as c",
    expect: [{ a: "-9223372036854775808", b: "-9223372036854775807", c: true }],
  },
  {
    name: "INT64 arithmetic at the edges of the range is exact",
    rule: "BigQuery INT64: -2^63 … 2^63-1; DESIGN.md §4 (a string beyond ±2^53)",
    sql: `select r.status_code + 9223372036854775607 as a, -9223372036854775607 - r.status_code - 1 as b, 3037000499 * (r.status_code - 200 + 3037000499) as c, abs(-9223372036854775607 - r.status_code) as d, -(r.status_code - 200 - 9223372036854775807) as e, cast('-9223372036854775808' as int64) as f from ${RESP} where id = 'e01'`,
    expect: [
      {
        a: "9223372036854775807",
        b: "-9223372036854775808",
        c: "9223372030926249001",
        d: "9223372036854775807",
        e: "9223372036854775807",
        f: "-9223372036854775808",
      },
    ],
  },
  {
    name: "an INT64 SUM near the top of the range is exact",
    rule: "BigQuery SUM of INT64",
    sql: `select sum(if(id = 'e01', 9223372036854775000, r.status_code - 200)) as s from ${RESP} where id in ('e01', 'e02', 'e03')`,
    expect: [{ s: "9223372036854775202" }],
  },

  // ---------------------------------------------------------------- NULL arrays
  {
    name: "SPLIT of NULL is a NULL array",
    rule: "BigQuery SPLIT: NULL input gives NULL; ARRAY_LENGTH(NULL) is NULL; a NULL array is written as [] in results",
    sql: "select split(cast(null as string)) is null as a, array_length(split(cast(null as string), ',')) as b, split(cast(null as string)) as c, split('x') is null as d",
    expect: [{ a: true, b: null, c: [], d: false }],
  },
  {
    name: "SPLIT of a field that is NULL on some rows",
    rule: "BigQuery SPLIT: NULL input gives NULL; ARRAY_LENGTH(NULL) is NULL",
    sql: `select id, array_length(split(q.search, '=')) as n, split(q.search, '=') is null as missing from ${REQ} where id in ('e01', 'e03') order by id`,
    expect: [
      { id: "e01", n: 2, missing: false },
      { id: "e03", n: null, missing: true },
    ],
  },

  // ---------------------------------------------------------------- impossible dates
  {
    name: "CAST of an impossible day to DATE is an error",
    rule: "BigQuery CAST AS DATE: the text must be a valid date (no 2025-02-30), else an error",
    sql: "select cast('2025-02-30' as date) as d",
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of a computed impossible day to DATE is an error",
    rule: "BigQuery CAST AS DATE: the text must be a valid date, else an error",
    sql: `select cast(concat('2025-02-', cast(length(id) * 10 as string)) as date) as d from ${EDGE} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of month 13 to DATE is an error",
    rule: "BigQuery CAST AS DATE: the text must be a valid date, else an error",
    sql: "select cast('2025-13-01' as date) as d",
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of an impossible day to TIMESTAMP is an error",
    rule: "BigQuery CAST AS TIMESTAMP: the text must be a valid timestamp, else an error",
    sql: "select cast('2025-02-29 10:00:00' as timestamp) as t",
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of an impossible day to DATETIME is an error",
    rule: "BigQuery CAST AS DATETIME: the text must be a valid datetime, else an error",
    sql: "select cast('2025-04-31 10:00:00' as datetime) as t",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE_CAST of impossible days is NULL, of a leap day a date",
    rule: "BigQuery SAFE_CAST: NULL where CAST would raise",
    sql: "select safe_cast('2025-02-30' as date) as a, safe_cast('2025-13-01' as date) as b, safe_cast('2025-02-29 10:00:00' as timestamp) as c, safe_cast('2024-02-29' as date) as d, cast('2024-02-29' as date) as e",
    expect: [{ a: null, b: null, c: null, d: "2024-02-29", e: "2024-02-29" }],
  },

  // ---------------------------------------------------------------- INT64 and FLOAT64 together
  {
    name: "CASE, IF and COALESCE mixing INT64 and FLOAT64 are FLOAT64",
    rule: "BigQuery CASE/IF/COALESCE: the result is the branches' supertype (INT64 and FLOAT64 give FLOAT64)",
    sql: `select id, case when id = 'e01' then length(id) else 2.5 end as a, if(id = 'e01', count(*), 0.5) as b, coalesce(sum(length(id)), 0.5) as c, case when id = 'e02' then r.status_code / 2 else r.status_code end as d from ${RESP} where id in ('e01', 'e02') group by id, r.status_code order by id`,
    expect: [
      { id: "e01", a: 3, b: 1, c: 3, d: 200 },
      { id: "e02", a: 2.5, b: 0.5, c: 3, d: 100.5 },
    ],
  },
];
