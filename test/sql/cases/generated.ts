import type { SqlCase } from "./case.ts";

// Divergences between the backends that generated expressions found (a seeded generator of typed
// scalar expressions over the catalogue, edge literals, nesting 1–3, each run on every backend).
// Expected rows follow BigQuery's documentation, named in each case's rule.

export const generatedCases: SqlCase[] = [
  {
    name: "DATE(year, month, day) outside 1900–2299",
    rule: "BigQuery Date functions, DATE: DATE(year, month, day) for any day of 0001-01-01 … 9999-12-31",
    sql: "select date(1, 1, 31) as a, date(1899, 12, 31) as b, date(2300, 1, 1) as c, date(9999, 12, 31) as d, date(1600, 2, 29) as e, date(2000 + 4, 1 + 1, 28 + 1) as f",
    expect: [
      {
        a: "0001-01-31",
        b: "1899-12-31",
        c: "2300-01-01",
        d: "9999-12-31",
        e: "1600-02-29",
        f: "2004-02-29",
      },
    ],
  },
  {
    name: "DATE(year, month, day) of a day that does not exist outside 1900–2299",
    rule: "BigQuery Date functions, DATE: a day that does not exist is an error",
    sql: "select date(9999, 2, 29) as d",
    expect: { error: "sql_invalid", message: /no such date/ },
  },
  {
    name: "DATE(year, month, day) of February 29th in a year 1 century",
    rule: "BigQuery Date functions, DATE: a day that does not exist is an error (NULL under SAFE.)",
    sql: "select safe.date(1, 2, 29) as a, safe.date(1700, 2, 29) as b, safe.date(2400, 2, 29) as c",
    expect: [{ a: null, b: null, c: "2400-02-29" }],
  },
  {
    name: "IF with an array and a NULL branch",
    rule: "BigQuery Conditional expressions, IF: NULL takes the array's type; a NULL array is shown as [] in a result (BigQuery Data types, Array type)",
    sql: "select if(false, [1], null) as a, if(true, ['x'], null) as b, array_length(if(false, [1], null)) as n, if(false, [1], null) is null as z, ifnull(null, split('a,b')) as c",
    expect: [{ a: [], b: ["x"], n: null, z: true, c: ["a", "b"] }],
  },
  {
    name: "CASE NULL WHEN … matches no WHEN",
    rule: "BigQuery Conditional expressions, CASE expr: expr = NULL is never true, so the ELSE (or NULL) is the answer",
    sql: "select case null when 1 then 5 when 2 then 6 else 7 end as a, case null when 'a' then 1 end as b, case null when date '2024-01-01' then 1 end as c",
    expect: [{ a: 7, b: null, c: null }],
  },
  {
    name: "SUBSTR, LEFT and RIGHT of a NULL text with INT64's extremes",
    rule: "BigQuery String functions, SUBSTR/LEFT/RIGHT: a NULL argument gives NULL; positions and lengths past the text are clamped",
    sql: "select substr(s, 2, 9223372036854775807) as a, substr(s, 9223372036854775807) as b, substr(s, -9223372036854775808, 9223372036854775807) as c, left(s, 9223372036854775807) as d, right(s, 9223372036854775807) as e from unnest([cast(null as string), 'abc']) as s order by s",
    expect: [
      { a: null, b: null, c: null, d: null, e: null },
      { a: "bc", b: "", c: "abc", d: "abc", e: "abc" },
    ],
  },
  {
    name: "FORMAT_TIMESTAMP of a NULL instant with a format of only its zone",
    rule: "BigQuery Timestamp functions, FORMAT_TIMESTAMP: NULL for a NULL timestamp, whatever the format",
    sql: "select format_timestamp('%z', t) as a, format_timestamp('%Z', t) as b, format_timestamp('abc', t) as c, format_timestamp('%Ez|%Z', t, 'Asia/Kolkata') as d from unnest([cast(null as timestamp), timestamp '2024-01-01 00:00:00 UTC']) as t order by t",
    expect: [
      { a: null, b: null, c: null, d: null },
      { a: "+0000", b: "UTC", c: "abc", d: "+05:30|Asia/Kolkata" },
    ],
  },
  {
    name: "a constant call among ordered columns",
    rule: "BigQuery Query syntax, ORDER BY: any expression of the select list may be ordered by; a constant orders nothing",
    sql: "select one, concat('a') as z from unnest([2, 1]) as one order by one, z",
    expect: [
      { one: 1, z: "a" },
      { one: 2, z: "a" },
    ],
  },
  {
    name: "SAFE_OFFSET and SAFE_ORDINAL at INT64's extremes",
    rule: "BigQuery Array subscript operator: SAFE_OFFSET and SAFE_ORDINAL give NULL for an index out of bounds",
    sql: "select [1, 2][safe_ordinal(i)] as a, [1, 2][safe_ordinal(j)] as b, ['x'][safe_offset(i)] as c, ['x'][safe_offset(j)] as d, [1, 2][safe_ordinal(2)] as e from unnest([-9223372036854775808]) as i, unnest([9223372036854775807]) as j",
    expect: [{ a: null, b: null, c: null, d: null, e: 2 }],
  },
  {
    name: "SAFE_DIVIDE by INT64's lowest",
    rule: "BigQuery Mathematical functions, SAFE_DIVIDE: INT64 arguments divide as FLOAT64",
    sql: "select safe_divide(i, j) as a, safe_divide(1.5, j) as b from unnest([9223372036854775807]) as i, unnest([-9223372036854775808]) as j",
    expect: [{ a: -1, b: -1.6263032587282567e-19 }],
  },
  {
    name: "SAFE_CAST of date and time words and other shapes to DATE, DATETIME and TIMESTAMP",
    rule: "BigQuery Conversion functions, CAST AS DATE/DATETIME/TIMESTAMP: the text must have the canonical date (and time, and for TIMESTAMP zone) format; a DATETIME has no zone",
    sql: "select s, safe_cast(s as date) as d, safe_cast(s as datetime) as dt, safe_cast(s as timestamp) as t from unnest(['today', 'epoch', 'infinity', '2024/01/01', '2024-01-01 BC', '2024-01-01 10:00:00+05']) as s order by s",
    expect: [
      { s: "2024-01-01 10:00:00+05", d: null, dt: null, t: 1704085200000000 },
      { s: "2024-01-01 BC", d: null, dt: null, t: null },
      { s: "2024/01/01", d: null, dt: null, t: null },
      { s: "epoch", d: null, dt: null, t: null },
      { s: "infinity", d: null, dt: null, t: null },
      { s: "today", d: null, dt: null, t: null },
    ],
  },
  {
    name: "CAST of 'epoch' to TIMESTAMP is an error",
    rule: "BigQuery Conversion functions, CAST AS TIMESTAMP: text not in the canonical timestamp format is an error",
    sql: "select cast(s as timestamp) as t from unnest(['epoch']) as s",
    expect: { error: "sql_invalid" },
  },
  {
    name: "CAST of 'infinity' to DATE is an error",
    rule: "BigQuery Conversion functions, CAST AS DATE: text not in the canonical date format is an error",
    sql: "select cast(s as date) as d from unnest(['infinity']) as s",
    expect: { error: "sql_invalid", message: /Invalid date/ },
  },
  {
    name: "CAST of text with an offset to DATETIME is an error",
    rule: "BigQuery Conversion functions, CAST AS DATETIME: a DATETIME has no time zone; text with one is an error",
    sql: "select cast(s as datetime) as d from unnest(['2024-01-01 10:00:00+05']) as s",
    expect: { error: "sql_invalid", message: /Invalid datetime/ },
  },
  {
    name: "TRIM, LTRIM and RTRIM of characters of several UTF-8 bytes",
    rule: "BigQuery String functions, TRIM/LTRIM/RTRIM: the second argument is a set of Unicode characters, removed whole",
    sql: "select s, trim(s, '😀x') as a, ltrim(s, 'é') as b, rtrim(s, 'ΩŸ') as c, trim(s, 'ß') as d from unnest(['ß', 'éaé', 'xΩ', 'ßxß']) as s order by s",
    expect: [
      { s: "xΩ", a: "Ω", b: "xΩ", c: "x", d: "xΩ" },
      { s: "ß", a: "ß", b: "ß", c: "ß", d: "" },
      { s: "ßxß", a: "ßxß", b: "ßxß", c: "ßxß", d: "x" },
      { s: "éaé", a: "éaé", b: "aé", c: "éaé", d: "éaé" },
    ],
  },
  {
    name: "TRIM of a parameter's characters of several UTF-8 bytes",
    rule: "BigQuery String functions, TRIM: the second argument is a set of Unicode characters, removed whole",
    sql: "select trim(s, @chars) as t from unnest(['ßxß', 'éaé']) as s order by s",
    params: { chars: { kind: "string", value: "😀ß" } },
    expect: [{ t: "x" }, { t: "éaé" }],
  },
  {
    name: "SUBSTR with a NULL position and INT64's lowest length",
    rule: "BigQuery String functions, SUBSTR: a NULL argument gives NULL",
    sql: "select substr(s, p, l) as v from unnest(['abc']) as s, unnest([cast(null as int64)]) as p, unnest([-9223372036854775808]) as l",
    expect: [{ v: null }],
  },
  {
    name: "IN UNNEST of a NULL array is FALSE",
    rule: "BigQuery Operators, IN: `x IN UNNEST(a)` is `x IN (SELECT e FROM UNNEST(a) AS e)`; UNNEST of a NULL array gives no rows, and IN of no rows is FALSE",
    sql: "select 'a' in unnest(split(s)) as a, 1 in unnest(if(s is null, null, [1])) as b, 1 in unnest(if(s is null, [1], null)) as c from unnest([cast(null as string)]) as s",
    expect: [{ a: false, b: false, c: true }],
  },
  {
    name: "COALESCE of NULL arrays",
    rule: "BigQuery Conditional expressions, COALESCE: the first non-NULL argument; a NULL array is NULL",
    sql: "select coalesce(if(s is null, null, [1]), [2]) as a, ifnull(split(s), ['x']) as b, coalesce(if(s is null, null, [1]), null) is null as c from unnest([cast(null as string)]) as s",
    expect: [{ a: [2], b: ["x"], c: true }],
  },
  {
    name: "JSON_QUERY and JSON_EXTRACT write strings' escapes anew",
    rule: "BigQuery JSON functions, JSON_QUERY/JSON_EXTRACT: the value is returned as JSON-formatted text written by BigQuery, not the input's own text (\\u00e9 is é)",
    sql: String.raw`select json_query(j, '$') as a, json_extract(j, '$.a') as b from unnest(['{"a": "\\u00e9\\n\\"q\\/\\ud83d\\ude00", "b": ["ü"]}']) as j`,
    expect: [{ a: '{"a":"é\\n\\"q/😀","b":["ü"]}', b: '"é\\n\\"q/😀"' }],
  },
  {
    name: "SIGN of an INT64 is an INT64",
    rule: "BigQuery Mathematical functions, SIGN: the result has the argument's type (INT64 for INT64)",
    sql: "select timestamp_micros(sign(i)) as a, mod(sign(i), 2) as b, sign(-i) as c from unnest([5]) as i",
    expect: [{ a: 1, b: 1, c: -1 }],
  },
  {
    name: "NULLIF of NULL and a string is a STRING",
    rule: "BigQuery Conditional expressions, NULLIF: the result is the supertype of both arguments",
    sql: "select nullif(null, 'x') as a, coalesce(nullif(null, s), s) as b, nullif(s, 'y') as c from unnest(['y']) as s",
    expect: [{ a: null, b: "y", c: null }],
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY against its step's direction over a long span is empty",
    rule: "BigQuery Array functions, GENERATE_TIMESTAMP_ARRAY: a start after the end with a positive step gives an empty array",
    sql: "select array_length(generate_timestamp_array(a, b, interval 1 hour)) as n, array_length(generate_timestamp_array(b, a, interval -1 hour)) as m from unnest([timestamp '9999-01-01 00:00:00 UTC']) as a, unnest([timestamp '1970-01-01 00:00:00 UTC']) as b",
    expect: [{ n: 0, m: 0 }],
  },
  {
    name: "GENERATE_TIMESTAMP_ARRAY of too many elements says so",
    rule: "qes limit (default-functions.ts MAX_GENERATED_ELEMENTS): more than 1,000,000 generated elements in one array is an error naming the limit",
    sql: "select array_length(generate_timestamp_array(b, a, interval 1 hour)) as n from unnest([timestamp '9999-01-01 00:00:00 UTC']) as a, unnest([timestamp '1970-01-01 00:00:00 UTC']) as b",
    expect: {
      error: "sql_invalid",
      message: /^The query cannot run: GENERATE_TIMESTAMP_ARRAY would produce more than 1000000 elements/,
    },
  },
  {
    name: "COALESCE and IFNULL evaluate nothing past the first non-NULL argument",
    rule: "BigQuery Conditional expressions, COALESCE/IFNULL: the remaining expressions are not evaluated",
    sql: "select coalesce(i, abs(j)) as a, ifnull(i, abs(j)) as b, coalesce(cast(null as int64), i, abs(j)) as c from unnest([1]) as i, unnest([-9223372036854775808]) as j",
    expect: [{ a: 1, b: 1, c: 1 }],
  },
  {
    name: "CAST of a NULL string to DATE among other rows",
    rule: "BigQuery Conversion functions, CAST: NULL casts to NULL",
    sql: "select cast(s as date) as d from unnest([cast(null as string), '2024-01-01']) as s order by s",
    expect: [{ d: null }, { d: "2024-01-01" }],
  },
  {
    name: "FORMAT of a bare NULL with a numeric conversion",
    rule: "BigQuery FORMAT: a NULL argument is written NULL, whatever the conversion (PostgreSQL read the untyped NULL as text: 'operator does not exist: text >> integer' for %o, to_hex(text) for %x)",
    sql: "select format('%o|%x|%X|%e|%f|%g|%d|%#x', null, null, null, null, null, null, null, null) as a",
    expect: [{ a: "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL" }],
  },
];
