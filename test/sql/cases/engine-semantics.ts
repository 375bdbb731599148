import { EDGE, PG, REST, type SqlCase, us } from "./case.ts";

// BigQuery semantics where an engine's defaults differ (ClickHouse's above all: unsigned counts,
// backslash escapes in literals, byte-wise string functions, defaults instead of NULLs in outer
// joins and window edges, NULLs skipped by IN). Each expected row is BigQuery's documented answer.

export const engineSemanticsCases: SqlCase[] = [
  {
    name: "a count minus a larger number is negative",
    rule: "BigQuery COUNT returns INT64 (signed); arithmetic on it is INT64 arithmetic",
    sql: `select count(*) - 100 as d, -count(*) as neg, count(*) * -2 as twice, 1 - count(*) as one from ${PG}`,
    expect: [{ d: -90, neg: -10, twice: -20, one: -9 }],
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
];
