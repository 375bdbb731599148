import { AUTH, col, EDGE, PG, type SqlCase, STORAGE } from "./case.ts";

// Type coercion against literals (DESIGN.md §3 departures: a field inferred from JSON compared with
// a literal of another type is cast to the literal's type; a value that cannot be cast is NULL),
// and arithmetic: BigQuery "Operators", "Mathematical functions", "Conversion rules".

const RESP = `${EDGE}, unnest(metadata) m, unnest(m.response) r`;
const HEADERS = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.headers) h`;
const BOT = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.cf) c, unnest(c.botManagement) b`;
const PARSED = `${PG}, unnest(metadata) m, unnest(m.parsed) p`;
const CAST_TO_LITERAL =
  "DESIGN.md §3 departure: a JSON field compared with a literal of another type is cast to the literal's type";
const UNCASTABLE = "DESIGN.md §3 departure: a value that cannot be cast to the literal's type is NULL";

export const coercionCases: SqlCase[] = [
  // ---------------------------------------------------------------- JSON fields against literals
  {
    name: "an INT64 field equals a string literal as text",
    rule: `${CAST_TO_LITERAL} (metadata.status = '200' compares as text)`,
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where metadata.status = '200'`,
    expect: col("id", "a01", "a02", "a06", "a09"),
  },
  {
    name: "a string literal on the left of an INT64 field",
    rule: CAST_TO_LITERAL,
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where '500' = metadata.status`,
    expect: col("id", "a04"),
  },
  {
    name: "an INT64 field against a string literal orders as text",
    rule: `${CAST_TO_LITERAL}: '200' < '3' as text`,
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where metadata.status < '3'`,
    expect: col("id", "a01", "a02", "a06", "a09"),
  },
  {
    name: "an INT64 field against a non-numeric string literal",
    rule: CAST_TO_LITERAL,
    sql: `select count(*) as n from ${AUTH} cross join unnest(metadata) as metadata where metadata.status != 'abc'`,
    expect: [{ n: 7 }],
  },
  {
    name: "an INT64 field IN a list of string literals",
    rule: CAST_TO_LITERAL,
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where metadata.status in ('400', '500')`,
    expect: col("id", "a03", "a04"),
  },
  {
    name: "an INT64 field against a number literal compares as numbers",
    rule: "BigQuery comparison operators; log-event-shapes.md §3 (status >= 400)",
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where metadata.status >= 400`,
    expect: col("id", "a03", "a04", "a07"),
  },
  {
    name: "CAST(metadata.status AS INT64) >= 400, as Studio writes it",
    rule: "BigQuery CAST AS INT64; log-event-shapes.md §3",
    sql: `select id from ${AUTH} cross join unnest(metadata) as metadata where cast(metadata.status as int64) >= 400`,
    expect: col("id", "a03", "a04", "a07"),
  },
  {
    name: "an INT64 field against a FLOAT64 literal",
    rule: "BigQuery conversion rules: INT64 coerces to FLOAT64",
    sql: `select id from ${RESP} where r.status_code = 200.0`,
    expect: col("id", "e01", "e10", "e12"),
  },
  {
    name: "a FLOAT64 field against an INT64 literal",
    rule: "BigQuery conversion rules: INT64 coerces to FLOAT64",
    sql: `select id from ${STORAGE}, unnest(metadata) m where m.responseTime > 50`,
    expect: col("id", "s04", "s06"),
  },
  {
    name: "a numeric-looking STRING field against a number literal compares as numbers",
    rule: `${CAST_TO_LITERAL} (compared as numbers, not text)`,
    sql: `select id from ${HEADERS} where h.content_length > 100`,
    expect: col("id", "e02"),
  },
  {
    name: "a STRING field against a number: '17' < 9 is false, '512' < 9 is false",
    rule: `${CAST_TO_LITERAL} (as text '17' < '9' would be true)`,
    sql: `select id from ${HEADERS} where h.content_length < 9`,
    expect: col("id", "e01", "e03", "e04", "e07", "e08", "e12"),
  },
  {
    name: "a STRING field equals a number literal",
    rule: CAST_TO_LITERAL,
    sql: `select id from ${HEADERS} where h.content_length = 17`,
    expect: col("id", "e05"),
  },
  {
    name: "a STRING field compared with a string literal stays text",
    rule: "BigQuery comparison of STRING with STRING",
    sql: `select id from ${HEADERS} where h.content_length = '512'`,
    expect: col("id", "e02"),
  },
  {
    name: "a BOOL field against a string literal compares as text",
    rule: CAST_TO_LITERAL,
    sql: `select id from ${BOT} where b.verifiedBot = 'true'`,
    expect: col("id", "e04", "e12"),
  },
  {
    name: "a field widened to STRING keeps the text of its numbers",
    rule: "DESIGN.md §3 schema: a conflicting type widens to STRING",
    sql: `select id, p.query_id from ${PARSED} where p.query_id is not null`,
    expect: [
      { id: "p02", query_id: "1234567890123" },
      { id: "p05", query_id: "-" },
    ],
  },
  {
    name: "a widened STRING field equals a number where it can be cast",
    rule: `${CAST_TO_LITERAL}; ${UNCASTABLE}`,
    sql: `select id from ${PARSED} where p.query_id = 1234567890123`,
    expect: col("id", "p02"),
  },
  {
    name: "an uncastable value is NULL, so NOT (…) does not hold either",
    rule: UNCASTABLE,
    sql: `select id from ${PARSED} where not (p.query_id > 0)`,
    expect: [],
  },
  {
    name: "an uncastable value is NULL in IS NULL tests of the comparison",
    rule: UNCASTABLE,
    sql: `select id, (p.query_id > 0) is null as unknown from ${PARSED} where p.query_id is not null`,
    expect: [
      { id: "p02", unknown: false },
      { id: "p05", unknown: true },
    ],
  },
  {
    name: "a missing field against a literal is NULL, never an error",
    rule: "DESIGN.md §3 departure: a field the schema does not know evaluates to NULL",
    sql: `select count(*) as n from ${AUTH} cross join unnest(metadata) as m where m.no_such_field = 'x' or m.no_such_field > 3`,
    expect: [{ n: 0 }],
  },
  {
    name: "SAFE_CAST of a numeric-looking string in arithmetic",
    rule: "BigQuery SAFE_CAST AS INT64",
    sql: `select safe_cast(h.content_length as int64) + 1 as n from ${HEADERS} where id = 'e05'`,
    expect: [{ n: 18 }],
  },
  {
    name: "comparing two literals of different types is an error",
    rule: "BigQuery: no matching signature for operator = for INT64 and STRING (the departure covers JSON fields only)",
    sql: `select 1 = '1' as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "adding a string literal to a number is an error",
    rule: "BigQuery: no matching signature for operator + for STRING and INT64",
    sql: `select 'a' + 1 as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SUM of a STRING field is an error",
    rule: "BigQuery SUM: no matching signature for STRING",
    sql: `select sum(h.content_length) as s from ${HEADERS}`,
    expect: { error: "sql_invalid" },
  },

  // ---------------------------------------------------------------- arithmetic and math functions
  {
    name: "division with / is FLOAT64",
    rule: "BigQuery arithmetic operators: X / Y returns FLOAT64 for INT64 inputs",
    sql: `select 7 / 2 as a, 10 / 5 as b`,
    expect: [{ a: 3.5, b: 2 }],
  },
  {
    name: "INT64 + FLOAT64 is FLOAT64",
    rule: "BigQuery arithmetic operators: result supertype",
    sql: `select r.status_code + 0.5 as x from ${RESP} where id = 'e01'`,
    expect: [{ x: 200.5 }],
  },
  {
    name: "INT64 arithmetic stays INT64",
    rule: "BigQuery arithmetic operators",
    sql: `select 2 * 3 as a, 7 - 10 as b, -(4) as c`,
    expect: [{ a: 6, b: -3, c: -4 }],
  },
  {
    name: "SAFE_DIVIDE",
    rule: "BigQuery SAFE_DIVIDE: NULL on division by zero",
    sql: `select safe_divide(10, 4) as a, safe_divide(1, 0) as b, safe_divide(0, 0) as c`,
    expect: [{ a: 2.5, b: null, c: null }],
  },
  {
    name: "SAFE_DIVIDE of two aggregates",
    rule: "BigQuery SAFE_DIVIDE over COUNTIF and COUNT",
    sql: `select safe_divide(countif(r.status_code >= 400), count(*)) as error_rate from ${RESP} where project = 'beta'`,
    expect: [{ error_rate: 1 / 3 }],
  },
  {
    name: "CAST of a NULL BOOL to STRING is NULL",
    rule: "BigQuery CAST: NULL casts to NULL (ClickHouse's if() read the NULL as false)",
    sql: "select cast(cast(null as bool) as string) as a, cast(m.metering as string) as b from `gotrue.logs.prod`, unnest(metadata) m where id = 'a04'",
    expect: [{ a: null, b: null }],
  },
  {
    name: "CAST of text to INT64 takes integers and hexadecimal only",
    rule: "BigQuery CAST AS INT64 from STRING: an integer literal, decimal or hexadecimal; '1.0' and '1e3' are errors",
    sql: "select cast('1.0' as int64) as x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "SAFE_CAST of text to INT64 and FLOAT64 at the edges",
    rule: "BigQuery SAFE_CAST: hexadecimal INT64 text; 'inf', 'Infinity', 'NaN' and out-of-range FLOAT64 text (±inf, 0) are numbers; anything else NULL, never an error",
    sql: "select safe_cast('0x10' as int64) as a, safe_cast('-0x1f' as int64) as b, safe_cast('1e3' as int64) as c, safe_cast('inf' as float64) as d, safe_cast('-Infinity' as float64) as e, safe_cast('NaN' as float64) as f, safe_cast('1e400' as float64) as g, safe_cast('1e-400' as float64) as h, safe_cast('x' as float64) as i",
    expect: [
      { a: 16, b: -31, c: null, d: "Infinity", e: "-Infinity", f: "NaN", g: "Infinity", h: 0, i: null },
    ],
  },
  {
    name: "DIV truncates toward zero",
    rule: "BigQuery DIV: integer division (DIV(-20, 3) = -6)",
    sql: `select div(10, 4) as a, div(-7, 2) as b, div(-20, 3) as c`,
    expect: [{ a: 2, b: -3, c: -6 }],
  },
  {
    name: "MOD takes the sign of the dividend",
    rule: "BigQuery MOD",
    sql: `select mod(10, 3) as a, mod(-10, 3) as b, mod(10, -3) as c`,
    expect: [{ a: 1, b: -1, c: 1 }],
  },
  {
    name: "MOD of a field",
    rule: "BigQuery MOD",
    sql: `select mod(r.status_code, 100) as m from ${RESP} where id = 'e04'`,
    expect: [{ m: 4 }],
  },
  {
    name: "ROUND rounds halfway cases away from zero",
    rule: "BigQuery ROUND: halfway cases are rounded away from zero",
    sql: `select round(2.5) as a, round(-2.5) as b, round(0.5) as c, round(1.4) as d`,
    expect: [{ a: 3, b: -3, c: 1, d: 1 }],
  },
  {
    name: "ROUND to digits, negative digits too",
    rule: "BigQuery ROUND(X, N)",
    sql: `select round(3.14159, 2) as a, round(12.345, 1) as b, round(1234.5, -2) as c, round(1250, -2) as d`,
    expect: [{ a: 3.14, b: 12.3, c: 1200, d: 1300 }],
  },
  {
    name: "ROUND and TRUNC work on the binary FLOAT64",
    rule: "BigQuery ROUND / TRUNC of FLOAT64 (ZetaSQL RoundDecimal): the double nearest 1.005 is below it, so ROUND(1.005, 2) is 1, TRUNC(0.29, 2) is 0.28; 0.49999999999999994 rounds to 0; NaN stays NaN",
    sql: "select round(1.005, 2) as a, trunc(0.29, 2) as b, round(0.49999999999999994) as c, round(cast('nan' as float64), 2) as d, round(123.456, 400) as e, round(123.456, -400) as f, trunc(-2.789, 1) as g",
    expect: [{ a: 1, b: 0.28, c: 0, d: "NaN", e: 123.456, f: 0, g: -2.7 }],
  },
  {
    name: "ROUND of a percentage",
    rule: "BigQuery ROUND; / returns FLOAT64",
    sql: `select round(100 * countif(r.status_code >= 400) / count(*), 1) as pct from ${RESP}`,
    expect: [{ pct: 45.5 }],
  },
  {
    name: "ABS, FLOOR, CEIL",
    rule: "BigQuery ABS, FLOOR, CEIL",
    sql: `select abs(-3) as a, floor(2.7) as b, ceil(2.1) as c, floor(-2.5) as d, ceil(-2.5) as e`,
    expect: [{ a: 3, b: 2, c: 3, d: -3, e: -2 }],
  },
  {
    name: "GREATEST and LEAST",
    rule: "BigQuery GREATEST, LEAST: NULL if any argument is NULL",
    sql: `select greatest(1, 5, 3) as g, least(1, 5, 3) as l, greatest(1, null) as gn`,
    expect: [{ g: 5, l: 1, gn: null }],
  },
  {
    name: "GREATEST and LEAST of INT64 and FLOAT64, and of NaN",
    rule: "BigQuery GREATEST / LEAST: arguments meet in their supertype (FLOAT64); NaN if any argument is NaN",
    sql: "select greatest(1, 2.5) as a, least(1, 2.5) as b, greatest(1, cast('nan' as float64)) as c, least(cast('nan' as float64), 1.0) as d",
    expect: [{ a: 2.5, b: 1, c: "NaN", d: "NaN" }],
  },
  {
    name: "ORDER BY a FLOAT64 puts NaN next to NULL",
    rule: "BigQuery ORDER BY: ascending NULL, NaN, -inf, …, +inf (descending the reverse); DuckDB and PostgreSQL ordered NaN after +inf",
    sql: "select x from unnest([3.0, cast('nan' as float64), cast('-inf' as float64), 1.0, null]) x order by x",
    expect: [{ x: null }, { x: "NaN" }, { x: "-Infinity" }, { x: 1 }, { x: 3 }],
  },
  {
    name: "ORDER BY a FLOAT64 descending, and in STRING_AGG",
    rule: "BigQuery ORDER BY DESC: +inf, …, -inf, NaN, NULL; ORDER BY inside an aggregate alike",
    sql: "select string_agg(cast(x as string), ',' order by x) as a, string_agg(cast(x as string), ',' order by x desc) as b from unnest([3.0, cast('nan' as float64), 1.0, null]) x",
    expect: [{ a: "nan,1,3", b: "3,1,nan" }],
  },
  {
    name: "SIGN of NaN is NaN",
    rule: "BigQuery SIGN: NaN for NaN (DuckDB and PostgreSQL answered 0, ClickHouse 1)",
    sql: "select sign(cast('nan' as float64)) as a, sign(-2.5) as b, sign(-3) as c, sign(cast(null as float64)) as d",
    expect: [{ a: "NaN", b: -1, c: -1, d: null }],
  },
  {
    name: "MIN and MAX of FLOAT64 with a NaN are NaN",
    rule: "BigQuery MIN / MAX: NaN if the input contains a NaN",
    sql: "select max(x) as a, min(x) as b from unnest([1.0, cast('nan' as float64), 2.0]) x",
    expect: [{ a: "NaN", b: "NaN" }],
  },
  {
    name: "POW and SQRT",
    rule: "BigQuery POW, SQRT",
    sql: `select pow(2, 10) as p, sqrt(16) as s`,
    expect: [{ p: 1024, s: 4 }],
  },
  {
    name: "POW of zero to a negative power is an error",
    rule: "BigQuery POW: an error if X is 0 and Y is a finite value less than 0",
    sql: `select power(0, -1) as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "POW of a negative number to a non-integer power is an error",
    rule: "BigQuery POW: an error if X is a finite value less than 0 and Y is a noninteger",
    sql: `select pow(r.status_code - 300, 0.5) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "POW and EXP overflow is an error, underflow is 0",
    rule: "BigQuery POW / EXP: an error if the result overflows; a result that underflows is zero",
    sql: `select pow(10, 400) as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "POW, EXP underflow to 0 and infinite arguments",
    rule: "BigQuery POW / EXP: a result that underflows is zero; infinite arguments follow IEEE-754",
    sql: `select pow(10, -400) as a, exp(-1000) as b, pow(cast('inf' as float64), -1) as c, pow(-2, -2) as d, exp(cast('-inf' as float64)) as e`,
    expect: [{ a: 0, b: 0, c: 0, d: 0.25, e: 0 }],
  },
  {
    name: "a FLOAT64 product or quotient too small for a double is 0, at the rounding edge too",
    rule: "BigQuery FLOAT64 arithmetic is IEEE-754: a result below the smallest subnormal rounds to 0 (half of it, a tie, to even: 0), no error",
    sql: "select y, x * y as p, x / (1 / y) as q, pow(x, 1 + y) as w from unnest([5e-324]) x, unnest([1e-300, 0.5, 0.75, 1.0]) y order by y",
    expect: [
      { y: 1e-300, p: 0, q: 0, w: 5e-324 },
      { y: 0.5, p: 0, q: 0, w: 0 },
      { y: 0.75, p: 5e-324, q: 5e-324, w: 0 },
      { y: 1, p: 5e-324, q: 5e-324, w: 0 },
    ],
  },
  {
    name: "a product of two small FLOAT64 columns underflows to 0 inside arithmetic, and integers scale as before",
    rule: "BigQuery FLOAT64 arithmetic is IEEE-754: 1e-200 * 1e-200 is 0; an integer factor cannot underflow",
    sql: "select x * x + 1 as a, x * x * 3 as b, 3 * x as c, x / 1e300 as d, safe_divide(x, 1e300) as e from unnest([1e-200]) x",
    expect: [{ a: 1, b: 0, c: 3e-200, d: 0, e: 0 }],
  },
  {
    name: "SQRT of a negative number is an error",
    rule: "BigQuery SQRT: an error if X is less than 0",
    sql: `select sqrt(r.status_code - 300) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "LN of zero is an error",
    rule: "BigQuery LN: an error if X is less than or equal to zero",
    sql: `select ln(r.status_code - 200) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "LOG10 of a negative number is an error",
    rule: "BigQuery LOG10: an error if X is less than or equal to zero",
    sql: `select log10(-5) as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "DIV by zero is an error",
    rule: "BigQuery DIV: an error if Y is 0",
    sql: `select div(r.status_code, r.status_code - 200) as x from ${RESP} where id = 'e01'`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "MOD by zero is an error",
    rule: "BigQuery MOD: an error if Y is 0",
    sql: `select mod(5, 0) as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "MOD by -1 is 0, also of INT64's least value",
    rule: "BigQuery MOD: X - Y * DIV(X, Y) with the sign of X; MOD(x, -1) is 0",
    sql: `select mod(-9223372036854775808, -1) as a, mod(7, -1) as b`,
    expect: [{ a: 0, b: 0 }],
  },
];
