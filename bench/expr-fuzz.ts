/**
 * Differential testing of the compiler with generated expressions: a seeded generator of typed
 * scalar expressions (string, numeric, date/time, array, conditional and JSON functions of the
 * catalogue, nesting depth 1–3) over edge literals (NULL, '', unicode, -0.0, INT64's extremes,
 * NaN and ±inf, 0001-01-01 and 9999-12-31, empty arrays), each query run on DuckDB, PostgreSQL
 * and ClickHouse (test/support/backends.ts) and the answers compared. Prints each disagreement —
 * `valueDiff` (answers differ), `errorVsAnswer` (one backend raises where another answers),
 * `internal` (a 5xx-class error: always a bug) — and the count of each class.
 *
 *   node --import tsx bench/expr-fuzz.ts [--seed 1] [--count 200] [--runtime] [--sql 'select …']
 *
 * `--runtime` reads each literal through `IF(one = 1, a, b)` over `UNNEST([1, 2]) AS one`, so
 * that the engines evaluate the expression per row instead of folding constants at plan time.
 * Two FLOAT64 answers agree at 12 significant digits.
 */
import { parseArgs } from "node:util";
import { mulberry32 } from "../test/support/prng.ts";
import {
  classify,
  diffCounters,
  normalised,
  openEngines,
  runEverywhere,
  summary as summaryOf,
} from "./lib/engine-diff.ts";

const { values: opts } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    count: { type: "string", default: "200" },
    runtime: { type: "boolean", default: false },
    sql: { type: "string" },
  },
});

type T =
  | "INT64"
  | "FLOAT64"
  | "STRING"
  | "BOOL"
  | "DATE"
  | "TIMESTAMP"
  | "DATETIME"
  | "AINT"
  | "ASTR"
  | "JSON";
const COUNT = Number(opts.count);
const ONLY = opts.sql;
const rnd = mulberry32(Number(opts.seed));
const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rnd() * xs.length)]!;
const chance = (p: number) => rnd() < p;

