import { EDGE, type SqlCase } from "./case.ts";

// Gaps between qes and BigQuery's documented behaviour found by cross-engine comparison: each
// case is a query some or all backends answered otherwise than BigQuery documents (or refused
// where BigQuery answers); the expected rows are BigQuery's.

/** five rows ordered by `o`, `x` NULL at 1 and 3 */
const GAPPY = `unnest([struct(1 as o, cast(null as int64) as x), struct(2 as o, 10 as x), struct(3 as o, cast(null as int64) as x), struct(4 as o, 20 as x), struct(5 as o, 30 as x)]) as r`;

export const documentedGapCases: SqlCase[] = [
  // ---------------------------------------------------------------- navigation functions
  {
    name: "FIRST_VALUE / LAST_VALUE / NTH_VALUE with IGNORE NULLS skip NULL values of the frame",
    rule: "BigQuery navigation functions: FIRST_VALUE(x [{RESPECT | IGNORE} NULLS]), LAST_VALUE, NTH_VALUE(x, n …); IGNORE NULLS leaves NULL values out of the frame (every backend refused the syntax)",
    sql: `select o, first_value(x ignore nulls) over (order by o) as f, last_value(x ignore nulls) over (order by o) as l, nth_value(x, 2 ignore nulls) over (order by o) as n2, first_value(x respect nulls) over (order by o) as fr from ${GAPPY} order by o`,
    expect: [
      { o: 1, f: null, l: null, n2: null, fr: null },
      { o: 2, f: 10, l: 10, n2: null, fr: null },
      { o: 3, f: 10, l: 10, n2: null, fr: null },
      { o: 4, f: 10, l: 20, n2: 20, fr: null },
      { o: 5, f: 10, l: 30, n2: 20, fr: null },
    ],
  },
  {
    name: "FIRST_VALUE / LAST_VALUE IGNORE NULLS within ROWS frames that hold only NULLs are NULL",
    rule: "BigQuery navigation functions: the value of the frame's first (last) non-NULL row, NULL when it has none",
    sql: `select o, first_value(x ignore nulls) over (order by o rows between 1 following and unbounded following) as f, last_value(x ignore nulls) over (order by o rows between unbounded preceding and 1 preceding) as l, nth_value(x, 3 ignore nulls) over (order by o rows between unbounded preceding and unbounded following) as n3 from ${GAPPY} order by o`,
    expect: [
      { o: 1, f: 10, l: null, n3: 30 },
      { o: 2, f: 20, l: null, n3: 30 },
      { o: 3, f: 20, l: 10, n3: 30 },
      { o: 4, f: 30, l: 10, n3: 30 },
      { o: 5, f: null, l: 20, n3: 30 },
    ],
  },
  {
    name: "NTH_VALUE respects NULLs by default and is NULL past the frame",
    rule: "BigQuery NTH_VALUE: the value at the n-th row of the frame (NULL there too), NULL when the frame has fewer rows",
    sql: `select o, nth_value(x, 2) over (order by o) as n2, nth_value(x, 3) over (order by o) as n3, nth_value(x, 9223372036854775807) over (order by o) as far from ${GAPPY} order by o`,
    expect: [
      { o: 1, n2: null, n3: null, far: null },
      { o: 2, n2: 10, n3: null, far: null },
      { o: 3, n2: 10, n3: null, far: null },
      { o: 4, n2: 10, n3: null, far: null },
      { o: 5, n2: 10, n3: null, far: null },
    ],
  },
  {
    name: "NTH_VALUE by a parameter row number",
    rule: "BigQuery NTH_VALUE: constant_integer_expression, a query parameter included",
    sql: "select x, nth_value(x, @n) over (order by x) as v, nth_value(x, @n ignore nulls) over (order by x) as i from unnest([1, 2, 3]) as x order by x",
    params: { n: { kind: "integer", value: "2" } },
    expect: [
      { x: 1, v: null, i: null },
      { x: 2, v: 2, i: 2 },
      { x: 3, v: 2, i: 2 },
    ],
  },
  {
    name: "NTH_VALUE refuses a parameter row number of 0",
    rule: "BigQuery NTH_VALUE: the row number must be at least 1 (DuckDB answered NULL, PostgreSQL and ClickHouse raised in their own words)",
    sql: "select nth_value(x, @n) over (order by x) as v from unnest([1, 2, 3]) as x",
    params: { n: { kind: "integer", value: "0" } },
    expect: { error: "sql_invalid", message: /row number must be positive/ },
  },
  {
    name: "LAG, LEAD and NTILE by a parameter",
    rule: "BigQuery LAG/LEAD: offset a non-negative constant, a query parameter included; NTILE likewise (ClickHouse refused every parameter: 'Offset must be an integer, Nullable(Int64) given')",
    sql: "select x, lag(x, @n) over (order by x) as l, lead(x, @n, -1) over (order by x) as d, ntile(@n) over (order by x) as t from unnest([1, 2, 3]) as x order by x",
    params: { n: { kind: "integer", value: "2" } },
    expect: [
      { x: 1, l: null, d: 3, t: 1 },
      { x: 2, l: null, d: -1, t: 1 },
      { x: 3, l: 1, d: -1, t: 2 },
    ],
  },
  {
    name: "LAG refuses a negative parameter offset, and a NULL one",
    rule: "BigQuery LAG/LEAD: the offset must not be negative nor NULL (DuckDB and PostgreSQL read -1 as LEAD's 1, or answered NULL)",
    sql: "select lag(x, @n) over (order by x) as l from unnest([1, 2, 3]) as x",
    params: { n: { kind: "integer", value: "-1" } },
    expect: { error: "sql_invalid", message: /LAG's offset must not be negative or NULL/ },
  },
  {
    name: "LEAD refuses a NULL parameter offset",
    rule: "BigQuery LAG/LEAD: the offset must not be NULL",
    sql: "select lead(x, @n) over (order by x) as l from unnest([1, 2, 3]) as x",
    params: { n: { kind: "integer" } },
    expect: { error: "sql_invalid", message: /LEAD's offset must not be negative or NULL/ },
  },
  {
    name: "NTILE refuses a parameter bucket count of 0",
    rule: "BigQuery NTILE: the bucket count must be positive",
    sql: "select ntile(@n) over (order by x) as t from unnest([1, 2, 3]) as x",
    params: { n: { kind: "integer", value: "0" } },
    expect: { error: "sql_invalid", message: /NTILE's bucket count must be positive and not NULL/ },
  },
  {
    name: "REGEXP_REPLACE refuses a replacement naming a group the pattern does not have",
    rule: "RE2's rewrite (BigQuery): \\N past the pattern's groups is an error (DuckDB and PostgreSQL wrote nothing there, ClickHouse raised)",
    sql: "select regexp_replace('abc', '[a-z]', '<\\\\1>') as r",
    expect: {
      error: "sql_invalid",
      message: /names group \\1, but the regular expression '\[a-z\]' has 0 capturing groups/,
    },
  },
  {
    name: "REGEXP_REPLACE refuses a backslash before anything but a digit or a backslash",
    rule: "RE2's rewrite (BigQuery): an invalid rewrite is an error (DuckDB dropped the rest, PostgreSQL kept \\x, ClickHouse wrote x)",
    sql: "select regexp_replace(x, '(b)', r'<\\x>') as r from unnest(['abc']) as x",
    expect: { error: "sql_invalid", message: /replacement has \\x/ },
  },
  {
    name: "REGEXP_REPLACE takes \\\\ as a backslash, also before a digit, and \\0 as the match",
    rule: "RE2's rewrite: \\\\ is one backslash",
    sql: "select regexp_replace('abc', '(b)', r'<\\0\\1\\\\>') as a, regexp_replace('abc', '(b)', r'<\\\\1>') as b",
    expect: [{ a: "a<bb\\>c", b: "a<\\1>c" }],
  },
  // ---------------------------------------------------------------- STRING_AGG
  {
    name: "STRING_AGG with a NULL delimiter is NULL",
    rule: "BigQuery STRING_AGG: a NULL delimiter makes the result NULL (PostgreSQL joined the values without one: 'ab'; DuckDB answered the one value under LIMIT 1)",
    sql: "select string_agg(x, null) as s, string_agg(x, cast(null as string) order by x limit 1) as l, string_agg(x, @d) as p from unnest(['a', 'b']) as x",
    params: { d: { kind: "string" } },
    expect: [{ s: null, l: null, p: null }],
  },
  // ---------------------------------------------------------------- CONTAINS_SUBSTR
  {
    name: "CONTAINS_SUBSTR compares case-folded text: ß is ss, a final ς is σ, ﬁ is fi",
    rule: "BigQuery CONTAINS_SUBSTR: a normalized, case-insensitive search, values case folded before they are compared (every backend compared lower(): 'Straße' held no 'SS'; ClickHouse also read İ apart from i)",
    sql: "select contains_substr('Straße', 'SS') as ss, contains_substr('STRAẞE', 'strasse') as ss2, contains_substr('ΟΔΟΣ Α', 'οδος α') as sigma, contains_substr('ﬁle', 'FI') as lig, contains_substr('İstanbul', 'i') as dotted, contains_substr('ı', 'i') as dotless, contains_substr('ΟΔΟΣ', 'οδός') as accent",
    expect: [{ ss: true, ss2: true, sigma: true, lig: true, dotted: true, dotless: false, accent: false }],
  },
  // ---------------------------------------------------------------- array subscripts
  {
    name: "OFFSET past an array's end is an error",
    rule: "BigQuery array subscript operator: OFFSET / ORDINAL outside the array raise 'Array index … is out of bounds'; only SAFE_OFFSET / SAFE_ORDINAL give NULL (every backend answered NULL)",
    sql: "select [1, 2][offset(5)] as a",
    expect: { error: "sql_invalid", message: /Array index is out of bounds/ },
  },
  {
    name: "ORDINAL 0 and a negative OFFSET are errors",
    rule: "BigQuery array subscript operator: ORDINAL(0), OFFSET(-1) are outside every array",
    sql: "select [1, 2][ordinal(0)] as a, [1, 2][offset(-1)] as b",
    expect: { error: "sql_invalid", message: /Array index is out of bounds/ },
  },
  {
    name: "OFFSET into an event's empty array is an error",
    rule: "BigQuery array subscript operator: an empty array has no element 0 (e02's detectionIds is [])",
    sql: `select b.detectionIds[offset(0)] as x from ${EDGE} t cross join unnest(t.metadata) as m cross join unnest(m.request.cf.botManagement) as b where id = 'e02'`,
    expect: { error: "sql_invalid", message: /Array index is out of bounds/ },
  },
  {
    name: "OFFSET inside an array, of a NULL array or by a NULL index",
    rule: "BigQuery array subscript operator: the element; NULL for a NULL array or index; SAFE_OFFSET outside is NULL; a record read from the event (metadata[OFFSET(3)]) keeps qes's NULL (docs/compiler.md)",
    sql: `select [1, 2][offset(1)] as a, [1, 2][ordinal(1)] as b, [1, 2][safe_offset(5)] as c, split(cast(null as string), ',')[offset(3)] as d, [1, 2][offset(cast(null as int64))] as e, metadata[offset(3)].request[offset(0)].path as p from ${EDGE} where id = 'e01'`,
    expect: [{ a: 2, b: 1, c: null, d: null, e: null, p: null }],
  },
  // ---------------------------------------------------------------- TIMESTAMP_ADD
  {
    name: "TIMESTAMP_ADD refuses a MONTH step",
    rule: "BigQuery TIMESTAMP_ADD: date_part is MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR or DAY (every backend stepped by a month)",
    sql: "select timestamp_add(timestamp '2025-01-31', interval 1 month) as t",
    expect: { error: "sql_invalid", message: /does not support the MONTH date part/ },
  },
  {
    name: "TIMESTAMP_SUB refuses a YEAR step, and steps by DAY",
    rule: "BigQuery TIMESTAMP_SUB: the date parts of TIMESTAMP_ADD (every backend stepped by a year)",
    sql: "select timestamp_sub(timestamp '2025-01-31', interval 1 year) as t",
    expect: { error: "sql_invalid", message: /does not support the YEAR date part/ },
  },
  // ---------------------------------------------------------------- FLOAT64 overflow
  {
    name: "an overflow inside FLOAT64 arithmetic raises beside an infinite operand",
    rule: "BigQuery arithmetic operators: floating point overflow raises — y * 10 overflows whatever is added to it (DuckDB and ClickHouse answered inf: the check at the root saw an operand that was inf already)",
    sql: "select y * 10 + cast('inf' as float64) as a from unnest([1e308]) as y",
    expect: { error: "sql_invalid", message: /floating point overflow/ },
  },
  {
    name: "an overflow inside FLOAT64 arithmetic raises beside an infinite column",
    rule: "BigQuery arithmetic operators: floating point overflow raises (DuckDB and ClickHouse answered -inf)",
    sql: "select y * 10 + z as a from unnest([1e308]) as y, unnest([cast('-inf' as float64)]) as z",
    expect: { error: "sql_invalid", message: /floating point overflow/ },
  },
  {
    name: "FLOAT64 arithmetic of an infinite operand without overflow is infinite",
    rule: "BigQuery arithmetic operators: ±inf operands give ±inf, only an overflow raises",
    sql: "select z, y * 2 + z as a, (y + 1.5) * z - 2 as b from unnest([1.5]) as y, unnest([cast('inf' as float64), 2.0]) as z order by z",
    expect: [
      { z: 2, a: 5, b: 4 },
      { z: "Infinity", a: "Infinity", b: "Infinity" },
    ],
  },
  {
    name: "NTH_VALUE counts a NULL row unless IGNORE NULLS",
    rule: "BigQuery NTH_VALUE: RESPECT NULLS (the default) counts every row of the frame, IGNORE NULLS only the non-NULL ones",
    sql: "select o, nth_value(x, 2) over (order by o) as r2, nth_value(x, 2 ignore nulls) over (order by o) as i2 from unnest([struct(1 as o, 1 as x), struct(2 as o, cast(null as int64) as x), struct(3 as o, 3 as x)]) order by o",
    expect: [
      { o: 1, r2: null, i2: null },
      { o: 2, r2: null, i2: null },
      { o: 3, r2: null, i2: 3 },
    ],
  },
  {
    name: "NTH_VALUE refuses a row number below 1",
    rule: "BigQuery NTH_VALUE: constant_integer_expression must be at least 1",
    sql: `select nth_value(x, 0) over (order by o) as n from ${GAPPY}`,
    expect: { error: "sql_invalid", message: /row number must be positive/ },
  },
];

/** 2025-01-05 (a Sunday) 07:08:09.1203 UTC */
const SUNDAY = "timestamp '2025-01-05 07:08:09.120300'";

export const formatElementCases: SqlCase[] = [
  {
    name: "FORMAT_TIMESTAMP %E<n>S writes n fraction digits, %E*S as many as the value has",
    rule: "BigQuery format elements: %E#S seconds with # digits of fractional precision, %E*S with full fractional precision (absl FormatTime: truncated, zero-padded; %E*S without trailing zeros, no point for whole seconds) — every backend refused %E1S and wrote %E*S as six digits",
    sql: `select format_timestamp('%E*S|%E6S|%E3S|%E1S|%E0S|%E8S', ${SUNDAY}) as a, format_timestamp('%E*S|%E2S', timestamp '2025-01-05 07:08:09') as b, format_timestamp('%E*S', timestamp '2025-01-05 07:08:09.000001') as c, format_timestamp('%E*S|%E2S', timestamp '1969-12-31 23:59:58.25') as d, format_timestamp('%E3S', cast(null as timestamp)) as n, format_timestamp('%k %u %c', cast(null as timestamp)) as n2`,
    expect: [
      {
        a: "09.1203|09.120300|09.120|09.1|09|09.12030000",
        b: "09|09.00",
        c: "09.000001",
        d: "58.25|58.25",
        n: null,
        n2: null,
      },
    ],
  },
  {
    name: "FORMAT_TIMESTAMP %u, %k, %l and %c",
    rule: "BigQuery format elements: %u weekday 1-7 from Monday, %k / %l the 24- / 12-hour hour space-padded, %c the date and time representation (Wed Jan 20 21:47:00 2021) — every backend refused them",
    sql: `select format_timestamp('%u|%k|%l|%c', ${SUNDAY}) as a, format_timestamp('%u|%k|%l|%c', timestamp '2025-01-11 23:59:01', 'America/New_York') as b, format_timestamp('%l %k', timestamp '2025-01-11 12:00:00') as c`,
    expect: [{ a: "7| 7| 7|Sun Jan  5 07:08:09 2025", b: "6|18| 6|Sat Jan 11 18:59:01 2025", c: "12 12" }],
  },
  {
    name: "FORMAT_DATETIME writes the civil time's fields",
    rule: "BigQuery FORMAT_DATETIME(format_string, datetime_expr): the format elements for date and time parts (it was not in the catalogue)",
    sql: "select format_datetime('%Y-%m-%d %H:%M:%E*S|%c|%l %p|%u|%E3S', datetime '2025-01-05 19:08:09.5') as a, format_datetime('%F', cast(null as datetime)) as n",
    expect: [{ a: "2025-01-05 19:08:09.5|Sun Jan  5 19:08:09 2025| 7 PM|7|09.500", n: null }],
  },
  {
    name: "FORMAT_DATETIME refuses a time-zone element",
    rule: "BigQuery DATETIME: a civil time in no time zone — qes refuses %Z / %z for it rather than write UTC's",
    sql: "select format_datetime('%H %Z', datetime '2025-01-05 19:08:09') as a",
    expect: { error: "sql_invalid", message: /%Z is not allowed for the DATETIME type/ },
  },
  {
    name: "PARSE_TIMESTAMP %E<n>S and %E*S read seconds with any fraction or none",
    rule: "BigQuery format elements / absl ParseTime: %E#S and %E*S read seconds and an optional fraction of any length (PostgreSQL refused '09.123456' under %E3S, ClickHouse refused %E3S)",
    sql: "select parse_timestamp('%Y-%m-%d %H:%M:%E*S', '2025-01-05 07:08:09.12') as a, parse_timestamp('%Y-%m-%d %H:%M:%E3S', '2025-01-05 07:08:09.123456') as b, parse_timestamp('%Y-%m-%d %H:%M:%E1S', '2025-01-05 07:08:09') as c",
    expect: [{ a: 1736060889120000, b: 1736060889123456, c: 1736060889000000 }],
  },
  {
    name: "PARSE_TIMESTAMP with two offsets applies the last",
    rule: "BigQuery PARSE_TIMESTAMP (absl ParseTime): each %z / %Ez reads into the one offset, the last read wins (DuckDB answered so; PostgreSQL and ClickHouse refused the format)",
    sql: "select parse_timestamp('%Y-%m-%d %H:%M:%S%z%z', '2025-01-05 07:08:09+01+02') as a, parse_timestamp('%z %Y-%m-%d %H:%M:%S %Ez', '-03 2025-01-05 07:08:09 Z') as b",
    expect: [{ a: 1736053689000000, b: 1736060889000000 }],
  },
  {
    name: "PARSE_TIMESTAMP %c reads the date and time representation",
    rule: "BigQuery format elements: %c is %a %b %e %H:%M:%S %Y (PostgreSQL refused %e in a PARSE_TIMESTAMP format)",
    sql: "select parse_timestamp('%c', 'Sun Jan  5 07:08:09 2025') as a, parse_timestamp('%e/%m/%Y', '15/01/2025') as b",
    expect: [{ a: 1736060889000000, b: 1736899200000000 }],
  },
];
