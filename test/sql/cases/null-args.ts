import { EDGE, type SqlCase } from "./case.ts";

// A function of a NULL argument is NULL (BigQuery, "NULL semantics" of each function), also where
// the argument is one the dialects read when they compile — a format, a JSONPath — or a time zone.
// These were refused ("needs its format as a string literal") or reached the engines, which raised.

export const nullArgCases: SqlCase[] = [
  {
    name: "CAST and SAFE_CAST of an expression of untyped NULLs",
    rule: "BigQuery CAST / SAFE_CAST: a NULL of any type casts to NULL; COALESCE(NULL, NULL) is such a NULL (PostgreSQL and ClickHouse raised a type error: the NULLs were written as BIGINT and read as text)",
    sql: "select safe_cast(coalesce(null, null) as date) as a, cast(coalesce(null, null) as timestamp) as b, safe_cast(ifnull(null, null) as int64) as c, cast(if(true, null, null) as string) as d, cast(coalesce(null, null) as datetime) as e, cast(nullif(null, null) as bool) as f",
    expect: [{ a: null, b: null, c: null, d: null, e: null, f: null }],
  },
  {
    name: "a NULL format is a NULL result: PARSE_/FORMAT_TIMESTAMP, PARSE_/FORMAT_DATE, FORMAT",
    rule: "BigQuery: PARSE_TIMESTAMP, FORMAT_TIMESTAMP, PARSE_DATE, FORMAT_DATE and FORMAT return NULL when the format string is NULL",
    sql:
      "select parse_timestamp(null, '10:30') as pt, format_timestamp(null, timestamp '2025-01-15 10:00:00') as ft, " +
      "parse_date(null, '2025-01-15') as pd, format_date(null, date '2025-01-15') as fd, format(null, 1) as f, " +
      "safe.parse_timestamp(cast(null as string), 'x') as safe_pt",
    expect: [{ pt: null, ft: null, pd: null, fd: null, f: null, safe_pt: null }],
  },
  {
    name: "a NULL JSONPath is a NULL result, per row of a source",
    rule: "BigQuery JSON functions: NULL when the JSONPath is NULL",
    sql: `select json_value(event_message, null) as v, json_query(event_message, null) as q, json_extract_scalar(event_message, null) as s, json_extract(event_message, null) as e from ${EDGE} limit 2`,
    expect: [
      { v: null, q: null, s: null, e: null },
      { v: null, q: null, s: null, e: null },
    ],
  },
  {
    name: "a NULL time zone is a NULL result, in every function that takes one",
    rule: "BigQuery time functions: NULL when the time zone argument is NULL",
    sql:
      "select timestamp_trunc(timestamp '2025-01-15 10:00:00', day, null) as tt, datetime(timestamp '2025-01-15 10:00:00', null) as dt, " +
      "date(timestamp '2025-01-15 10:00:00', null) as d, timestamp('2025-01-15 10:00:00', null) as ts, " +
      "format_timestamp('%Y', timestamp '2025-01-15 10:00:00', null) as ft, parse_timestamp('%Y', '2025', null) as pt, " +
      "current_date(null) as cd, current_datetime(null) as cdt",
    expect: [{ tt: null, dt: null, d: null, ts: null, ft: null, pt: null, cd: null, cdt: null }],
  },
  {
    name: "a NULL format keeps the call's type: compared, coalesced and grouped as its type",
    rule: "BigQuery: a function's NULL result has the function's return type",
    sql:
      "select coalesce(parse_timestamp(null, 'x'), timestamp '2025-01-15 00:00:00') = timestamp '2025-01-15 00:00:00' as same, " +
      "coalesce(format_date(null, date '2025-01-15'), 'none') as fallback",
    expect: [{ same: true, fallback: "none" }],
  },
];