const LIT: Record<T, string[]> = {
  INT64: [
    "0",
    "1",
    "-1",
    "2",
    "7",
    "-3",
    "42",
    "100",
    "9223372036854775807",
    "-9223372036854775808",
    "NULL",
    "CAST(NULL AS INT64)",
    "1000000",
  ],
  FLOAT64: [
    "0.0",
    "-0.0",
    "1.5",
    "-2.5",
    "0.1",
    "2.675",
    "1e308",
    "-1e-300",
    "CAST('inf' AS FLOAT64)",
    "CAST('-inf' AS FLOAT64)",
    "CAST('nan' AS FLOAT64)",
    "CAST(NULL AS FLOAT64)",
    "123456.789",
  ],
  STRING: [
    "''",
    "'abc'",
    "'ÄéΩ😀x'",
    "' a b '",
    "'A,B,,c'",
    "NULL",
    "CAST(NULL AS STRING)",
    "'123'",
    "'-4.5'",
    "'2024-02-29'",
    "'x%y_z'",
    "'\\n\\t'",
    "'ﬀ'",
    "'İ'",
    "'ß'",
  ],
  BOOL: ["TRUE", "FALSE", "CAST(NULL AS BOOL)"],
  DATE: [
    "DATE '0001-01-01'",
    "DATE '9999-12-31'",
    "DATE '2024-02-29'",
    "DATE '1970-01-01'",
    "DATE '2023-12-31'",
    "CAST(NULL AS DATE)",
    "DATE '2021-01-03'",
  ],
  TIMESTAMP: [
    "TIMESTAMP '2024-01-01 00:00:00 UTC'",
    "TIMESTAMP '0001-01-01 00:00:00 UTC'",
    "TIMESTAMP '9999-12-31 23:59:59.999999 UTC'",
    "TIMESTAMP '1969-12-31 23:59:59.5 UTC'",
    "TIMESTAMP '2024-02-29 12:34:56.789 UTC'",
    "CAST(NULL AS TIMESTAMP)",
    "TIMESTAMP '2021-03-14 01:59:59+05:30'",
  ],
  DATETIME: [
    "DATETIME '2024-01-01 10:00:00'",
    "DATETIME '0001-01-01 00:00:00'",
    "DATETIME '9999-12-31 23:59:59.999999'",
    "CAST(NULL AS DATETIME)",
  ],
  AINT: ["[]", "[1, 2, 3]", "[-1, 0]", "ARRAY<INT64>[]", "[9223372036854775807]", "IF(FALSE, [1], NULL)"],
  ASTR: ["['a', '', 'b']", "ARRAY<STRING>[]", "['😀']", "['x']"],
  JSON: [
    `'{"a": 1, "b": [1, 2], "c": {"d": "x"}}'`,
    `'{"a": null}'`,
    `'[1, "two", null]'`,
    "''",
    "'not json'",
    `'{"a": "é\\\\u00e9"}'`,
    `'{"a": 1.5e300, "b": true}'`,
    `'"str"'`,
    "CAST(NULL AS STRING)",
    `'{"a": {"b": [{"c": 9}]}}'`,
  ],
};
const DPARTS = ["DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "ISOWEEK", "ISOYEAR", "WEEK(MONDAY)"];
const TPARTS = ["MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"];
const TTRUNC = [
  "MICROSECOND",
  "MILLISECOND",
  "SECOND",
  "MINUTE",
  "HOUR",
  "DAY",
  "WEEK",
  "MONTH",
  "QUARTER",
  "YEAR",
  "ISOWEEK",
  "ISOYEAR",
  "WEEK(MONDAY)",
];
const ZONES = ["'UTC'", "'America/New_York'", "'+05:30'", "'Asia/Kolkata'", "'-08'"];
const JPATH = ["'$'", "'$.a'", "'$.b[1]'", "'$.c.d'", "'$.c'", "'$.b'", "'$[1]'", "'$.a.b[0].c'", "'$.z'"];
const FMT_D = [
  "'%Y-%m-%d'",
  "'%d/%m/%Y'",
  "'%A %B %j'",
  "'%G-W%V-%u'",
  "'%x'",
  "'%Y%m%d'",
  "'%a %b %e'",
  "'%U %W'",
  "'%C %y %g'",
  "'%Q'",
  "'%F'",
];
const FMT_T = [
  "'%Y-%m-%d %H:%M:%S'",
  "'%F %T'",
  "'%s'",
  "'%Y-%m-%dT%H:%M:%E6S'",
  "'%I:%M %p'",
  "'%Z'",
  "'%R'",
  "'%E3S'",
  "'%D'",
  "'%H%M'",
  "'%Ez'",
  "'%z'",
];

const RUNTIME = opts.runtime === true;
function lit(t: T) {
  const a = pick(LIT[t]);
  if (!RUNTIME || t === "AINT" || t === "ASTR" || /NULL/.test(a) || chance(0.3)) return a;
  return `IF(one = 1, ${a}, ${pick(LIT[t].filter((x) => !/NULL/.test(x)))})`;
}

type Gen = (d: number) => string;
const G = (t: T, d: number) => gen(t, d);

const RULES: Record<T, Gen[]> = {
  INT64: [
    (d) => `LENGTH(${G("STRING", d)})`,
    (d) => `CHAR_LENGTH(${G("STRING", d)})`,
    (d) => `STRPOS(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `ARRAY_LENGTH(${G("AINT", d)})`,
    (d) => `ARRAY_LENGTH(${G("ASTR", d)})`,
    (d) => `DIV(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `MOD(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `ABS(${G("INT64", d)})`,
    (d) => `SIGN(${G("INT64", d)})`,
    (d) => `DATE_DIFF(${G("DATE", d)}, ${G("DATE", d)}, ${pick(DPARTS)})`,
    (d) => `TIMESTAMP_DIFF(${G("TIMESTAMP", d)}, ${G("TIMESTAMP", d)}, ${pick(TPARTS)})`,
    (d) => `UNIX_SECONDS(${G("TIMESTAMP", d)})`,
    (d) => `UNIX_MILLIS(${G("TIMESTAMP", d)})`,
    (d) => `UNIX_MICROS(${G("TIMESTAMP", d)})`,
    (d) => `(${G("INT64", d)} ${pick(["+", "-", "*"])} ${G("INT64", d)})`,
    (d) => `-(${G("INT64", d)})`,
    (d) => `CAST(${G("STRING", d)} AS INT64)`,
    (d) => `SAFE_CAST(${G("STRING", d)} AS INT64)`,
    (d) => `CAST(${G("FLOAT64", d)} AS INT64)`,
    (d) => `SAFE_CAST(${G("FLOAT64", d)} AS INT64)`,
    (d) => `CAST(${G("BOOL", d)} AS INT64)`,
    (d) => `IF(${G("BOOL", d)}, ${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `IFNULL(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `COALESCE(${G("INT64", d)}, ${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `NULLIF(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `GREATEST(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `LEAST(${G("INT64", d)}, ${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `CASE WHEN ${G("BOOL", d)} THEN ${G("INT64", d)} ELSE ${G("INT64", d)} END`,
    (d) => `CASE ${G("INT64", d)} WHEN 1 THEN ${G("INT64", d)} WHEN 2 THEN 20 END`,
    (d) =>
      `EXTRACT(${pick(["YEAR", "MONTH", "DAY", "DAYOFWEEK", "DAYOFYEAR", "WEEK", "ISOWEEK", "ISOYEAR", "QUARTER"])} FROM ${G("DATE", d)})`,
    (d) =>
      `EXTRACT(${pick(["HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "DAYOFWEEK", "YEAR"])} FROM ${G("TIMESTAMP", d)})`,
    (d) => `${G("AINT", d)}[SAFE_OFFSET(${G("INT64", d)})]`,
    (d) => `${G("AINT", d)}[SAFE_ORDINAL(${G("INT64", d)})]`,
  ],
  FLOAT64: [
    (d) => `SQRT(${G("FLOAT64", d)})`,
    (d) => `EXP(${G("FLOAT64", d)})`,
    (d) => `LN(${G("FLOAT64", d)})`,
    (d) => `LOG10(${G("FLOAT64", d)})`,
    (d) => `POW(${G("FLOAT64", d)}, ${G("FLOAT64", d)})`,
    (d) => `POWER(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `ROUND(${G("FLOAT64", d)})`,
    (d) => `ROUND(${G("FLOAT64", d)}, ${pick(["0", "1", "2", "-1", "-2", "400", "-400"])})`,
    (d) => `TRUNC(${G("FLOAT64", d)})`,
    (d) => `TRUNC(${G("FLOAT64", d)}, ${pick(["1", "-1", "2"])})`,
    (d) => `CEIL(${G("FLOAT64", d)})`,
    (d) => `FLOOR(${G("FLOAT64", d)})`,
    (d) => `CEILING(${G("FLOAT64", d)})`,
    (d) => `SAFE_DIVIDE(${G("FLOAT64", d)}, ${G("FLOAT64", d)})`,
    (d) => `SAFE_DIVIDE(${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `(${G("FLOAT64", d)} / ${G("FLOAT64", d)})`,
    (d) => `(${G("INT64", d)} / ${G("INT64", d)})`,
    (d) => `(${G("FLOAT64", d)} ${pick(["+", "-", "*"])} ${G("FLOAT64", d)})`,
    (d) => `(${G("FLOAT64", d)} + ${G("INT64", d)})`,
    (d) => `ABS(${G("FLOAT64", d)})`,
    (d) => `SIGN(${G("FLOAT64", d)})`,
    (d) => `-(${G("FLOAT64", d)})`,
    (d) => `CAST(${G("INT64", d)} AS FLOAT64)`,
    (d) => `CAST(${G("STRING", d)} AS FLOAT64)`,
    (d) => `SAFE_CAST(${G("STRING", d)} AS FLOAT64)`,
    (d) => `IF(${G("BOOL", d)}, ${G("FLOAT64", d)}, ${G("INT64", d)})`,
    (d) => `GREATEST(${G("FLOAT64", d)}, ${G("FLOAT64", d)})`,
    (d) => `LEAST(${G("FLOAT64", d)}, ${G("INT64", d)})`,
    (d) => `COALESCE(${G("FLOAT64", d)}, ${G("INT64", d)})`,
  ],
  STRING: [
    (d) => `UPPER(${G("STRING", d)})`,
    (d) => `LOWER(${G("STRING", d)})`,
    (d) => `TRIM(${G("STRING", d)})`,
    (d) => `TRIM(${G("STRING", d)}, ${pick(["' '", "'a'", "''", "'😀x'"])})`,
    (d) => `LTRIM(${G("STRING", d)}, ${pick(["' '", "'ab'"])})`,
    (d) => `RTRIM(${G("STRING", d)})`,
    (d) => `CONCAT(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `CONCAT(${G("STRING", d)}, ${G("INT64", d)})`,
    (d) => `CONCAT(${G("STRING", d)}, ${G("FLOAT64", d)})`,
    (d) => `(${G("STRING", d)} || ${G("STRING", d)})`,
    (d) => `SUBSTR(${G("STRING", d)}, ${G("INT64", d)})`,
    (d) => `SUBSTR(${G("STRING", d)}, ${G("INT64", d)}, ${G("INT64", d)})`,
    (d) => `SUBSTRING(${G("STRING", d)}, ${G("INT64", d)}, ${pick(["0", "1", "2", "100"])})`,
    (d) => `LEFT(${G("STRING", d)}, ${G("INT64", d)})`,
    (d) => `RIGHT(${G("STRING", d)}, ${G("INT64", d)})`,
    (d) => `REPLACE(${G("STRING", d)}, ${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `REVERSE(${G("STRING", d)})`,
    (d) =>
      `REGEXP_EXTRACT(${G("STRING", d)}, ${pick(["'[a-z]+'", "'(\\\\d+)'", "'^.'", "'x*'", "'.$'", "'(b)|(c)'"])})`,
    (d) =>
      `REGEXP_REPLACE(${G("STRING", d)}, ${pick(["'[a-z]'", "'(\\\\d)'", "''", "'^'", "'.'", "'a|b'"])}, ${pick(["'X'", "'<\\\\1>'", "''", "'\\\\0\\\\0'"])})`,
    (d) => `FORMAT('%d', ${G("INT64", d)})`,
    (d) => `FORMAT('%s|%s', ${G("STRING", d)}, ${G("INT64", d)})`,
    (d) =>
      `FORMAT(${pick(["'%f'", "'%.2f'", "'%g'", "'%e'", "'%5.1f'", "'%t'", "'%T'"])}, ${G("FLOAT64", d)})`,
    (d) =>
      `FORMAT(${pick(["'%t'", "'%T'", "'%s'"])}, ${G(pick(["DATE", "TIMESTAMP", "BOOL", "STRING", "AINT"] as T[]), d)})`,
    (d) =>
      `FORMAT(${pick(["'%5d'", "'%-5d|'", "'%05d'", "'%x'", "'%X'", "'%o'", "'%+d'", "'%'d'"])}, ${G("INT64", d)})`,
    (d) => `FORMAT_DATE(${pick(FMT_D)}, ${G("DATE", d)})`,
    (d) => `FORMAT_TIMESTAMP(${pick(FMT_T)}, ${G("TIMESTAMP", d)})`,
    (d) => `FORMAT_TIMESTAMP(${pick(FMT_T)}, ${G("TIMESTAMP", d)}, ${pick(ZONES)})`,
    (d) => `CAST(${G("INT64", d)} AS STRING)`,
    (d) => `CAST(${G("FLOAT64", d)} AS STRING)`,
    (d) => `CAST(${G("DATE", d)} AS STRING)`,
    (d) => `CAST(${G("TIMESTAMP", d)} AS STRING)`,
    (d) => `CAST(${G("BOOL", d)} AS STRING)`,
    (d) => `CAST(${G("DATETIME", d)} AS STRING)`,
    (d) => `JSON_VALUE(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `JSON_EXTRACT_SCALAR(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `JSON_QUERY(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `JSON_EXTRACT(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `JSON_VALUE(${G("JSON", d)})`,
    (d) => `ARRAY_TO_STRING(${G("ASTR", d)}, ${G("STRING", d)})`,
    (d) => `IF(${G("BOOL", d)}, ${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `COALESCE(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `NULLIF(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `GREATEST(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `${G("ASTR", d)}[SAFE_OFFSET(${G("INT64", d)})]`,
  ],
  BOOL: [
    (d) => {
      const t = pick(["INT64", "FLOAT64", "STRING", "DATE", "TIMESTAMP", "BOOL"] as T[]);
      return `(${G(t, d)} ${pick(["=", "<", "<=", ">", ">=", "!=", "<>"])} ${G(t, d)})`;
    },
    (d) => `(${G("INT64", d)} = ${G("FLOAT64", d)})`,
    (d) => `STARTS_WITH(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) => `ENDS_WITH(${G("STRING", d)}, ${G("STRING", d)})`,
    (d) =>
      `REGEXP_CONTAINS(${G("STRING", d)}, ${pick(["'^a'", "'b$'", "''", "'\\\\d'", "'(?i)ABC'", "'😀'", "'[[:alpha:]]'"])})`,
    (d) => `(${G(pick(["INT64", "STRING", "FLOAT64", "DATE"] as T[]), d)} IS ${pick(["", "NOT "])}NULL)`,
    (d) => `(${G("BOOL", d)} ${pick(["AND", "OR"])} ${G("BOOL", d)})`,
    (d) => `(NOT ${G("BOOL", d)})`,
    (d) => `(${G("INT64", d)} IN (${G("INT64", d)}, 1, NULL))`,
    (d) => `(${G("STRING", d)} NOT IN ('abc', ''))`,
    (d) => `(${G("INT64", d)} BETWEEN ${G("INT64", d)} AND ${G("INT64", d)})`,
    (d) =>
      `(${G("STRING", d)} ${pick(["LIKE", "NOT LIKE"])} ${pick(["'a%'", "'%'", "'_'", "'%\\\\%%'", "'%b_'", "''", "'ÄéΩ%'"])})`,
    (d) => `(${G("FLOAT64", d)} IS NOT DISTINCT FROM ${G("FLOAT64", d)})`,
    (d) => `(${G("INT64", d)} IN UNNEST(${G("AINT", d)}))`,
    (d) => `CAST(${G("STRING", d)} AS BOOL)`,
    (d) => `IFNULL(${G("BOOL", d)}, ${G("BOOL", d)})`,
    (d) => `(${G("TIMESTAMP", d)} < ${G("DATE", d)})`,
  ],
  DATE: [
    () =>
      `DATE(${pick(["2024", "1", "9999", "2023"])}, ${pick(["2", "12", "1"])}, ${pick(["29", "31", "1"])})`,
    (d) => `DATE(${G("TIMESTAMP", d)})`,
    (d) => `DATE(${G("TIMESTAMP", d)}, ${pick(ZONES)})`,
    (d) => `DATE(${G("DATETIME", d)})`,
    (d) =>
      `DATE_ADD(${G("DATE", d)}, INTERVAL ${G("INT64", d)} ${pick(["DAY", "WEEK", "MONTH", "QUARTER", "YEAR"])})`,
    (d) =>
      `DATE_SUB(${G("DATE", d)}, INTERVAL ${pick(["1", "-1", "31", "12", "400"])} ${pick(["DAY", "WEEK", "MONTH", "QUARTER", "YEAR"])})`,
    (d) => `DATE_TRUNC(${G("DATE", d)}, ${pick(DPARTS)})`,
    (d) => `PARSE_DATE(${pick(["'%Y-%m-%d'", "'%F'", "'%Y%m%d'", "'%d/%m/%Y'"])}, ${G("STRING", d)})`,
    (d) => `SAFE.PARSE_DATE('%Y-%m-%d', ${G("STRING", d)})`,
    (d) => `CAST(${G("STRING", d)} AS DATE)`,
    (d) => `SAFE_CAST(${G("STRING", d)} AS DATE)`,
    (d) => `CAST(${G("TIMESTAMP", d)} AS DATE)`,
    (d) => `IF(${G("BOOL", d)}, ${G("DATE", d)}, ${G("DATE", d)})`,
    (d) => `GREATEST(${G("DATE", d)}, ${G("DATE", d)})`,
  ],
  TIMESTAMP: [
    (d) => `TIMESTAMP(${G("STRING", d)})`,
    (d) => `TIMESTAMP(${G("DATE", d)})`,
    (d) => `TIMESTAMP(${G("DATETIME", d)}, ${pick(ZONES)})`,
    () =>
      `TIMESTAMP(${pick(["'2024-01-01 10:00:00'", "'2024-01-01T10:00:00Z'", "'2024-01-01'", "'2024-01-01 10:00:00.123456+01'", "'0001-01-01 00:00:00'", "'2024-13-01'"])}, ${pick(ZONES)})`,
    (d) => `TIMESTAMP_ADD(${G("TIMESTAMP", d)}, INTERVAL ${G("INT64", d)} ${pick(TPARTS)})`,
    (d) =>
      `TIMESTAMP_SUB(${G("TIMESTAMP", d)}, INTERVAL ${pick(["1", "-1", "1000", "86400"])} ${pick(TPARTS)})`,
    (d) => `TIMESTAMP_TRUNC(${G("TIMESTAMP", d)}, ${pick(TTRUNC)})`,
    (d) => `TIMESTAMP_TRUNC(${G("TIMESTAMP", d)}, ${pick(TTRUNC)}, ${pick(ZONES)})`,
    (d) => `TIMESTAMP_MICROS(${G("INT64", d)})`,
    (d) => `TIMESTAMP_MILLIS(${G("INT64", d)})`,
    (d) => `TIMESTAMP_SECONDS(${G("INT64", d)})`,
    (d) =>
      `PARSE_TIMESTAMP(${pick(["'%Y-%m-%d %H:%M:%S'", "'%F %T'", "'%s'", "'%Y-%m-%dT%H:%M:%E*S'"])}, ${G("STRING", d)})`,
    (d) => `SAFE.PARSE_TIMESTAMP('%Y-%m-%d', ${G("STRING", d)}, ${pick(ZONES)})`,
    (d) => `CAST(${G("STRING", d)} AS TIMESTAMP)`,
    (d) => `SAFE_CAST(${G("STRING", d)} AS TIMESTAMP)`,
    (d) => `CAST(${G("DATE", d)} AS TIMESTAMP)`,
    (d) => `IF(${G("BOOL", d)}, ${G("TIMESTAMP", d)}, ${G("TIMESTAMP", d)})`,
    (d) => `LEAST(${G("TIMESTAMP", d)}, ${G("TIMESTAMP", d)})`,
    (d) =>
      `GENERATE_TIMESTAMP_ARRAY(${G("TIMESTAMP", d)}, ${G("TIMESTAMP", d)}, INTERVAL ${pick(["1", "7"])} ${pick(["DAY", "HOUR"])})[SAFE_OFFSET(${pick(["0", "1", "-1"])})]`,
  ],
  DATETIME: [
    (d) => `DATETIME(${G("TIMESTAMP", d)})`,
    (d) => `DATETIME(${G("TIMESTAMP", d)}, ${pick(ZONES)})`,
    (d) => `DATETIME(${G("DATE", d)})`,
    (d) => `DATETIME_TRUNC(${G("DATETIME", d)}, ${pick(TTRUNC)})`,
    (d) => `CAST(${G("STRING", d)} AS DATETIME)`,
  ],
  AINT: [(d) => `[${G("INT64", d)}, ${G("INT64", d)}]`, (d) => `IF(${G("BOOL", d)}, ${G("AINT", d)}, [])`],
  ASTR: [
    (d) => `SPLIT(${G("STRING", d)}, ${pick(["','", "''", "'😀'", "' '", "'ab'"])})`,
    (d) => `SPLIT(${G("STRING", d)})`,
    (d) => `[${G("STRING", d)}, ${G("STRING", d)}]`,
  ],
  JSON: [
    (d) => `JSON_QUERY(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `JSON_EXTRACT(${G("JSON", d)}, ${pick(JPATH)})`,
    (d) => `CONCAT('{"a": ', ${G("STRING", d)}, '}')`,
  ],
};

function gen(t: T, depth: number): string {
  if (depth <= 0 || chance(0.3)) return lit(t);
  return pick(RULES[t])(depth - 1);
}

const TYPES: T[] = [
  "INT64",
  "FLOAT64",
  "STRING",
  "BOOL",
  "DATE",
  "TIMESTAMP",
  "DATETIME",
  "AINT",
  "ASTR",
  "JSON",
];

const { backends, names, dispose } = await openEngines();
const stats = diffCounters();
stats.refusedCompile = 0;
for (let i = 0; i < COUNT; i++) {
  const t = pick(TYPES);
  const e = gen(t, 1 + Math.floor(rnd() * 3));
  const sql =
    ONLY ?? (RUNTIME ? `select one, ${e} as v from unnest([1, 2]) as one order by one` : `select ${e} as v`);
  stats.run!++;
  const res = await runEverywhere(backends, sql, (rows) => JSON.stringify(normalised(rows)));
  const summary = summaryOf(names, res);
  const cls = classify(res);
  if (
    cls === "allError" &&
    res.every(
      (r) =>
        (!r.ok && r.code === "function_not_allowed") ||
        (!r.ok && r.code === "sql_invalid" && /not (supported|known)|unknown function/i.test(r.msg)),
    )
  )
    stats.refusedCompile!++;
  stats[cls]!++;
  if (cls !== "agree" && cls !== "allError") console.log(`[${cls}] #${i} ${sql}\n   ${summary}`);
}
console.log(JSON.stringify(stats));
await dispose();
process.exit(0);
