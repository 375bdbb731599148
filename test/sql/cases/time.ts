import { col, EDGE, PG, REST, RT, type SqlCase, us } from "./case.ts";

/** CAST(FLOAT64 AS STRING) of the values of the case that names it */
const FLOAT_TEXTS = [
  "1",
  "0.1",
  "1e+21",
  "-1e+23",
  "123456789",
  "1e-7",
  "0.30000000000000004",
  "1000000",
  "0.000025",
  "1.5e+300",
  "0",
  "5e-324",
  "1.7976931348623157e+308",
  "-0.000001",
  "321157000000000000000",
  "nan",
  "inf",
  "-inf",
];

// CAST / SAFE_CAST, timestamp, datetime and date functions, and timestamps compared with string
// literals: BigQuery "Conversion functions", "Timestamp functions", "Datetime functions", "Date
// functions", "Format elements", "Array functions" (GENERATE_TIMESTAMP_ARRAY), and DESIGN.md §3
// (literal coercion) and §4 (wire values). CURRENT_TIMESTAMP() is pinned to 2025-01-15T12:00:00Z
// unless a case says otherwise.

const RESP = `${EDGE}, unnest(metadata) m, unnest(m.response) r`;
const HEADERS = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.headers) h`;
const BOT = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.cf) c, unnest(c.botManagement) b`;
const NOW = "DESIGN.md §5: CURRENT_TIMESTAMP() is taken once per request and bound (pinned in tests)";

