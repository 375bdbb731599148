import { EDGE, type SqlCase, us } from "./case.ts";

// The function × backend matrix (issue 11): the signatures of catalogue functions no other case
// ran. Expected values are BigQuery's documented results (the function reference pages named in
// each rule); function-matrix.test.ts fails when a signature has no case.

const CF = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.cf) c`;
const BOT = `${CF}, unnest(c.botManagement) b`;
const XS = "unnest([10, 20, 30, 40]) as x";

export const matrixCases: SqlCase[] = [
  // ---------------------------------------------------------------- window functions
  {
    name: "PERCENT_RANK over four distinct values",
    rule: "BigQuery numbering functions: PERCENT_RANK = (rank - 1) / (rows - 1)",
    sql: `select x, percent_rank() over (order by x) as p from ${XS} order by x`,
    expect: [
      { x: 10, p: 0 },
      { x: 20, p: 1 / 3 },
      { x: 30, p: 2 / 3 },
      { x: 40, p: 1 },
    ],
  },
  {
    name: "CUME_DIST over four distinct values",
    rule: "BigQuery numbering functions: CUME_DIST = rows up to the current / rows",
    sql: `select x, cume_dist() over (order by x) as c from ${XS} order by x`,
    expect: [
      { x: 10, c: 0.25 },
      { x: 20, c: 0.5 },
      { x: 30, c: 0.75 },
      { x: 40, c: 1 },
    ],
  },
  {
    name: "NTILE(3) of four rows gives the first bucket the extra row",
    rule: "BigQuery numbering functions: NTILE(constant_integer_expression)",
    sql: `select x, ntile(3) over (order by x) as b from ${XS} order by x`,
    expect: [
      { x: 10, b: 1 },
      { x: 20, b: 1 },
      { x: 30, b: 2 },
      { x: 40, b: 3 },
    ],
  },
  {
    name: "LAG(x, 2)",
    rule: "BigQuery navigation functions: LAG(value_expression, offset), NULL before the first row",
    sql: `select x, lag(x, 2) over (order by x) as l from ${XS} order by x`,
    expect: [
      { x: 10, l: null },
      { x: 20, l: null },
      { x: 30, l: 10 },
      { x: 40, l: 20 },
    ],
  },
  {
    name: "LEAD(x, 1) and LEAD(x, 2, 0)",
    rule: "BigQuery navigation functions: LEAD(value_expression, offset [, default_expression])",
    sql: `select x, lead(x, 1) over (order by x) as a, lead(x, 2, 0) over (order by x) as b from ${XS} order by x`,
    expect: [
      { x: 10, a: 20, b: 30 },
      { x: 20, a: 30, b: 40 },
      { x: 30, a: 40, b: 0 },
      { x: 40, a: null, b: 0 },
    ],
  },

  // ---------------------------------------------------------------- strings
  {
    name: "SUBSTRING from a position, positive and negative",
    rule: "BigQuery string functions: SUBSTRING is SUBSTR; a negative position counts from the end",
    sql: `select substring('foobar', 3) as a, substring('foobar', -2) as b, substring(event_message, -10) as c from ${EDGE} where id = 'e01'`,
    expect: [{ a: "obar", b: "ar", c: "curl/8.4.0" }],
  },
  {
    name: "SUBSTRING with a length",
    rule: "BigQuery string functions: SUBSTRING(value, position, length)",
    sql: `select substring('foobar', 2, 3) as a, substring('foobar', 0, 2) as b, substring('foobar', 5, 10) as c`,
    expect: [{ a: "oob", b: "fo", c: "ar" }],
  },
  {
    name: "LTRIM and RTRIM of given characters",
    rule: "BigQuery string functions: LTRIM(value1, value2), RTRIM(value1, value2)",
    sql: `select ltrim('xxabcxx', 'x') as l, rtrim('xxabcxx', 'x') as r, ltrim('*#a#*', '#*') as l2`,
    expect: [{ l: "abcxx", r: "xxabc", l2: "a#*" }],
  },
  {
    name: "STRPOS: 1-based position of the first occurrence, 0 when absent",
    rule: "BigQuery string functions: STRPOS(value, subvalue)",
    sql: `select strpos('foo@example.com', '@') as a, strpos('foo', 'z') as b, strpos(event_message, '200') as c from ${EDGE} where id = 'e01'`,
    expect: [{ a: 4, b: 0, c: 7 }],
  },
  {
    name: "LEFT and RIGHT",
    rule: "BigQuery string functions: LEFT(value, length), RIGHT(value, length)",
    sql: `select left('apple', 3) as l, right('apple', 3) as r, left('ab', 5) as l2, right(event_message, 5) as r2 from ${EDGE} where id = 'e01'`,
    expect: [{ l: "app", r: "ple", l2: "ab", r2: "8.4.0" }],
  },
  {
    name: "REVERSE",
    rule: "BigQuery string functions: REVERSE(value)",
    sql: `select reverse('abc') as a, reverse('') as b, reverse(cast(null as string)) as c`,
    expect: [{ a: "cba", b: "", c: null }],
  },
  {
    name: "CHAR_LENGTH counts characters, not bytes",
    rule: "BigQuery string functions: CHAR_LENGTH(value)",
    sql: `select char_length('añb') as a, char_length('') as b, char_length(event_message) as c from ${EDGE} where id = 'e01'`,
    expect: [{ a: 3, b: 0, c: 87 }],
  },
  {
    name: "FORMAT with a format string alone",
    rule: "BigQuery FORMAT(format_string): %% is a literal percent sign",
    sql: `select format('hello') as a, format('100%%') as b`,
    expect: [{ a: "hello", b: "100%" }],
  },
  {
    name: "ARRAY_LENGTH of a literal array and of an array field",
    rule: "BigQuery array functions: ARRAY_LENGTH(array_expression)",
    sql: `select id, array_length([1, 2, 3]) as a, array_length(b.detectionIds) as n from ${BOT} where id in ('e01', 'e02', 'e06')`,
    expect: [
      { id: "e01", a: 3, n: 2 },
      { id: "e02", a: 3, n: 0 },
      { id: "e06", a: 3, n: 3 },
    ],
  },
  {
    name: "ARRAY_TO_STRING of a literal array",
    rule: "BigQuery array functions: ARRAY_TO_STRING(array_expression, delimiter)",
    sql: `select array_to_string(['a', 'b', 'c'], '-') as s, array_to_string(split('x,y', ','), '+') as t`,
    expect: [{ s: "a-b-c", t: "x+y" }],
  },

  // ---------------------------------------------------------------- JSON text
  {
    name: "JSON_VALUE and JSON_EXTRACT_SCALAR without a path read the root",
    rule: "BigQuery JSON functions: json_path defaults to $; an object is not a scalar (NULL)",
    sql: `select json_value('{"a":1}') as v, json_extract_scalar('{"a":1}') as s`,
    expect: [{ v: null, s: null }],
  },
  {
    name: "JSON_QUERY and JSON_EXTRACT without a path return the whole value",
    rule: "BigQuery JSON functions: JSON_QUERY(json_string_expr), json_path defaults to $",
    sql: `select json_query('{"a":1}') as q, json_extract('[1,2]') as e`,
    expect: [{ q: '{"a":1}', e: "[1,2]" }],
  },
  {
    name: "JSON_EXTRACT with a path returns JSON text",
    rule: "BigQuery JSON functions: JSON_EXTRACT(json_string_expr, json_path)",
    sql: `select json_extract('{"a":{"b":2}}', '$.a') as o, json_extract('{"a":[1,2]}', '$.a[1]') as n, json_extract('{"a":1}', '$.z') as m`,
    expect: [{ o: '{"b":2}', n: "2", m: null }],
  },

  // ---------------------------------------------------------------- numbers
  {
    name: "TRUNC rounds toward zero",
    rule: "BigQuery mathematical functions: TRUNC(X)",
    sql: `select trunc(2.7) as a, trunc(-2.7) as b, trunc(5) as c`,
    expect: [{ a: 2, b: -2, c: 5 }],
  },
  {
    name: "TRUNC to a number of digits",
    rule: "BigQuery mathematical functions: TRUNC(X, N)",
    sql: `select trunc(7.12945, 2) as a, trunc(-7.12945, 3) as b, trunc(1234, -2) as c`,
    expect: [{ a: 7.12, b: -7.129, c: 1200 }],
  },
  {
    name: "SIGN of integers and floats",
    rule: "BigQuery mathematical functions: SIGN(X) is -1, 0 or +1 of X's type",
    sql: `select sign(-5) as a, sign(0) as b, sign(2.5) as c`,
    expect: [{ a: -1, b: 0, c: 1 }],
  },
  {
    name: "CEILING is CEIL",
    rule: "BigQuery mathematical functions: CEILING(X), the smallest integral value not less than X",
    sql: `select ceiling(1.2) as a, ceiling(-1.2) as b, ceiling(3) as c`,
    expect: [{ a: 2, b: -1, c: 3 }],
  },
  {
    name: "POWER is POW",
    rule: "BigQuery mathematical functions: POWER(X, Y)",
    sql: `select power(2, 10) as a, power(2.0, -1) as b, power(9, 0.5) as c`,
    expect: [{ a: 1024, b: 0.5, c: 3 }],
  },
  {
    name: "LN, LOG10 and EXP",
    rule: "BigQuery mathematical functions: LN(X), LOG10(X), EXP(X)",
    sql: `select ln(1) as a, log10(1000) as b, exp(0) as c, log10(0.01) as d`,
    expect: [{ a: 0, b: 3, c: 1, d: -2 }],
  },

  // ---------------------------------------------------------------- time
  {
    name: "TIMESTAMP_TRUNC to a day in a time zone",
    rule: "BigQuery TIMESTAMP_TRUNC(timestamp, DAY, time_zone): the day starts at midnight of the zone",
    sql: `select id, timestamp_trunc(timestamp, day, 'America/New_York') as t from ${EDGE} where id in ('e01', 'e11')`,
    expect: [
      { id: "e01", t: us("2025-01-15T05:00:00Z") },
      { id: "e11", t: us("2025-01-14T05:00:00Z") },
    ],
  },
  {
    name: "DATETIME(timestamp) is the UTC civil time",
    rule: "BigQuery DATETIME(timestamp_expression): time zone defaults to UTC",
    sql: `select id, datetime(timestamp) as dt from ${EDGE} where id in ('e01', 'e03')`,
    expect: [
      { id: "e01", dt: "2025-01-15T10:00:00" },
      { id: "e03", dt: "2025-01-15T10:30:00.500000" },
    ],
  },
  {
    name: "DATETIME(date) is midnight of that date",
    rule: "BigQuery DATETIME(date_expression)",
    sql: `select datetime(date(2025, 1, 5)) as a, datetime(date '2024-02-29') as b`,
    expect: [{ a: "2025-01-05T00:00:00", b: "2024-02-29T00:00:00" }],
  },
  {
    name: "DATE(datetime) drops the time",
    rule: "BigQuery DATE(datetime_expression)",
    sql: `select date(datetime(timestamp, 'America/New_York')) as d from ${EDGE} where id = 'e11'`,
    expect: [{ d: "2025-01-14" }],
  },
  {
    name: "TIMESTAMP of a TIMESTAMP, a DATETIME and a DATE",
    rule: "BigQuery TIMESTAMP(datetime_expression | date_expression): civil time read in UTC",
    sql: `select timestamp(timestamp) as a, timestamp(datetime '2025-01-05 10:30:00') as b, timestamp(date '2025-01-05') as c from ${EDGE} where id = 'e01'`,
    expect: [{ a: us("2025-01-15T10:00:00Z"), b: us("2025-01-05T10:30:00Z"), c: us("2025-01-05T00:00:00Z") }],
  },
  {
    name: "CURRENT_DATE in a time zone",
    rule: "BigQuery CURRENT_DATE(time_zone_expression); the request's pinned instant",
    sql: `select current_date('America/New_York') as d`,
    now: "2025-01-15T03:00:00Z",
    expect: [{ d: "2025-01-14" }],
  },
  {
    name: "CURRENT_DATETIME in UTC and in a time zone",
    rule: "BigQuery CURRENT_DATETIME([time_zone]); the request's pinned instant",
    sql: `select current_datetime() as a, current_datetime('Asia/Tokyo') as b`,
    now: "2025-01-15T20:00:00.123456Z",
    expect: [{ a: "2025-01-15T20:00:00.123456", b: "2025-01-16T05:00:00.123456" }],
  },
  {
    name: "DATE_TRUNC to MONTH and to WEEK (Sunday)",
    rule: "BigQuery DATE_TRUNC(date_expression, date_part): WEEK starts on Sunday",
    sql: `select date_trunc(date '2025-01-15', month) as m, date_trunc(date '2025-01-15', week) as w, date_trunc(date '2025-05-20', year) as y`,
    expect: [{ m: "2025-01-01", w: "2025-01-12", y: "2025-01-01" }],
  },
  {
    name: "DATETIME_TRUNC to HOUR and to DAY",
    rule: "BigQuery DATETIME_TRUNC(datetime_expression, date_part)",
    sql: `select datetime_trunc(datetime(timestamp, 'UTC'), hour) as h, datetime_trunc(datetime(timestamp, 'UTC'), day) as d from ${EDGE} where id = 'e04'`,
    expect: [{ h: "2025-01-15T10:00:00", d: "2025-01-15T00:00:00" }],
  },
  {
    name: "DATE_DIFF by DAY, MONTH and YEAR counts boundaries crossed",
    rule: "BigQuery DATE_DIFF(date_expression_a, date_expression_b, date_part): part boundaries between b and a",
    sql: `select date_diff(date '2025-01-15', date '2024-12-25', day) as d, date_diff(date '2025-01-01', date '2024-12-31', month) as m, date_diff(date '2025-01-01', date '2024-12-31', year) as y, date_diff(date '2024-12-25', date '2025-01-15', day) as neg`,
    expect: [{ d: 21, m: 1, y: 1, neg: -21 }],
  },
  {
    name: "DATE_SUB and DATE_ADD by days and months",
    rule: "BigQuery DATE_SUB / DATE_ADD(date_expression, INTERVAL int64 date_part): a month past the month's end is its last day",
    sql: `select date_sub(date '2025-01-01', interval 1 day) as a, date_add(date '2025-01-31', interval 1 month) as b, date_add(date '2024-12-25', interval 3 week) as c`,
    expect: [{ a: "2024-12-31", b: "2025-02-28", c: "2025-01-15" }],
  },
];
