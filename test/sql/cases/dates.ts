import { EDGE, type SqlCase } from "./case.ts";

// BigQuery "Date functions": PARSE_DATE (PARSE_TIMESTAMP's reading in UTC, the date kept, time
// elements refused) and FORMAT_DATE (FORMAT_TIMESTAMP at midnight UTC, time elements written as
// their own text), as ZetaSQL's ParseDate and FormatDateToString do.

export const dateCases: SqlCase[] = [
  {
    name: "PARSE_DATE of ISO, compact and day-first text",
    rule: "BigQuery PARSE_DATE(format, string): a DATE read with the format elements",
    sql: "select parse_date('%Y-%m-%d', '2025-01-15') as a, parse_date('%Y%m%d', '20250115') as b, parse_date('%d/%m/%Y', '15/01/2025') as c, parse_date('%F', ' 2025-12-31 ') as d",
    expect: [{ a: "2025-01-15", b: "2025-01-15", c: "2025-01-15", d: "2025-12-31" }],
  },
  {
    name: "PARSE_DATE with month and weekday names",
    rule: "BigQuery PARSE_DATE: %A %B read English names, case-insensitively",
    sql: "select parse_date('%A %d %B %Y', 'Wednesday 15 January 2025') as a, parse_date('%b %d %Y', 'jan 15 2025') as b",
    expect: [{ a: "2025-01-15", b: "2025-01-15" }],
  },
  {
    name: "PARSE_DATE of text that does not match is an error",
    rule: "BigQuery PARSE_DATE: an error when the string cannot be parsed with the format (SAFE.PARSE_DATE is NULL)",
    sql: "select parse_date('%Y-%m-%d', '15/01/2025') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_DATE of a day that does not exist is an error",
    rule: "BigQuery PARSE_DATE: an out-of-range field is an error, not the next day",
    sql: "select parse_date('%Y-%m-%d', '2025-02-30') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_DATE refuses a time element",
    rule: "BigQuery PARSE_DATE: 'Invalid format: %H is not allowed for the DATE type'",
    sql: "select parse_date('%Y-%m-%d %H', '2025-01-15 10') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE.PARSE_DATE row by row",
    rule: "BigQuery SAFE. prefix: SAFE.PARSE_DATE is NULL where PARSE_DATE raises",
    sql: "select s, safe.parse_date('%Y%m%d', s) as d from unnest(['20250115', 'junk', '20250230']) s",
    expect: [
      { s: "20250115", d: "2025-01-15" },
      { s: "junk", d: null },
      { s: "20250230", d: null },
    ],
  },
  {
    name: "FORMAT_DATE of a DATE literal",
    rule: "BigQuery FORMAT_DATE(format, date): format elements %Y %m %d %A %B %a %b %e %j",
    sql: "select format_date('%Y-%m-%d', date '2025-01-15') as a, format_date('%A %d %B %Y', date '2025-01-15') as b, format_date('%a %b %e %j', date '2025-01-05') as c, format_date('%Y', '2025-01-15') as d",
    expect: [{ a: "2025-01-15", b: "Wednesday 15 January 2025", c: "Sun Jan  5 005", d: "2025" }],
  },
  {
    name: "FORMAT_DATE writes time elements as their own text",
    rule: "BigQuery FORMAT_DATE (ZetaSQL SanitizeDateFormat): elements a DATE has not (%H %M %S %Z %z) pass through as text",
    sql: "select format_date('%F %H:%M:%S %Z %z %%', date '2025-01-15') as a",
    expect: [{ a: "2025-01-15 %H:%M:%S %Z %z %" }],
  },
  {
    name: "FORMAT_DATE of DATE(timestamp) over a source",
    rule: "BigQuery FORMAT_DATE over DATE(timestamp) in UTC (a dashboard's day label)",
    sql: `select id, format_date('%Y-%m-%d', date(timestamp)) as day from ${EDGE} where id in ('e10', 'e11')`,
    expect: [
      { id: "e10", day: "2025-01-14" },
      { id: "e11", day: "2025-01-15" },
    ],
  },
  {
    name: "PARSE_DATE and FORMAT_DATE of NULL are NULL",
    rule: "BigQuery: a NULL argument gives NULL",
    sql: "select parse_date('%Y-%m-%d', cast(null as string)) as p, format_date('%Y-%m-%d', cast(null as date)) as f, parse_date('%Y', s) as ps from unnest([cast(null as string)]) s",
    expect: [{ p: null, f: null, ps: null }],
  },
];