export const timeCases: SqlCase[] = [
  {
    name: "CAST of text with hour 25 to TIMESTAMP is an error",
    rule: "BigQuery CAST AS TIMESTAMP: a time that does not exist is an error (ClickHouse rolled 25:00 over into the next day); SAFE_CAST gives NULL",
    sql: "select cast('2025-01-15 25:00:00' as timestamp) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE_CAST of text with a time that does not exist is NULL",
    rule: "BigQuery SAFE_CAST: NULL where CAST raises",
    sql: "select safe_cast('2025-01-15 25:00:00' as timestamp) as a, safe_cast('2025-01-15 10:61:00' as timestamp) as b",
    expect: [{ a: null, b: null }],
  },
  {
    name: "TIMESTAMP_ADD and _SUB of INT64 amounts past 2^31 in units below a day",
    rule: "BigQuery INTERVAL n unit: n is an INT64 (DuckDB cast it to INTEGER and refused 3,600,000,000 microseconds, an hour)",
    sql: "select timestamp_add(timestamp '2024-01-01', interval 3600000000 microsecond) as a, timestamp_sub(timestamp '2024-01-01', interval 2592000000 millisecond) as b, timestamp_add(timestamp '1970-01-01', interval 253402300799 second) as c",
    expect: [{ a: 1704070800000000, b: 1701475200000000, c: "253402300799000000" }],
  },
  {
    name: "DATETIME of an instant whose reading in the zone is past year 9999 is an error",
    rule: "BigQuery DATETIME / DATE / TIMESTAMP_TRUNC (timestamp, time_zone): a result outside 0001-01-01 … 9999-12-31 is an error (DuckDB answered year 10000, PostgreSQL '10000-01-01', ClickHouse clamped to 9999-12-31)",
    sql: "select datetime(timestamp '9999-12-31 23:59:59.999999 UTC', '+05:30') as a",
    expect: { error: "sql_invalid", message: /out of DATETIME's range/ },
  },
  {
    name: "DATE of an instant whose reading in the zone is past year 9999 is an error",
    rule: "BigQuery DATE(timestamp, time_zone): a result past 9999-12-31 is an error (ClickHouse clamped to 9999-12-31)",
    sql: "select date(timestamp '9999-12-31 23:59:59.999999 UTC', '+05:30') as a",
    expect: { error: "sql_invalid", message: /out of DATE's range/ },
  },
  {
    name: "TIMESTAMP_TRUNC in a zone whose reading is before year 1 is an error",
    rule: "BigQuery TIMESTAMP_TRUNC(timestamp, part, time_zone): the reading and the result stay in 0001-01-01 … 9999-12-31 UTC (PostgreSQL answered '0001-12-31 05:30:00+00 BC')",
    sql: "select timestamp_trunc(timestamp '0001-01-01 03:00:00 UTC', day, '+05:00') as a",
    expect: { error: "sql_invalid", message: /out of TIMESTAMP's range/ },
  },
  {
    name: "TIMESTAMP of a civil time placed in a zone before year 1 is an error",
    rule: "BigQuery TIMESTAMP(datetime, time_zone): an instant before 0001-01-01 00:00:00 UTC is an error (PostgreSQL answered '0001-12-31 19:00:00+00 BC')",
    sql: "select timestamp(datetime '0001-01-01 00:00:00', '+05:00') as a",
    expect: { error: "sql_invalid", message: /out of TIMESTAMP's range/ },
  },
  {
    name: "readings in a zone at the edges of the range that stay inside it",
    rule: "BigQuery DATETIME / DATE / TIMESTAMP / TIMESTAMP_TRUNC with a time zone: a result inside 0001-01-01 … 9999-12-31 is answered; SAFE. makes the error NULL",
    sql: "select datetime(timestamp '9999-12-31 18:29:59.999999 UTC', '+05:30') as a, date(timestamp '0001-01-01 05:00:00 UTC', 'America/New_York') as b, timestamp(datetime '0001-01-01 05:00:00', '+05:00') as c, timestamp_trunc(timestamp '9999-12-31 10:00:00 UTC', year, 'Asia/Tokyo') as d, safe.datetime(timestamp '9999-12-31 23:59:59.999999 UTC', '+05:30') as e, timestamp(date '9999-12-31', '-05:00') as f, datetime(cast(null as timestamp), '+05:00') as g",
    expect: [
      {
        a: "9999-12-31T23:59:59.999999",
        b: "0001-01-01",
        c: "-62135596800000000",
        d: "253370732400000000",
        e: null,
        f: "253402232400000000",
        g: null,
      },
    ],
  },
  {
    name: "CAST and TIMESTAMP of text whose zone is a tz database name after the time",
    rule: "BigQuery timestamp literal / CAST(STRING AS TIMESTAMP): `YYYY-[M]M-[D]D [[H]H:[M]M:[S]S[.F]] [time_zone]`, where the zone may be a tz database name ('2014-09-27 12:30:00.45 America/Los_Angeles'); DuckDB and ClickHouse refused the text",
    sql: "select cast('2024-01-01 10:00:00 America/New_York' as timestamp) as a, timestamp('2024-07-01 10:00:00 Europe/Berlin') as b, cast('2024-1-1T10:00 America/New_York' as timestamp) as c, safe_cast('2024-01-01 10:00:00 Mars/Base' as timestamp) as d, safe_cast('2024-02-30 10:00:00 Europe/Berlin' as timestamp) as e",
    expect: [{ a: 1704121200000000, b: 1719820800000000, c: 1704121200000000, d: null, e: null }],
  },
  {
    name: "CAST of text whose zone is no tz database name is an error",
    rule: "BigQuery CAST(STRING AS TIMESTAMP): an unknown time zone is an error",
    sql: "select cast('2024-01-01 10:00:00 Mars/Base' as timestamp) as a",
    expect: { error: "sql_invalid", message: /time zone/ },
  },
  {
    name: "SAFE_CAST of date and time text with single-digit fields, and with whitespace around it",
    rule: "BigQuery CAST(STRING AS DATE / DATETIME / TIMESTAMP): the text is the literal's canonical format, `YYYY-[M]M-[D]D[( |T)[H]H:[M]M:[S]S[.F]]` (ZetaSQL ConvertStringToDate reads it from its first character to its last): a one-digit month or day is read (PostgreSQL answered NULL), surrounding whitespace is not (DuckDB and ClickHouse trimmed it)",
    sql: "select safe_cast(' 2024-1-5 ' as date) as a, safe_cast('2024-1-5' as date) as b, safe_cast(' 2024-01-05' as date) as c, safe_cast('2024-01-05 ' as date) as d, safe_cast(' 2024-1-5 1:2:3 ' as datetime) as e, safe_cast(' 2024-1-5 1:2:3 ' as timestamp) as f, safe_cast('2024-1-5 1:2:3' as datetime) as g, safe_cast('2024-1-5 1:2:3.5+1' as timestamp) as h, safe_cast('2024-2-30' as date) as i",
    expect: [
      {
        a: null,
        b: "2024-01-05",
        c: null,
        d: null,
        e: null,
        f: null,
        g: "2024-01-05T01:02:03",
        h: 1704412923500000,
        i: null,
      },
    ],
  },
  {
    name: "CAST of date text with whitespace around it is an error",
    rule: "BigQuery CAST(STRING AS DATE): text outside the canonical format is an error (DuckDB, ClickHouse and PostgreSQL trimmed it)",
    sql: "select cast(' 2024-01-05' as date) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "DATE_TRUNC, DATETIME_TRUNC and TIMESTAMP_TRUNC to a week starting before year 1 are errors",
    rule: "BigQuery DATE_TRUNC / DATETIME_TRUNC / TIMESTAMP_TRUNC: a result outside 0001-01-01 … 9999-12-31 is an error (WEEK of 0001-01-01, a Monday, starts on 0000-12-31: DuckDB and ClickHouse answered year 0, PostgreSQL '0001-12-31 BC')",
    sql: "select date_trunc(date '0001-01-01', week) as a",
    expect: { error: "sql_invalid", message: /out of DATE's range/ },
  },
  {
    name: "TIMESTAMP_TRUNC to a week starting before year 1 is an error, and truncations near year 1 inside the range are answered",
    rule: "BigQuery TIMESTAMP_TRUNC: a result before 0001-01-01 00:00:00 UTC is an error; SAFE. makes it NULL",
    sql: "select timestamp_trunc(timestamp '0001-01-01 00:00:00', isoweek) as a, date_trunc(date '0001-01-07', week) as b, safe.date_trunc(date '0001-01-01', week) as c, safe.timestamp_trunc(timestamp '0001-01-01 00:00:00', week) as d, datetime_trunc(datetime '0001-01-02 10:00:00', day) as e",
    expect: [{ a: "-62135596800000000", b: "0001-01-07", c: null, d: null, e: "0001-01-02T00:00:00" }],
  },
  {
    name: "TIMESTAMP_ADD past year 9999 is an error",
    rule: "BigQuery TIMESTAMP_ADD / _SUB, DATE_ADD / _SUB: a result outside the type's range is an error (PostgreSQL answered '10000-01-01 01:00:00+00', DuckDB year 10000)",
    sql: "select timestamp_add(timestamp '9999-12-31 23:00:00', interval 2 hour) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "TIMESTAMP_SUB before year 1 is an error",
    rule: "BigQuery TIMESTAMP_SUB: a result outside TIMESTAMP's range is an error (PostgreSQL answered '0001-12-31 00:00:00+00 BC')",
    sql: "select timestamp_sub(timestamp '0001-01-01 00:00:00', interval 1 day) as a",
    expect: { error: "sql_invalid" },
  },
  // ClickHouse's Date32 and DateTime64 arithmetic saturates at its range's end instead of failing:
  // it answered 9999-12-31 for these, 0000-12-31 or 0000-01-01 before year 1, and a TIMESTAMP_ADD by
  // DAY stayed where it was
  ...(
    [
      ["DATE_ADD of a DAY past 9999-12-31", "date_add(date '9999-12-31', interval 1 day)"],
      ["DATE_ADD of a WEEK past 9999-12-31", "date_add(date '9999-12-25', interval 1 week)"],
      ["DATE_ADD of a MONTH past 9999-12", "date_add(date '9999-12-01', interval 1 month)"],
      ["DATE_ADD of a QUARTER past 9999-12", "date_add(date '9999-10-15', interval 1 quarter)"],
      ["DATE_ADD of a YEAR past 9999", "date_add(date '9999-01-01', interval 1 year)"],
      ["DATE_ADD of 3,000,000 days", "date_add(date '2025-01-01', interval 3000000 day)"],
      ["DATE_ADD of 8,000 years", "date_add(date '2025-01-01', interval 8000 year)"],
      ["DATE_SUB of a DAY before 0001-01-01", "date_sub(date '0001-01-01', interval 1 day)"],
      ["DATE_SUB of a MONTH before 0001-01", "date_sub(date '0001-01-31', interval 1 month)"],
      ["DATE_SUB of 2,025 years", "date_sub(date '2025-01-01', interval 2025 year)"],
      ["DATE_ADD of -3,000,000 days", "date_add(date '2025-01-01', interval -3000000 day)"],
      [
        "TIMESTAMP_ADD of a DAY past 9999-12-31",
        "timestamp_add(timestamp '9999-12-31 00:00:00', interval 1 day)",
      ],
      ["TIMESTAMP_ADD of 3,000,000 days", "timestamp_add(timestamp '2025-01-01', interval 3000000 day)"],
      ["TIMESTAMP_SUB of 3,000,000 days", "timestamp_sub(timestamp '2025-01-01', interval 3000000 day)"],
      ["DATE + INTERVAL past 9999-12-31", "date '9999-12-31' + interval 1 day"],
    ] as const
  ).map(
    ([what, expr]): SqlCase => ({
      name: `${what} is an error`,
      rule: "BigQuery DATE_ADD / DATE_SUB / TIMESTAMP_ADD / TIMESTAMP_SUB: a result outside the type's range (0001-01-01 … 9999-12-31) is an error (ClickHouse answered the range's end)",
      sql: `select ${expr} as a`,
      expect: { error: "sql_invalid" },
    }),
  ),
  {
    name: "DATE_ADD, DATE_SUB and TIMESTAMP_ADD up to the ends of the range",
    rule: "BigQuery DATE_ADD / DATE_SUB / TIMESTAMP_ADD: a result on the range's first or last day is a value; a month's last day is kept where the next month is shorter",
    sql: "select date_add(date '9999-12-30', interval 1 day) as a, date_add(date '9999-11-30', interval 1 month) as b, date_sub(date '0001-02-28', interval 1 month) as c, date_add(date '0001-12-31', interval 9998 year) as d, date_sub(date '0001-01-08', interval 1 week) as e, timestamp_add(timestamp '9999-12-30 23:59:59.999999', interval 1 day) as f, timestamp_sub(timestamp '0001-01-01 00:00:01', interval 1000000 microsecond) as g, date_add(date '2025-01-31', interval 1 quarter) as h",
    expect: [
      {
        a: "9999-12-31",
        b: "9999-12-30",
        c: "0001-01-28",
        d: "9999-12-31",
        e: "0001-01-01",
        f: "253402300799999999",
        g: "-62135596800000000",
        h: "2025-04-30",
      },
    ],
  },
  {
    name: "TIMESTAMP_SECONDS of the first and last second of the range",
    rule: "BigQuery TIMESTAMP_SECONDS: 0001-01-01 00:00:00 and 9999-12-31 23:59:59 are values (one second further is an error); µs beyond 2^53 are text on the wire (DESIGN.md §4)",
    sql: "select timestamp_seconds(253402300799) as a, timestamp_seconds(-62135596800) as b",
    expect: [{ a: "253402300799000000", b: "-62135596800000000" }],
  },
  {
    name: "TIMESTAMP_MICROS and TIMESTAMP_MILLIS at the ends of the range",
    rule: "BigQuery TIMESTAMP_MICROS / _MILLIS: the first and last instants of TIMESTAMP's range are values, exact to the unit (PostgreSQL's bigint * interval rounded in float8: year 10000, .999008)",
    sql: "select timestamp_micros(253402300799999999) as a, timestamp_millis(253402300799999) as b, timestamp_micros(-62135596800000000) as c, timestamp_millis(-62135596800000) as d, timestamp_micros(-1234567) as e, timestamp_millis(-1) as f",
    expect: [
      {
        a: "253402300799999999",
        b: "253402300799999000",
        c: "-62135596800000000",
        d: "-62135596800000000",
        e: -1234567,
        f: -1000,
      },
    ],
  },
  {
    name: "TIMESTAMP_SECONDS before year 1 is an error",
    rule: "BigQuery TIMESTAMP_SECONDS: a value outside TIMESTAMP's range is an error",
    sql: "select timestamp_seconds(-62135596801) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "DATE_TRUNC, DATETIME_TRUNC and TIMESTAMP_TRUNC to ISOYEAR",
    rule: "BigQuery ISOYEAR truncation: the Monday of the ISO year's first week (the week of January 4th)",
    sql: "select date_trunc(date '2025-01-15', isoyear) as a, date_trunc(date '2021-01-02', isoyear) as b, datetime_trunc(datetime '2026-01-01 05:00:00', isoyear) as c, timestamp_trunc(timestamp '2021-01-03 10:00:00', isoyear) as d, timestamp_trunc(timestamp '2021-01-04 03:00:00', isoyear, 'Asia/Tokyo') as e",
    expect: [
      {
        a: "2024-12-30",
        b: "2019-12-30",
        c: "2025-12-29T00:00:00",
        d: us("2019-12-30T00:00:00Z"),
        e: us("2021-01-03T15:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP of a date-only text, in a zone",
    rule: "BigQuery TIMESTAMP(string[, zone]): a date alone is its midnight in the zone; its day is no UTC offset ('2025-01-15' is not 2025-01 at -15:00)",
    sql: "select timestamp('2025-01-15') as a, timestamp('2025-01-15', 'Asia/Tokyo') as b, cast('2025-01-15' as timestamp) as c",
    expect: [{ a: us("2025-01-15T00:00:00Z"), b: us("2025-01-14T15:00:00Z"), c: us("2025-01-15T00:00:00Z") }],
  },
  {
    name: "TIMESTAMP_SECONDS past year 9999 is an error",
    rule: "BigQuery TIMESTAMP_SECONDS / _MILLIS / _MICROS: a value outside TIMESTAMP's range (0001-01-01 … 9999-12-31) is an error",
    sql: "select timestamp_seconds(253402300800) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "TIMESTAMP_MICROS before year 1 is an error",
    rule: "BigQuery TIMESTAMP_MICROS: a value outside TIMESTAMP's range is an error",
    sql: "select timestamp_micros(-62135596800000001) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP of text that does not match is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format (SAFE.PARSE_TIMESTAMP is NULL)",
    sql: "select parse_timestamp('%Y-%m-%d', 'garbage') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "DATE of a day that does not exist is an error",
    rule: "BigQuery DATE(year, month, day): an invalid date is an error (ClickHouse's makeDate32 rolled 2025-02-29 over to March 1)",
    sql: "select date(2025, 2, 29) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY with a step of 0 is an error",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY: an error if step_expression is 0",
    sql: "select generate_timestamp_array(timestamp '2025-01-15', timestamp '2025-01-16', interval 0 hour) as a",
    expect: { error: "sql_invalid", message: /step must not be 0/ },
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY with a step of 0 between equal ends is the step's error",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY: an error if step_expression is 0 (DuckDB and PostgreSQL said the array would have more than 1000000 elements, PostgreSQL inside 'invalid input syntax for type integer')",
    sql: "select generate_timestamp_array(timestamp '2025-01-15', timestamp '2025-01-15', interval 0 microsecond) as a",
    expect: { error: "sql_invalid", message: /step must not be 0/ },
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY by MONTH is refused",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY: the step's part is MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR or DAY (DuckDB and PostgreSQL stepped by months, ClickHouse refused)",
    sql: "select generate_timestamp_array(timestamp '2025-01-15', timestamp '2025-03-15', interval 1 month) as a",
    expect: { error: "sql_invalid", message: /MICROSECOND to DAY, not MONTH/ },
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY with a NULL step, and SAFE. with a step of 0, is a NULL array",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY: NULL if any argument is NULL; SAFE. answers NULL for the error (a result shows a NULL array as []; DuckDB raised 'more than 1000000 elements' for the NULL step, ClickHouse raised under SAFE.)",
    sql: "select generate_timestamp_array(timestamp '2025-01-15', timestamp '2025-01-16', interval null hour) as a, safe.generate_timestamp_array(timestamp '2025-01-15', timestamp '2025-01-16', interval 0 hour) as b",
    expect: [{ a: [], b: [] }],
  },
  // ---------------------------------------------------------------- CAST and SAFE_CAST
  {
    name: "CAST INT64 AS STRING",
    rule: "BigQuery CAST AS STRING",
    sql: `select cast(r.status_code as string) as s from ${RESP} where id = 'e01'`,
    expect: [{ s: "200" }],
  },
  {
    name: "CAST STRING AS INT64",
    rule: "BigQuery CAST AS INT64",
    sql: `select cast(h.content_length as int64) as n from ${HEADERS} where id = 'e02'`,
    expect: [{ n: 512 }],
  },
  {
    name: "CAST a hex STRING AS INT64",
    rule: "BigQuery CAST AS INT64: a hex string can be cast to an integer",
    sql: `select cast('0x1F' as int64) as a, cast('-0x123' as int64) as b`,
    expect: [{ a: 31, b: -291 }],
  },
  {
    name: "SAFE_CAST of an invalid integer is NULL",
    rule: "BigQuery SAFE_CAST: NULL instead of an error",
    sql: `select safe_cast('abc' as int64) as a, safe_cast('12.5' as int64) as b`,
    expect: [{ a: null, b: null }],
  },
  {
    name: "CAST FLOAT64 AS INT64 rounds halfway cases away from zero",
    rule: "BigQuery CAST AS INT64: closest integer; halfway cases round away from zero",
    sql: `select cast(2.5 as int64) as a, cast(-2.5 as int64) as b, cast(1.4 as int64) as c, cast(0.5 as int64) as d`,
    expect: [{ a: 3, b: -3, c: 1, d: 1 }],
  },
  {
    name: "CAST STRING AS FLOAT64",
    rule: "BigQuery CAST AS FLOAT64; SAFE_CAST",
    sql: `select cast('3.5' as float64) as a, cast('1e3' as float64) as b, safe_cast('x' as float64) as c`,
    expect: [{ a: 3.5, b: 1000, c: null }],
  },
  {
    // each engine's own cast spelled these three ways (DuckDB `1.0`, `2.5e-05`; PostgreSQL
    // `9.999999999999999e+22` for 1e23; ClickHouse `1e21`): now core's spelling of a number on
    // every backend, which is what a STRING column holds for a number shaped from an event
    name: "CAST FLOAT64 AS STRING spells a number alike on every backend",
    rule: "BigQuery CAST(FLOAT64 AS STRING): the shortest digits that read back; nan, inf, -inf; the same text on every backend (DESIGN.md §3)",
    sql:
      "select array_agg(cast(cast(x as float64) as string) order by o) as s, array_agg(format('%t', cast(x as float64)) order by o) as t " +
      "from unnest(['1.0', '0.1', '1e21', '-1e23', '123456789', '1e-7', '0.30000000000000004', '1e6', '2.5e-5', '1.5e300', '-0', " +
      "'5e-324', '1.7976931348623157e308', '-0.000001', '3.21157e20', 'nan', 'inf', '-inf']) as x with offset o",
    expect: [{ s: FLOAT_TEXTS, t: FLOAT_TEXTS }],
  },
  {
    name: "CAST INT64 AS FLOAT64",
    rule: "BigQuery CAST AS FLOAT64",
    sql: `select cast(r.status_code as float64) / 8 as f from ${RESP} where id = 'e01'`,
    expect: [{ f: 25 }],
  },
  {
    name: "CAST STRING AS BOOL accepts only true and false, in any case",
    rule: 'BigQuery CAST AS BOOL: "true"/"false", case-insensitive; other strings are invalid',
    sql: `select cast('true' as bool) as a, cast('FALSE' as bool) as b, safe_cast('yes' as bool) as c, safe_cast('1' as bool) as d, safe_cast('t' as bool) as e`,
    expect: [{ a: true, b: false, c: null, d: null, e: null }],
  },
  {
    name: "CAST of other text AS BOOL is an error",
    rule: 'BigQuery CAST AS BOOL: a STRING other than "true"/"false" raises ("Bad bool value"), as CAST AS INT64 of bad text does; SAFE_CAST gives NULL (CAST answered NULL on every backend)',
    sql: "select cast(x as bool) as b from unnest(['true', 't']) as x",
    expect: { error: "sql_invalid", message: /Bad bool value/ },
  },
  {
    name: "CAST between INT64 and BOOL",
    rule: "BigQuery CAST AS BOOL (0 is FALSE) and CAST AS INT64 (TRUE is 1)",
    sql: `select cast(0 as bool) as a, cast(5 as bool) as b, cast(true as int64) as c, cast(false as int64) as d`,
    expect: [{ a: false, b: true, c: 1, d: 0 }],
  },
  {
    name: "CAST BOOL AS STRING",
    rule: 'BigQuery CAST AS STRING: "true" / "false"',
    sql: `select id, cast(b.verifiedBot as string) as s from ${BOT} where id in ('e03', 'e04')`,
    expect: [
      { id: "e03", s: "false" },
      { id: "e04", s: "true" },
    ],
  },
  {
    name: "CAST TIMESTAMP AS STRING",
    rule: "BigQuery CAST AS STRING: UTC, with zero, three or six subsecond digits, suffix +00",
    sql: `select id, cast(timestamp as string) as s from ${EDGE} where id in ('e01', 'e03', 'e04')`,
    expect: [
      { id: "e01", s: "2025-01-15 10:00:00+00" },
      { id: "e03", s: "2025-01-15 10:30:00.500+00" },
      { id: "e04", s: "2025-01-15 10:59:59.999999+00" },
    ],
  },
  {
    name: "CAST STRING AS TIMESTAMP in canonical forms",
    rule: "BigQuery CAST AS TIMESTAMP: canonical timestamp format, no zone = UTC",
    sql: `select cast('2025-01-15 10:00:00' as timestamp) as a, cast('2025-01-15 11:00:00+01:00' as timestamp) as b, cast('2025-01-15T10:00:00.000001Z' as timestamp) as c, cast('2025-01-15 10:00:00 UTC' as timestamp) as d`,
    expect: [
      {
        a: us("2025-01-15T10:00:00Z"),
        b: us("2025-01-15T10:00:00Z"),
        c: us("2025-01-15T10:00:00.000001Z"),
        d: us("2025-01-15T10:00:00Z"),
      },
    ],
  },
  {
    name: "SAFE_CAST of an invalid timestamp or date is NULL",
    rule: "BigQuery SAFE_CAST: NULL instead of an error",
    sql: `select safe_cast('not a time' as timestamp) as a, safe_cast('2025-13-01' as date) as b, safe_cast('2025-02-30' as date) as c`,
    expect: [{ a: null, b: null, c: null }],
  },
  {
    name: "CAST TIMESTAMP AS DATETIME and DATE",
    rule: "BigQuery CAST AS DATETIME / DATE (UTC); DESIGN.md §4 DATETIME and DATE wire values",
    sql: `select cast(timestamp as datetime) as dt, cast(timestamp as date) as d from ${EDGE} where id = 'e03'`,
    expect: [{ dt: "2025-01-15T10:30:00.500000", d: "2025-01-15" }],
  },
  {
    name: "CAST STRING AS DATETIME and DATE",
    rule: "BigQuery CAST AS DATETIME / DATE: canonical literal formats ([M]M-[D]D allowed)",
    sql: `select cast('2025-01-15 10:00:00.25' as datetime) as a, cast('2025-01-15 10:00:00' as datetime) as b, cast('2025-1-5' as date) as c`,
    expect: [{ a: "2025-01-15T10:00:00.250000", b: "2025-01-15T10:00:00", c: "2025-01-05" }],
  },
  {
    name: "CAST DATETIME and DATE AS TIMESTAMP",
    rule: "BigQuery CAST AS TIMESTAMP from DATETIME / DATE (default time zone UTC)",
    sql: `select cast(datetime '2025-01-15 10:00:00' as timestamp) as a, cast(date '2025-01-15' as timestamp) as b`,
    expect: [{ a: us("2025-01-15T10:00:00Z"), b: us("2025-01-15T00:00:00Z") }],
  },
  {
    name: "CAST DATETIME and DATE AS STRING",
    rule: "BigQuery CAST AS STRING: DATETIME 'YYYY-MM-DD HH:MM:SS', DATE 'YYYY-MM-DD'",
    sql: `select cast(datetime '2025-01-15 10:00:00' as string) as a, cast(date '2025-01-05' as string) as b`,
    expect: [{ a: "2025-01-15 10:00:00", b: "2025-01-05" }],
  },
  {
    name: "DATETIME and DATE literals",
    rule: "BigQuery lexical: DATETIME and DATE literals; DESIGN.md §4 wire values",
    sql: `select datetime '2025-01-15 10:00:00' as a, datetime '2025-01-15 10:00:00.000001' as b, date '2025-01-15' as c`,
    expect: [{ a: "2025-01-15T10:00:00", b: "2025-01-15T10:00:00.000001", c: "2025-01-15" }],
  },

  // ---------------------------------------------------------------- CURRENT_TIMESTAMP and windows
  {
    name: "CURRENT_TIMESTAMP() is the pinned request time",
    rule: NOW,
    sql: `select current_timestamp() as now`,
    expect: [{ now: us("2025-01-15T12:00:00Z") }],
  },
  {
    name: "CURRENT_TIMESTAMP without parentheses",
    rule: "BigQuery CURRENT_TIMESTAMP: parentheses are optional",
    sql: `select current_timestamp as now`,
    expect: [{ now: us("2025-01-15T12:00:00Z") }],
  },
  {
    name: "CURRENT_TIMESTAMP keeps microseconds of the request time",
    rule: NOW,
    sql: `select current_timestamp() as now`,
    now: "2025-01-15T11:30:00.123456Z",
    expect: [{ now: us("2025-01-15T11:30:00.123456Z") }],
  },
  {
    name: "CURRENT_DATE follows the pinned request time",
    rule: `${NOW}; BigQuery CURRENT_DATE (UTC)`,
    sql: `select current_date() as d`,
    now: "2025-01-15T23:59:59.999999Z",
    expect: [{ d: "2025-01-15" }],
  },
  {
    name: "last hour, exclusive: the event exactly one hour old is out",
    rule: `${NOW}; BigQuery TIMESTAMP_SUB; > is strict`,
    sql: `select id from ${EDGE} where timestamp > timestamp_sub(current_timestamp(), interval 1 hour)`,
    expect: col("id", "e06", "e07", "e08", "e09"),
  },
  {
    name: "last hour, inclusive: the event exactly one hour old is in",
    rule: `${NOW}; BigQuery TIMESTAMP_SUB; >= includes the boundary`,
    sql: `select id from ${EDGE} where timestamp >= timestamp_sub(current_timestamp(), interval 1 hour)`,
    expect: col("id", "e05", "e06", "e07", "e08", "e09"),
  },
  {
    name: "a 30-minute window from a request time with microseconds",
    rule: `${NOW}; BigQuery TIMESTAMP_SUB`,
    sql: `select id from ${EDGE} where timestamp > timestamp_sub(current_timestamp(), interval 30 minute)`,
    now: "2025-01-15T11:30:00.123456Z",
    expect: col("id", "e06", "e07", "e08", "e09"),
  },
  {
    name: "TIMESTAMP_SUB in hours across midnight",
    rule: `${NOW}; BigQuery TIMESTAMP_SUB`,
    sql: `select count(*) as n from ${EDGE} where timestamp >= timestamp_sub(current_timestamp(), interval 12 hour)`,
    expect: [{ n: 11 }],
  },
  {
    name: "TIMESTAMP_SUB of a day",
    rule: `${NOW}; BigQuery TIMESTAMP_SUB: DAY is 24 hours`,
    sql: `select timestamp_sub(current_timestamp(), interval 1 day) as t`,
    expect: [{ t: us("2025-01-14T12:00:00Z") }],
  },
  {
    name: "TIMESTAMP_ADD of a microsecond reaches the next hour",
    rule: "BigQuery TIMESTAMP_ADD: MICROSECOND; TIMESTAMP literals",
    sql: `select id from ${EDGE} where timestamp_add(timestamp, interval 1 microsecond) = timestamp '2025-01-15 11:00:00'`,
    expect: col("id", "e04"),
  },
  {
    name: "TIMESTAMP_ADD in minutes",
    rule: "BigQuery TIMESTAMP_ADD: MINUTE",
    sql: `select timestamp_add(timestamp, interval 90 minute) as t from ${EDGE} where id = 'e01'`,
    expect: [{ t: us("2025-01-15T11:30:00Z") }],
  },
  {
    name: "TIMESTAMP_SUB of a millisecond",
    rule: "BigQuery TIMESTAMP_SUB: MILLISECOND",
    sql: `select timestamp_sub(timestamp '2025-01-15 10:00:00', interval 1 millisecond) as t`,
    expect: [{ t: us("2025-01-15T09:59:59.999Z") }],
  },
  {
    name: "TIMESTAMP + INTERVAL",
    rule: "BigQuery operators: TIMESTAMP + INTERVAL",
    sql: `select timestamp + interval 1 hour as t from ${REST} where id = 't01'`,
    expect: [{ t: us("2025-01-15T11:00:00Z") }],
  },

  // ---------------------------------------------------------------- TIMESTAMP_TRUNC
  {
    name: "TIMESTAMP_TRUNC to second, minute, hour, day at a microsecond before the hour",
    rule: "BigQuery TIMESTAMP_TRUNC: rounds down to the start of the part",
    sql: `select timestamp_trunc(timestamp, second) as s, timestamp_trunc(timestamp, minute) as mi, timestamp_trunc(timestamp, hour) as h, timestamp_trunc(timestamp, day) as d from ${EDGE} where id = 'e04'`,
    expect: [
      {
        s: us("2025-01-15T10:59:59Z"),
        mi: us("2025-01-15T10:59:00Z"),
        h: us("2025-01-15T10:00:00Z"),
        d: us("2025-01-15T00:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP_TRUNC to millisecond",
    rule: "BigQuery TIMESTAMP_TRUNC: MILLISECOND",
    sql: `select timestamp_trunc(timestamp, millisecond) as ms from ${EDGE} where id = 'e12'`,
    expect: [{ ms: us("2025-01-15T09:00:00.123Z") }],
  },
  {
    name: "TIMESTAMP_TRUNC to week, ISO week, week(monday), month and year",
    rule: "BigQuery TIMESTAMP_TRUNC: WEEK starts Sunday, ISOWEEK and WEEK(MONDAY) Monday",
    sql: `select timestamp_trunc(timestamp, week) as w, timestamp_trunc(timestamp, isoweek) as iw, timestamp_trunc(timestamp, week(monday)) as wm, timestamp_trunc(timestamp, month) as mo, timestamp_trunc(timestamp, quarter) as qu, timestamp_trunc(timestamp, year) as y from ${EDGE} where id = 'e10'`,
    expect: [
      {
        w: us("2025-01-12T00:00:00Z"),
        iw: us("2025-01-13T00:00:00Z"),
        wm: us("2025-01-13T00:00:00Z"),
        mo: us("2025-01-01T00:00:00Z"),
        qu: us("2025-01-01T00:00:00Z"),
        y: us("2025-01-01T00:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP_TRUNC of a string literal",
    rule: "BigQuery literal coercion: a STRING literal argument is coerced to TIMESTAMP",
    sql: `select timestamp_trunc('2025-01-15 10:45:00', hour) as h`,
    expect: [{ h: us("2025-01-15T10:00:00Z") }],
  },
  {
    name: "TIMESTAMP_TRUNC to day at the microsecond before midnight",
    rule: "BigQuery TIMESTAMP_TRUNC: DAY (UTC)",
    sql: `select id, timestamp_trunc(timestamp, day) as d from ${EDGE} where id in ('e10', 'e11')`,
    expect: [
      { id: "e10", d: us("2025-01-14T00:00:00Z") },
      { id: "e11", d: us("2025-01-15T00:00:00Z") },
    ],
  },

  // ---------------------------------------------------------------- TIMESTAMP_DIFF
  {
    name: "TIMESTAMP_DIFF counts whole parts",
    rule: "BigQuery TIMESTAMP_DIFF: the whole number of part intervals",
    sql: `select
  timestamp_diff(timestamp '2025-01-15 10:59:59.999999', timestamp '2025-01-15 10:00:00', microsecond) as us_,
  timestamp_diff(timestamp '2025-01-15 10:59:59.999999', timestamp '2025-01-15 10:00:00', millisecond) as ms,
  timestamp_diff(timestamp '2025-01-15 10:59:59.999999', timestamp '2025-01-15 10:00:00', second) as s,
  timestamp_diff(timestamp '2025-01-15 10:59:59.999999', timestamp '2025-01-15 10:00:00', minute) as mi,
  timestamp_diff(timestamp '2025-01-15 10:59:59.999999', timestamp '2025-01-15 10:00:00', hour) as h`,
    expect: [{ us_: 3599999999, ms: 3599999, s: 3599, mi: 59, h: 0 }],
  },
  {
    name: "TIMESTAMP_DIFF of an earlier first argument is negative, truncated toward zero",
    rule: "BigQuery TIMESTAMP_DIFF: negative when the first timestamp is earlier; whole intervals",
    sql: `select
  timestamp_diff(timestamp '2025-01-15 10:00:00', timestamp '2025-01-15 10:59:59.999999', second) as s,
  timestamp_diff(timestamp '2025-01-15 10:00:00', timestamp '2025-01-15 10:59:59.999999', minute) as mi,
  timestamp_diff(timestamp '2025-01-15 10:00:00', timestamp '2025-01-15 10:59:59.999999', hour) as h`,
    expect: [{ s: -3599, mi: -59, h: 0 }],
  },
  {
    name: "TIMESTAMP_DIFF in days",
    rule: "BigQuery TIMESTAMP_DIFF: DAY is 24 hours (documented example −61)",
    sql: `select timestamp_diff(timestamp '2018-08-14', timestamp '2018-10-14', day) as a, timestamp_diff(timestamp '2025-01-15 12:00:00', timestamp '2025-01-14 23:59:59.999999', day) as b`,
    expect: [{ a: -61, b: 0 }],
  },
  {
    name: "TIMESTAMP_DIFF of string literals",
    rule: "BigQuery TIMESTAMP_DIFF documented example: string literals coerced, 0 whole hours",
    sql: `select timestamp_diff('2001-02-01 01:00:00', '2001-02-01 00:00:01', hour) as diff`,
    expect: [{ diff: 0 }],
  },
  {
    name: "the age of events in minutes",
    rule: `${NOW}; BigQuery TIMESTAMP_DIFF`,
    sql: `select id, timestamp_diff(current_timestamp(), timestamp, minute) as age from ${EDGE} where project = 'beta'`,
    expect: [
      { id: "e06", age: 45 },
      { id: "e07", age: 40 },
      { id: "e08", age: 15 },
    ],
  },

  // ---------------------------------------------------------------- unix conversions
  {
    name: "TIMESTAMP_MICROS, TIMESTAMP_MILLIS, TIMESTAMP_SECONDS",
    rule: "BigQuery TIMESTAMP_MICROS / _MILLIS / _SECONDS",
    sql: `select timestamp_micros(1736935200000001) as a, timestamp_millis(1736935200123) as b, timestamp_seconds(1736935200) as c`,
    expect: [
      {
        a: us("2025-01-15T10:00:00.000001Z"),
        b: us("2025-01-15T10:00:00.123Z"),
        c: us("2025-01-15T10:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP_MICROS of a field holding µs",
    rule: "BigQuery TIMESTAMP_MICROS; log-event-shapes.md realtime context.time is µs",
    sql: `select id, timestamp_micros(c.time) as t from ${RT}, unnest(metadata) m, unnest(m.context) c`,
    expect: [
      { id: "r02", t: us("2025-01-15T10:01:00Z") },
      { id: "r04", t: us("2025-01-15T10:03:00Z") },
    ],
  },
  {
    name: "UNIX_MICROS, UNIX_MILLIS and UNIX_SECONDS round down",
    rule: "BigQuery UNIX_MICROS / _MILLIS / _SECONDS: truncate by rounding down",
    sql: `select unix_micros(timestamp) as a, unix_millis(timestamp) as b, unix_seconds(timestamp) as c from ${EDGE} where id = 'e04'`,
    expect: [{ a: 1736938799999999, b: 1736938799999, c: 1736938799 }],
  },
  {
    name: "UNIX_SECONDS before 1970 rounds down, not toward zero",
    rule: "BigQuery UNIX_SECONDS / UNIX_MILLIS: rounding down to the beginning of the second / millisecond",
    sql: `select unix_seconds(timestamp '1969-12-31 23:59:59.5') as s, unix_millis(timestamp '1969-12-31 23:59:59.9995') as ms`,
    expect: [{ s: -1, ms: -1 }],
  },

  // ---------------------------------------------------------------- DATETIME, DATE, EXTRACT
  {
    name: "DATETIME(ts, 'UTC') with and without a fraction",
    rule: "BigQuery DATETIME(timestamp, time_zone); DESIGN.md §4 (.ffffff only when not zero)",
    sql: `select id, datetime(timestamp, 'UTC') as dt from ${EDGE} where id in ('e01', 'e03', 'e04', 'e12')`,
    expect: [
      { id: "e01", dt: "2025-01-15T10:00:00" },
      { id: "e03", dt: "2025-01-15T10:30:00.500000" },
      { id: "e04", dt: "2025-01-15T10:59:59.999999" },
      { id: "e12", dt: "2025-01-15T09:00:00.123456" },
    ],
  },
  {
    name: "DATETIME(ts, zone) in another time zone",
    rule: "BigQuery DATETIME(timestamp, time_zone) with a tz database name",
    sql: `select datetime(timestamp, 'America/New_York') as dt from ${EDGE} where id = 'e01'`,
    expect: [{ dt: "2025-01-15T05:00:00" }],
  },
  {
    name: "a time zone from a parameter: a tz database name",
    rule: "BigQuery time functions: time_zone is any STRING expression (a tz database name or an offset)",
    sql: `select datetime(timestamp, @z) as dt, date(timestamp, @z) as d, timestamp_trunc(timestamp, day, @z) as t, timestamp('2025-01-01 00:00:00', @z) as ts, format_timestamp('%H:%M', timestamp, @z) as f, extract(hour from timestamp at time zone @z) as h from ${EDGE} where id = 'e01'`,
    params: { z: { kind: "string", value: "Asia/Tokyo" } },
    expect: [
      {
        dt: "2025-01-15T19:00:00",
        d: "2025-01-15",
        t: us("2025-01-14T15:00:00Z"),
        ts: us("2024-12-31T15:00:00Z"),
        f: "19:00",
        h: 19,
      },
    ],
  },
  {
    name: "a time zone from a parameter: an offset east of UTC",
    rule: "BigQuery time zones: an offset '+05:30' is 5h30 east of UTC (not the POSIX sign)",
    sql: `select datetime(timestamp, @z) as dt, date(timestamp, @z) as d, timestamp_trunc(timestamp, day, @z) as t, timestamp('2025-01-01 00:00:00', @z) as ts, format_timestamp('%H:%M', timestamp, @z) as f, extract(hour from timestamp at time zone @z) as h from ${EDGE} where id = 'e01'`,
    params: { z: { kind: "string", value: "+05:30" } },
    expect: [
      {
        dt: "2025-01-15T15:30:00",
        d: "2025-01-15",
        t: us("2025-01-14T18:30:00Z"),
        ts: us("2024-12-31T18:30:00Z"),
        f: "15:30",
        h: 15,
      },
    ],
  },
  {
    name: "an unknown time-zone parameter is refused",
    rule: "BigQuery: an invalid time zone is an error; a parameter's value is checked when bound (400 invalid_parameter)",
    sql: `select datetime(timestamp, @z) as dt from ${EDGE} where id = 'e01'`,
    params: { z: { kind: "string", value: "Mars/Olympus" } },
    expect: { error: "invalid_parameter" },
  },
  {
    name: "a time-zone parameter shown as sent",
    rule: "BigQuery: a parameter is one value wherever it is used (a zone and a selected string alike)",
    sql: `select @z as z, datetime(timestamp, @z) as dt, current_date(@z) as d from ${EDGE} where id = 'e01'`,
    params: { z: { kind: "string", value: "UTC+5:30" } },
    expect: [{ z: "UTC+5:30", dt: "2025-01-15T15:30:00", d: "2025-01-15" }],
  },
  {
    name: "a time zone from a column is refused on every backend",
    rule: "qes departure (docs/functions.md): BigQuery takes any STRING as time_zone, but ClickHouse's time functions need a constant zone, so a zone is a literal or a parameter everywhere",
    sql: "select z, datetime(timestamp '2025-01-15 10:00:00+00', z) as dt from unnest(['UTC', 'Asia/Tokyo']) as z",
    expect: { error: "sql_invalid" },
  },
  {
    name: "a literal offset zone is east of UTC for a plus sign",
    rule: "BigQuery time zones: an offset '+05:30' or 'UTC-3' is that far east (west) of UTC (not the POSIX sign)",
    sql: `select datetime(timestamp, '+05:30') as a, date(timestamp '2025-01-15 20:00:00+00', '+05:30') as b, timestamp_trunc(timestamp '2025-01-15 20:00:00+00', day, 'UTC-3') as c, timestamp(datetime '2025-01-15 10:00:00', 'UTC-3') as d, extract(hour from timestamp at time zone '-08:00') as e from ${EDGE} where id = 'e01'`,
    expect: [
      {
        a: "2025-01-15T15:30:00",
        b: "2025-01-16",
        c: us("2025-01-15T03:00:00Z"),
        d: us("2025-01-15T13:00:00Z"),
        e: 2,
      },
    ],
  },
  {
    name: "DATE(ts)",
    rule: "BigQuery DATE(timestamp) in UTC; DESIGN.md §4 DATE wire value",
    sql: `select id, date(timestamp) as d from ${EDGE} where id in ('e10', 'e11')`,
    expect: [
      { id: "e10", d: "2025-01-14" },
      { id: "e11", d: "2025-01-15" },
    ],
  },
  {
    name: "DATE(year, month, day)",
    rule: "BigQuery DATE(year, month, day)",
    sql: `select date(2025, 1, 5) as d`,
    expect: [{ d: "2025-01-05" }],
  },
  {
    name: "DATE(ts, zone)",
    rule: "BigQuery DATE(timestamp, time_zone)",
    sql: `select date(timestamp, 'America/Los_Angeles') as d from ${EDGE} where id = 'e11'`,
    expect: [{ d: "2025-01-14" }],
  },
  {
    name: "EXTRACT time parts at a microsecond before the hour",
    rule: "BigQuery EXTRACT from TIMESTAMP: lower parts are truncated; MILLISECOND and MICROSECOND are the subsecond part",
    sql: `select extract(hour from timestamp) as h, extract(minute from timestamp) as mi, extract(second from timestamp) as s, extract(millisecond from timestamp) as ms, extract(microsecond from timestamp) as mus from ${EDGE} where id = 'e04'`,
    expect: [{ h: 10, mi: 59, s: 59, ms: 999, mus: 999999 }],
  },
  {
    name: "EXTRACT date parts",
    rule: "BigQuery EXTRACT: DAYOFWEEK 1 = Sunday; WEEK Sunday-based from 0; ISOWEEK",
    sql: `select extract(year from timestamp) as y, extract(quarter from timestamp) as q, extract(month from timestamp) as mo, extract(day from timestamp) as d, extract(dayofweek from timestamp) as dow, extract(dayofyear from timestamp) as doy, extract(week from timestamp) as w, extract(isoweek from timestamp) as iw from ${EDGE} where id = 'e04'`,
    expect: [{ y: 2025, q: 1, mo: 1, d: 15, dow: 4, doy: 15, w: 2, iw: 3 }],
  },
  {
    name: "EXTRACT DATE",
    rule: "BigQuery EXTRACT(DATE FROM timestamp) returns a DATE",
    sql: `select extract(date from timestamp) as d from ${EDGE} where id = 'e10'`,
    expect: [{ d: "2025-01-14" }],
  },
  {
    name: "EXTRACT … AT TIME ZONE",
    rule: "BigQuery EXTRACT(part FROM timestamp AT TIME ZONE tz)",
    sql: `select extract(hour from timestamp at time zone 'America/Los_Angeles') as h from ${EDGE} where id = 'e01'`,
    expect: [{ h: 2 }],
  },
  {
    name: "EXTRACT from a TIMESTAMP literal AT TIME ZONE",
    rule: "BigQuery EXTRACT(part FROM timestamp_expression AT TIME ZONE tz): a TIMESTAMP '…' literal is a timestamp expression (it was a syntax error: the zone was applied to the string alone)",
    sql: "select extract(hour from timestamp '2024-03-10 07:30:00' at time zone 'America/New_York') as h, extract(date from timestamp '2024-03-10 20:00:00+00' at time zone 'Asia/Kolkata') as d",
    expect: [{ h: 3, d: "2024-03-11" }],
  },

  // ---------------------------------------------------------------- FORMAT_TIMESTAMP, PARSE_TIMESTAMP
  {
    name: "FORMAT_TIMESTAMP with %Y-%m-%d %H:%M:%S and %F %T",
    rule: "BigQuery FORMAT_TIMESTAMP; format elements %Y %m %d %H %M %S %F %T",
    sql: `select format_timestamp('%Y-%m-%d %H:%M:%S', timestamp) as a, format_timestamp('%F %T', timestamp) as b from ${EDGE} where id = 'e04'`,
    expect: [{ a: "2025-01-15 10:59:59", b: "2025-01-15 10:59:59" }],
  },
  {
    name: "FORMAT_TIMESTAMP with subsecond digits",
    rule: "BigQuery format elements: %E6S and %E3S",
    sql: `select format_timestamp('%H:%M:%E6S', timestamp) as a, format_timestamp('%E3S', timestamp) as b from ${EDGE} where id = 'e04'`,
    expect: [{ a: "10:59:59.999999", b: "59.999" }],
  },
  {
    name: "FORMAT_TIMESTAMP with names and day of year",
    rule: "BigQuery format elements: %a %b %e %j",
    sql: `select format_timestamp('%a %b %e', timestamp) as a, format_timestamp('%j', timestamp) as b from ${EDGE} where id = 'e04'`,
    expect: [{ a: "Wed Jan 15", b: "015" }],
  },
  {
    name: "FORMAT_TIMESTAMP %s is epoch seconds",
    rule: "BigQuery format elements: %s",
    sql: `select format_timestamp('%s', timestamp) as s from ${EDGE} where id = 'e04'`,
    expect: [{ s: "1736938799" }],
  },
  {
    name: "FORMAT_TIMESTAMP in a time zone",
    rule: "BigQuery FORMAT_TIMESTAMP(format, timestamp, time_zone)",
    sql: `select format_timestamp('%H:%M', timestamp, 'America/New_York') as a, format_timestamp('%H:%M', timestamp, 'UTC') as b from ${EDGE} where id = 'e01'`,
    expect: [{ a: "05:00", b: "10:00" }],
  },
  {
    name: "FORMAT_TIMESTAMP %z and %Ez",
    rule: "BigQuery format elements: %z is +HHMM, %Ez the RFC 3339 offset +HH:MM, both in the zone asked for",
    sql: "select format_timestamp('%z %Ez', timestamp '2025-01-15 10:00:00+00', 'Asia/Kolkata') as east, format_timestamp('%z %Ez', timestamp '2025-01-15 10:00:00+00', 'America/St_Johns') as west, format_timestamp('%Ez', timestamp '2025-01-15 10:00:00+00') as utc",
    expect: [{ east: "+0530 +05:30", west: "-0330 -03:30", utc: "+00:00" }],
  },
  {
    name: "PARSE_TIMESTAMP",
    rule: "BigQuery PARSE_TIMESTAMP (UTC by default)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-01-15 10:00:00') as t`,
    expect: [{ t: us("2025-01-15T10:00:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP with %F and %T",
    rule: "BigQuery format elements: %F is %Y-%m-%d, %T is %H:%M:%S, also when parsing (ClickHouse refused them)",
    sql: `select parse_timestamp('%F %T', '2025-01-15 10:00:00') as t, parse_timestamp('%F %R', '2025-01-15 10:30') as r`,
    expect: [{ t: us("2025-01-15T10:00:00Z"), r: us("2025-01-15T10:30:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP and PARSE_DATE take the fields a format leaves out from 1970-01-01",
    rule: "BigQuery PARSE_TIMESTAMP / PARSE_DATE: any unspecified field is initialized from 1970-01-01 00:00:00 (DuckDB defaulted to 1900, ClickHouse to 2000, PostgreSQL to 1 BC)",
    sql: `select parse_timestamp('%H:%M', '10:30') as hm, parse_timestamp('%m/%d', '03/04') as md, parse_timestamp('%b %d', 'Mar 04') as named, parse_timestamp('%j', '032') as doy, parse_timestamp('%d %H', '05 10') as dh, parse_timestamp('%H:%M%z', '10:30+0100') as offset, parse_timestamp('%H:%M', '10:30', 'America/New_York') as zoned, parse_date('%m', '03') as month, parse_timestamp('%H:%M', cast(null as string)) as none`,
    expect: [
      {
        hm: us("1970-01-01T10:30:00Z"),
        md: us("1970-03-04T00:00:00Z"),
        named: us("1970-03-04T00:00:00Z"),
        doy: us("1970-02-01T00:00:00Z"),
        dh: us("1970-01-05T10:00:00Z"),
        offset: us("1970-01-01T09:30:00Z"),
        zoned: us("1970-01-01T15:30:00Z"),
        month: "1970-03-01",
        none: null,
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP in a time zone",
    rule: "BigQuery PARSE_TIMESTAMP(format, string, time_zone): a civil time without an offset is read in time_zone (DST by the tz database)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-01-15 10:00:00', 'America/New_York') as winter, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-07-15 10:00:00', 'America/New_York') as summer, parse_timestamp('%Y-%m-%d %H:%M', '2025-01-15 10:00', '+05:30') as east, parse_timestamp('%d/%m/%Y %H:%M', '15/01/2025 10:00', 'UTC-3') as west`,
    expect: [
      {
        winter: us("2025-01-15T15:00:00Z"),
        summer: us("2025-07-15T14:00:00Z"),
        east: us("2025-01-15T04:30:00Z"),
        west: us("2025-01-15T13:00:00Z"),
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP: the text's own offset wins over the zone argument",
    rule: "BigQuery PARSE_TIMESTAMP: %z in the format reads the offset from the string; time_zone applies only to text without one",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S %z', '2025-01-15 10:00:00 +0200', 'America/New_York') as a, parse_timestamp('%d/%b/%Y:%H:%M:%S %z', '15/Jan/2025:10:00:00 -0130', '+05:30') as b`,
    expect: [{ a: us("2025-01-15T08:00:00Z"), b: us("2025-01-15T11:30:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP: %E*S then %z with no fraction and an offset without a colon",
    rule: "BigQuery PARSE_TIMESTAMP: %E*S reads seconds with or without a fraction, %z reads +HHMM (PostgreSQL's to_timestamp read '+0530' as the fraction .053 and ignored the offset)",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00+0530') as a, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00-0130') as b, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00+05') as c",
    expect: [{ a: us("2025-01-15T02:30:00Z"), b: us("2025-01-15T09:30:00Z"), c: us("2025-01-15T03:00:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP: %E*S then %z with a fraction and an offset with a colon",
    rule: "BigQuery PARSE_TIMESTAMP: %E*S reads any number of fraction digits, %z reads +HH:MM",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00.123456+05:30') as a, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00.123-01:30') as b",
    expect: [{ a: us("2025-01-15T02:30:00.123456Z"), b: us("2025-01-15T09:30:00.123Z") }],
  },
  {
    name: "PARSE_TIMESTAMP: %E*S without a fraction",
    rule: "BigQuery PARSE_TIMESTAMP: %E*S reads seconds with or without a fraction",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S', '2025-01-15T08:00:00') as a, parse_timestamp('%Y-%m-%d %H:%M:%E*S', '2025-01-15 08:00:00.5') as b",
    expect: [{ a: us("2025-01-15T08:00:00Z"), b: us("2025-01-15T08:00:00.5Z") }],
  },
  {
    name: "PARSE_TIMESTAMP: %z reads Z as UTC",
    rule: "BigQuery PARSE_TIMESTAMP: %z reads a trailing Z as offset zero; the zone argument does not apply",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%S%z', '2025-01-15T08:00:00Z', 'America/New_York') as a, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00.123Z') as b",
    expect: [{ a: us("2025-01-15T08:00:00Z"), b: us("2025-01-15T08:00:00.123Z") }],
  },
  {
    name: "PARSE_TIMESTAMP: %Ez reads an RFC 3339 offset",
    rule: "BigQuery format elements: %Ez is the RFC 3339 offset (+HH:MM); parsing reads it as %z, Z included (Supabase Studio's auth reports parse '%Y-%m-%dT%H:%M:%E*S%Ez')",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '2025-01-15T08:00:00.123Z') as a, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '2025-01-15T08:00:00+05:30') as b, coalesce(parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', '2025-01-15T08:00:00-02:00'), timestamp '2000-01-01') as c",
    expect: [
      { a: us("2025-01-15T08:00:00.123Z"), b: us("2025-01-15T02:30:00Z"), c: us("2025-01-15T10:00:00Z") },
    ],
  },
  {
    name: "PARSE_TIMESTAMP with %z inside the format",
    rule: "BigQuery PARSE_TIMESTAMP: %z reads Z, +HH, +HHMM and +HH:MM wherever it stands in the format",
    sql: "select parse_timestamp('%a %b %d %H:%M:%S %z %Y', 'Wed Jan 15 08:00:00 +0530 2025') as a, parse_timestamp('%a %b %d %H:%M:%S %z %Y', 'Wed Jan 15 08:00:00 -01:30 2025') as b, parse_timestamp('%a %b %d %H:%M:%S %z %Y', 'Wed Jan 15 08:00:00 Z 2025') as c, parse_timestamp('%z %Y-%m-%d %H:%M', '+05 2025-01-15 08:00') as d",
    expect: [
      {
        a: us("2025-01-15T02:30:00Z"),
        b: us("2025-01-15T09:30:00Z"),
        c: us("2025-01-15T08:00:00Z"),
        d: us("2025-01-15T03:00:00Z"),
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP with %z of text without an offset is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP with %z of an offset that is not one is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00+5') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP with %z of an offset past 23:59 is an error",
    rule: "BigQuery PARSE_TIMESTAMP %z (absl ParseOffset): hours 00-23, minutes 00-59; else the string cannot be parsed, an error",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%S%z', '2025-01-15T08:00:00+05:99') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP of text whose literal characters differ from the format's is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format (PostgreSQL's to_timestamp skipped any character for the format's 'T')",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15 08:00:00+05:30') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP of text with more than the format reads is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format (PostgreSQL's to_timestamp ignored trailing text, and a fraction under %S)",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%S', '2025-01-15T08:00:00junk') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP of a fraction under %S is an error",
    rule: "BigQuery PARSE_TIMESTAMP: %S reads whole seconds; a fraction in the string cannot be parsed, an error",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%S%z', '2025-01-15T08:00:00.5+05:30') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP of text with less than the format reads is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format (PostgreSQL's to_timestamp read '08:00+05:30' under %H:%M:%S%z as 08:00:00)",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%S%z', '2025-01-15T08:00+05:30') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP with whitespace: a run in the format matches any run, and the text may be padded",
    rule: "BigQuery PARSE_TIMESTAMP: one or more consecutive white spaces in the format match zero or more in the string; leading and trailing white spaces in the string are always allowed",
    sql: "select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-01-15   08:00:00') as a, parse_timestamp('%Y-%m-%d %H:%M:%S', ' 2025-01-15 08:00:00 ') as b, parse_timestamp('%Y-%m-%dT%H:%M:%E*S%Ez', ' 2025-01-15T08:00:00+05:30 ') as c",
    expect: [{ a: us("2025-01-15T08:00:00Z"), b: us("2025-01-15T08:00:00Z"), c: us("2025-01-15T02:30:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP with %E*S of a fraction without digits is an error",
    rule: "BigQuery PARSE_TIMESTAMP: an error when the string cannot be parsed with the format",
    sql: "select parse_timestamp('%Y-%m-%dT%H:%M:%E*S%z', '2025-01-15T08:00:00.x+05:30') as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARSE_TIMESTAMP in a time zone from a parameter",
    rule: "BigQuery PARSE_TIMESTAMP: time_zone is any STRING expression (a parameter here: a name or an offset)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-01-15 10:00:00', @z) as t`,
    params: { z: { kind: "string", value: "Asia/Kolkata" } },
    expect: [{ t: us("2025-01-15T04:30:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP of a reading a DST transition skips or repeats",
    rule: "BigQuery PARSE_TIMESTAMP (ZetaSQL parse_date_time.cc: absl::ConvertDateTime(…).pre): a reading a transition skips or repeats takes the offset in effect before it — New York's skipped 02:30 is 02:30 EST, its repeated 01:30 is 01:30 EDT; Berlin's and Sydney's likewise",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-09 02:30:00', 'America/New_York') as ny_skipped, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-11-02 01:30:00', 'America/New_York') as ny_repeated, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-30 02:30:00', 'Europe/Berlin') as berlin_skipped, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-10-26 02:30:00', 'Europe/Berlin') as berlin_repeated, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-04-06 02:30:00', 'Australia/Sydney') as sydney_repeated, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-10-05 02:30:00', 'Australia/Sydney') as sydney_skipped`,
    expect: [
      {
        ny_skipped: us("2025-03-09T07:30:00Z"),
        ny_repeated: us("2025-11-02T05:30:00Z"),
        berlin_skipped: us("2025-03-30T01:30:00Z"),
        berlin_repeated: us("2025-10-26T00:30:00Z"),
        sydney_repeated: us("2025-04-05T15:30:00Z"),
        sydney_skipped: us("2025-10-04T16:30:00Z"),
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP of readings beside a DST transition",
    rule: "BigQuery PARSE_TIMESTAMP: a reading that exists once has one instant, whatever the zone's offset at the UTC instant of the same digits",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-09 01:59:59', 'America/New_York') as ny_before_gap, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-09 03:30:00', 'America/New_York') as ny_after_gap, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-11-02 02:00:00', 'America/New_York') as ny_after_overlap, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-30 01:59:59', 'Europe/Berlin') as berlin_before_gap, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-10-26 01:59:59', 'Europe/Berlin') as berlin_before_overlap`,
    expect: [
      {
        ny_before_gap: us("2025-03-09T06:59:59Z"),
        ny_after_gap: us("2025-03-09T07:30:00Z"),
        ny_after_overlap: us("2025-11-02T07:00:00Z"),
        berlin_before_gap: us("2025-03-30T00:59:59Z"),
        berlin_before_overlap: us("2025-10-25T23:59:59Z"),
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP of a skipped and a repeated reading in a zone from a parameter",
    rule: "BigQuery PARSE_TIMESTAMP: the offset before the transition (as with a literal zone)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-03-30 02:30:00', @z) as skipped, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-10-26 02:30:00', @z) as repeated, parse_timestamp('%Y-%m-%d %H:%M:%S', '2025-10-26 03:00:00', @z) as after`,
    params: { z: { kind: "string", value: "Europe/Berlin" } },
    expect: [
      {
        skipped: us("2025-03-30T01:30:00Z"),
        repeated: us("2025-10-26T00:30:00Z"),
        after: us("2025-10-26T02:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP and CAST of a STRING that is NULL on some rows",
    rule: "BigQuery: a conversion of NULL is NULL — the other rows' values are read, and the query does not fail",
    sql: `select timestamp(x) as t, timestamp(x, 'Asia/Kolkata') as k, cast(x as timestamp) as c, cast(x as datetime) as d from unnest(['2025-01-15 10:00:00', null]) x`,
    expect: [
      {
        t: us("2025-01-15T10:00:00Z"),
        k: us("2025-01-15T04:30:00Z"),
        c: us("2025-01-15T10:00:00Z"),
        d: "2025-01-15T10:00:00",
      },
      { t: null, k: null, c: null, d: null },
    ],
  },
  {
    name: "a time zone parameter that is not sent makes each zone function NULL",
    rule: "BigQuery: a function of a NULL argument is NULL — the time zone argument too (an unsent parameter binds NULL)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M', '2025-01-15 10:00', @z) as p, timestamp('2025-01-15 10:00', @z) as t, timestamp_trunc(timestamp '2025-01-15 10:00:00', day, @z) as tr, format_timestamp('%H:%M', timestamp '2025-01-15 10:00:00', @z) as f, datetime(timestamp '2025-01-15 10:00:00', @z) as dt, date(timestamp '2025-01-15 10:00:00', @z) as d`,
    params: { z: { kind: "string" } },
    expect: [{ p: null, t: null, tr: null, f: null, dt: null, d: null }],
  },
  {
    name: "TIMESTAMP_TRUNC to the hour inside a repeated hour, and to the day after a skipped midnight",
    rule: "BigQuery TIMESTAMP_TRUNC in a time zone (ZetaSQL TimestampTruncAtLeastMinute): HOUR and MINUTE truncate in the timestamp's own offset, so each occurrence of New York's repeated 01:xx truncates within itself; DAY and above place the day's first reading (the offset before a transition: Santiago's skipped midnight of 2025-09-07 is 00:00 -04)",
    sql: `select timestamp_trunc(timestamp '2025-11-02 05:30:00', hour, 'America/New_York') as first_pass, timestamp_trunc(timestamp '2025-11-02 06:30:00', hour, 'America/New_York') as second_pass, timestamp_trunc(timestamp '2025-11-02 06:30:00', minute, 'America/New_York') as minute, timestamp_trunc(timestamp '2025-09-07 12:00:00', day, 'America/Santiago') as santiago_day`,
    expect: [
      {
        first_pass: us("2025-11-02T05:00:00Z"),
        second_pass: us("2025-11-02T06:00:00Z"),
        minute: us("2025-11-02T06:30:00Z"),
        santiago_day: us("2025-09-07T04:00:00Z"),
      },
    ],
  },
  {
    name: "TIMESTAMP of a skipped and a repeated reading",
    rule: "BigQuery TIMESTAMP(string|datetime, time_zone) (absl::FromCivil: the pre-transition offset), as PARSE_TIMESTAMP",
    sql: `select timestamp('2025-03-09 02:30:00', 'America/New_York') as ny_skipped, timestamp('2025-11-02 01:30:00', 'America/New_York') as ny_repeated, timestamp(datetime '2025-03-30 02:30:00', 'Europe/Berlin') as berlin_skipped, timestamp(datetime '2025-10-26 02:30:00', 'Europe/Berlin') as berlin_repeated`,
    expect: [
      {
        ny_skipped: us("2025-03-09T07:30:00Z"),
        ny_repeated: us("2025-11-02T05:30:00Z"),
        berlin_skipped: us("2025-03-30T01:30:00Z"),
        berlin_repeated: us("2025-10-26T00:30:00Z"),
      },
    ],
  },
  {
    name: "PARSE_TIMESTAMP with a two-digit offset (%z)",
    rule: "BigQuery PARSE_TIMESTAMP %z: +HH or +HHMM (ZetaSQL ParseOffset reads the minutes only when two digits follow)",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M %z', '2025-01-15 10:00 +0530') as four, parse_timestamp('%Y-%m-%d %H:%M%z', '2025-01-15 10:00-0300', 'Asia/Kolkata') as joined`,
    expect: [{ four: us("2025-01-15T04:30:00Z"), joined: us("2025-01-15T13:00:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP of NULL text or in a NULL zone",
    rule: "BigQuery: a function of a NULL argument is NULL",
    sql: `select parse_timestamp('%Y-%m-%d %H:%M', cast(null as string), 'Asia/Kolkata') as no_text, parse_timestamp('at %Y-%m-%d T%H:%M', 'at 2025-01-15 T10:00', 'Asia/Kolkata') as literal_text`,
    expect: [{ no_text: null, literal_text: us("2025-01-15T04:30:00Z") }],
  },
  {
    name: "PARSE_TIMESTAMP of an nginx time with an offset",
    rule: "BigQuery PARSE_TIMESTAMP: %d/%b/%Y:%H:%M:%S %z; log-event-shapes.md kong access lines",
    sql: `select id, parse_timestamp('%d/%b/%Y:%H:%M:%S %z', regexp_extract(event_message, r'\\[([^\\]]+)\\]')) as t from ${EDGE} where project = 'gamma' and id in ('e10', 'e11')`,
    expect: [
      { id: "e10", t: us("2025-01-14T23:59:59Z") },
      { id: "e11", t: us("2025-01-15T00:00:00Z") },
    ],
  },
  {
    name: "PARSE_TIMESTAMP with fractional seconds",
    rule: "BigQuery format elements: %E*S parses any number of subsecond digits",
    sql: `select id, parse_timestamp('%Y-%m-%d %H:%M:%E*S UTC', p.timestamp) as t from ${PG}, unnest(metadata) m, unnest(m.parsed) p where p.timestamp is not null`,
    expect: [
      { id: "p07", t: us("2025-01-15T10:30:00Z") },
      { id: "p08", t: us("2025-01-15T10:35:00Z") },
    ],
  },
  {
    name: "TIMESTAMP(string) and TIMESTAMP(string, zone)",
    rule: "BigQuery TIMESTAMP(string_expression[, time_zone])",
    sql: `select timestamp('2025-01-15 10:00:00') as a, timestamp('2025-01-15 10:00:00', 'America/New_York') as b`,
    expect: [{ a: us("2025-01-15T10:00:00Z"), b: us("2025-01-15T15:00:00Z") }],
  },

  // ---------------------------------------------------------------- GENERATE_TIMESTAMP_ARRAY
  {
    name: "GENERATE_TIMESTAMP_ARRAY includes the end when it falls on a step",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY; DESIGN.md §4 array of TIMESTAMP → array of µs",
    sql: `select generate_timestamp_array(timestamp '2025-01-15 10:00:00', timestamp '2025-01-15 12:00:00', interval 1 hour) as ts`,
    expect: [{ ts: [us("2025-01-15T10:00:00Z"), us("2025-01-15T11:00:00Z"), us("2025-01-15T12:00:00Z")] }],
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY stops before an end off the step",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY",
    sql: `select generate_timestamp_array('2025-01-15 10:00:00', '2025-01-15 11:30:00', interval 1 hour) as ts`,
    expect: [{ ts: [us("2025-01-15T10:00:00Z"), us("2025-01-15T11:00:00Z")] }],
  },
  {
    name: "zero-filled hourly buckets from GENERATE_TIMESTAMP_ARRAY",
    rule: "BigQuery GENERATE_TIMESTAMP_ARRAY with UNNEST and LEFT JOIN",
    sql: `with buckets as (
  select b from unnest(generate_timestamp_array(timestamp '2025-01-15 09:00:00', timestamp '2025-01-15 11:00:00', interval 1 hour)) as b
),
hits as (
  select timestamp_trunc(timestamp, hour) as h, count(*) as n from ${EDGE} where project = 'alpha' group by h
)
select buckets.b as bucket, coalesce(hits.n, 0) as n from buckets left join hits on hits.h = buckets.b order by bucket`,
    expect: [
      { bucket: us("2025-01-15T09:00:00Z"), n: 0 },
      { bucket: us("2025-01-15T10:00:00Z"), n: 4 },
      { bucket: us("2025-01-15T11:00:00Z"), n: 2 },
    ],
  },

  // ---------------------------------------------------------------- comparing with string literals and parameters
  {
    name: "a TIMESTAMP compared with a string literal",
    rule: "DESIGN.md §3 (BigQuery rule): a TIMESTAMP compared with a string literal coerces the literal",
    sql: `select id from ${EDGE} where timestamp >= '2025-01-15 11:00:00'`,
    expect: col("id", "e05", "e06", "e07", "e08", "e09"),
  },
  {
    name: "a TIMESTAMP compared with an ISO literal with T and Z",
    rule: "DESIGN.md §3 literal coercion; BigQuery canonical timestamp format (T separator, Z zone)",
    sql: `select id from ${EDGE} where timestamp > '2025-01-15T10:59:59.999999Z'`,
    expect: col("id", "e05", "e06", "e07", "e08", "e09"),
  },
  {
    name: "BETWEEN two string literals is inclusive to the microsecond",
    rule: "DESIGN.md §3 literal coercion; BigQuery BETWEEN is inclusive",
    sql: `select id from ${EDGE} where timestamp between '2025-01-15 10:00:00' and '2025-01-15 10:30:00.5'`,
    expect: col("id", "e01", "e02", "e03"),
  },
  {
    name: "TIMESTAMP equality with a microsecond literal",
    rule: "DESIGN.md §3 literal coercion; TIMESTAMP microsecond precision",
    sql: `select id from ${EDGE} where timestamp = '2025-01-15 10:00:00.000001'`,
    expect: col("id", "e02"),
  },
  {
    name: "a string literal on the left of a TIMESTAMP comparison",
    rule: "DESIGN.md §3 literal coercion",
    sql: `select id from ${EDGE} where '2025-01-15 11:50:00' < timestamp`,
    expect: col("id", "e09"),
  },
  {
    name: "a string literal with an offset compared with a TIMESTAMP",
    rule: "DESIGN.md §3 literal coercion; BigQuery timestamp literals with a UTC offset",
    sql: `select id from ${EDGE} where timestamp < '2025-01-15 01:00:00+01:00'`,
    expect: col("id", "e10"),
  },
  {
    name: "a TIMESTAMP literal",
    rule: "BigQuery lexical: TIMESTAMP literals",
    sql: `select id from ${EDGE} where timestamp < timestamp '2025-01-15 00:00:00'`,
    expect: col("id", "e10"),
  },
  {
    name: "a DATE compared with a string literal",
    rule: "DESIGN.md §3: a DATE compared with a string literal coerces the literal",
    sql: `select id from ${EDGE} where date(timestamp) = '2025-01-14'`,
    expect: col("id", "e10"),
  },
  {
    name: "a DATETIME compared with a string literal",
    rule: "DESIGN.md §3: a DATETIME compared with a string literal coerces the literal",
    sql: `select id from ${EDGE} where datetime(timestamp, 'UTC') >= '2025-01-15 11:45:00'`,
    expect: col("id", "e08", "e09"),
  },
  {
    name: "a string literal that is not a timestamp is an error",
    rule: "BigQuery literal coercion: could not cast literal to TIMESTAMP (a compile-time error)",
    sql: `select id from ${EDGE} where timestamp > 'yesterday'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "timestamp parameters: exclusive start, inclusive end, microsecond exact",
    rule: "DESIGN.md §5: timestamp parameters normalised with microseconds intact",
    sql: `select id from ${EDGE} where timestamp > @start and timestamp <= @end`,
    params: {
      start: { kind: "timestamp", value: "2025-01-15T10:00:00Z" },
      end: { kind: "timestamp", value: "2025-01-15T10:59:59.999999Z" },
    },
    expect: col("id", "e02", "e03", "e04"),
  },
  {
    name: "a timestamp parameter with a zone offset",
    rule: "DESIGN.md §5: timestamp parameters are ISO 8601",
    sql: `select id from ${EDGE} where timestamp >= @start`,
    params: { start: { kind: "timestamp", value: "2025-01-15T12:15:00+01:00" } },
    expect: col("id", "e06", "e07", "e08", "e09"),
  },
  {
    name: "an absent timestamp parameter is NULL",
    rule: "DESIGN.md §5: an absent timestamp parameter binds NULL",
    sql: `select id from ${EDGE} where (@start is null or timestamp > @start) and project = 'beta'`,
    params: { start: { kind: "timestamp" } },
    expect: col("id", "e06", "e07", "e08"),
  },
  {
    name: "an empty timestamp parameter is NULL",
    rule: "DESIGN.md §5: an empty timestamp parameter binds NULL",
    sql: `select count(*) as n from ${REST} where @start is null or timestamp > @start`,
    params: { start: { kind: "timestamp", value: "" } },
    expect: [{ n: 3 }],
  },
];
