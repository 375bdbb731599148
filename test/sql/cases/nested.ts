import type { SqlCase } from "./case.ts";

// Functions of themselves, as the engines run them once each level's input is bound once (a lambda
// on DuckDB and ClickHouse, a scalar subquery on PostgreSQL): the values of each level, and the
// places a binding must not move a value out of (an aggregate's query, a window's rows).

export const nestedCases: SqlCase[] = [
  {
    name: "JSON_VALUE of JSON_VALUE of JSON_VALUE reads each level's text",
    rule: "BigQuery JSON_VALUE: a JSON string's value is its text, itself JSON read by the next call",
    sql: `select json_value(json_value(json_value(j, '$.a'), '$.b'), '$.c') as v, json_query(json_query(j, '$.d'), '$.e') as q from unnest(['{"a": "{\\\\"b\\\\": \\\\"{\\\\\\\\\\\\"c\\\\\\\\\\\\": 7.5}\\\\"}", "d": {"e": [1, 2]}}']) j`,
    expect: [{ v: "7.5", q: "[1,2]" }],
  },
  {
    name: "ROUND of ROUND of ROUND, and of an aggregate",
    rule: "BigQuery ROUND: halfway cases away from zero, each level of the value before it",
    sql: "select round(round(round(x, 3), 2), 1) as r, round(round(avg(x), 2), 1) as a from unnest([1.2449, 2.35]) x group by x order by x",
    expect: [
      { r: 1.3, a: 1.2 },
      { r: 2.4, a: 2.4 },
    ],
  },
  {
    name: "TIMESTAMP_TRUNC in a zone three levels deep, and formatted in it",
    rule: "BigQuery TIMESTAMP_TRUNC with a time zone: each level truncates the instant before it in that zone",
    sql: "select format_timestamp('%F %H:%M %Ez', timestamp_trunc(timestamp_trunc(timestamp_trunc(t, hour, 'America/New_York'), day, 'America/New_York'), month, 'America/New_York'), 'America/New_York') as f from unnest([timestamp '2024-03-10 12:30:00']) t",
    expect: [{ f: "2024-03-01 00:00 -05:00" }],
  },
  {
    name: "CAST to STRING and back three levels deep keeps each level's number",
    rule: "BigQuery CAST(FLOAT64 AS STRING) and CAST(STRING AS FLOAT64): the text reads back as the same value",
    sql: "select cast(cast(cast(cast(cast(x as string) as float64) as string) as float64) as string) as s from unnest([0.1, 1e21, 123.0, -2.5]) x",
    expect: [{ s: "0.1" }, { s: "1e+21" }, { s: "123" }, { s: "-2.5" }],
  },
  {
    name: "POW, GREATEST and FORMAT of themselves",
    rule: "BigQuery POW, GREATEST, FORMAT('%.nf'): each level of the value before it",
    sql: "select pow(pow(x, 2), 0.5) as p, greatest(greatest(x * 1.5, 2), least(x, 10)) as g, format('%.2f', cast(format('%.3f', x) as float64)) as f from unnest([1.0, 4.0]) x order by x",
    expect: [
      { p: 1, g: 2, f: "1.00" },
      { p: 4, g: 6, f: "4.00" },
    ],
  },
  {
    name: "a bound value holding an aggregate is the aggregate of its group",
    rule: "BigQuery: an aggregate in a function's argument is computed over the group",
    sql: `select k, cast(avg(x) / 3 as string) as a, json_value(max(j), '$.a') as m, cast(cast(sum(x) as string) as float64) as s from unnest([struct(1 as k, 1.5 as x, '{"a": 2.5}' as j), struct(1 as k, 3.0 as x, '{"a": 10}' as j), struct(2 as k, 6.0 as x, '{"a": 7}' as j)]) group by k order by k`,
    expect: [
      { k: 1, a: "0.75", m: "2.5", s: 4.5 },
      { k: 2, a: "2", m: "7", s: 6 },
    ],
  },
  {
    name: "a bound value holding a window function is the window's value for its row",
    rule: "BigQuery analytic functions: SUM() OVER (ORDER BY x) is the running total at each row",
    sql: "select x, cast(sum(x) over (order by x) / 4 as string) as r, cast(cast(cast(row_number() over (order by x) as float64) / 8 as string) as float64) as n from unnest([1.0, 2.0, 3.0]) x order by x",
    expect: [
      { x: 1, r: "0.25", n: 0.125 },
      { x: 2, r: "0.75", n: 0.25 },
      { x: 3, r: "1.5", n: 0.375 },
    ],
  },
  {
    name: "grouping and filtering by a bound expression",
    rule: "BigQuery GROUP BY an expression: rows with equal values of it form one group",
    sql: "select cast(cast(x / 3 as string) as float64) as v, count(*) as n from unnest([1.5, 1.5, 3.0, 0.3]) x where cast(cast(x as string) as float64) > 1 group by v order by v",
    expect: [
      { v: 0.5, n: 2 },
      { v: 1, n: 1 },
    ],
  },
];
