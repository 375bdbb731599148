import type { SqlCase } from "./case.ts";

// Functions of themselves, as the engines run them once each level's input is bound once (a lambda
// on DuckDB and ClickHouse, a subquery for PostgreSQL's JSON_VALUE): the values of each level.

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
];
