import { AUTH, col, EDGE, PG, REST, type SqlCase } from "./case.ts";

// Conditional expressions, string functions, regular expressions and JSON functions: BigQuery
// "Conditional expressions", "String functions", "JSON functions" and "Operators" pages.

const REQ = `${EDGE}, unnest(metadata) m, unnest(m.request) q`;
const RESP = `${EDGE}, unnest(metadata) m, unnest(m.response) r`;
const REQ_RESP = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(m.response) r`;
const HEADERS = `${REQ}, unnest(q.headers) h`;
const CF = `${REQ}, unnest(q.cf) c`;
const BOT = `${CF}, unnest(c.botManagement) b`;
const AUTH_M = `${AUTH}, unnest(metadata) m`;

export const functionCases: SqlCase[] = [
  // ---------------------------------------------------------------- conditional expressions
  {
    name: "IF",
    rule: "BigQuery conditional expressions: IF(cond, true_result, else_result)",
    sql: `select id, if(r.status_code >= 400, 'error', 'ok') as outcome from ${RESP} where project = 'beta'`,
    expect: [
      { id: "e06", outcome: "ok" },
      { id: "e07", outcome: "ok" },
      { id: "e08", outcome: "error" },
    ],
  },
  {
    name: "IF with a NULL condition takes the else branch",
    rule: "BigQuery IF: the else result when the condition is not TRUE",
    sql: `select if(c.country = 'US', 'us', 'other') as g from ${CF} where id = 'e07'`,
    expect: [{ g: "other" }],
  },
  {
    name: "IFNULL",
    rule: "BigQuery conditional expressions: IFNULL",
    sql: `select id, ifnull(c.country, 'unknown') as country from ${CF} where project = 'beta'`,
    expect: [
      { id: "e06", country: "BR" },
      { id: "e07", country: "unknown" },
      { id: "e08", country: "US" },
    ],
  },
  {
    name: "NULLIF turns an empty string into NULL",
    rule: "BigQuery conditional expressions: NULLIF",
    sql: `select id, nullif(q.search, '') as search from ${REQ} where project = 'alpha'`,
    expect: [
      { id: "e01", search: "?select=*" },
      { id: "e02", search: null },
      { id: "e03", search: null },
      { id: "e04", search: null },
      { id: "e05", search: null },
    ],
  },
  {
    name: "COALESCE picks the first non-NULL",
    rule: "BigQuery conditional expressions: COALESCE",
    sql: `select id, coalesce(h.x_real_ip, h.cf_connecting_ip, 'none') as ip from ${HEADERS} where project = 'gamma'`,
    expect: [
      { id: "e10", ip: "203.0.113.50" },
      { id: "e11", ip: "203.0.113.50" },
      { id: "e12", ip: "192.0.2.10" },
    ],
  },
  {
    name: "COALESCE of NULLs is NULL",
    rule: "BigQuery COALESCE: NULL when every argument is NULL",
    sql: `select coalesce(m.error, m.no_such_field) as x from ${AUTH_M} where id = 'a01'`,
    expect: [{ x: null }],
  },
  {
    name: "searched CASE",
    rule: "BigQuery conditional expressions: CASE WHEN … THEN … ELSE … END",
    sql: `select id, case when r.status_code < 200 then 'info' when r.status_code < 300 then 'success' when r.status_code < 500 then 'client' else 'server' end as class from ${RESP} where project = 'beta'`,
    expect: [
      { id: "e06", class: "info" },
      { id: "e07", class: "success" },
      { id: "e08", class: "server" },
    ],
  },
  {
    name: "simple CASE with ELSE",
    rule: "BigQuery conditional expressions: CASE expr WHEN value THEN …",
    sql: `select id, case m.level when 'info' then 1 when 'warning' then 2 else 3 end as sev from ${AUTH_M} where project = 'beta'`,
    expect: [
      { id: "a06", sev: 1 },
      { id: "a07", sev: 3 },
      { id: "a08", sev: 3 },
    ],
  },
  {
    name: "CASE without ELSE is NULL when nothing matches",
    rule: "BigQuery CASE: NULL when no WHEN matches and there is no ELSE",
    sql: `select id, case when m.status >= 400 then 'bad' end as flag from ${AUTH_M} where project = 'beta'`,
    expect: [
      { id: "a06", flag: null },
      { id: "a07", flag: "bad" },
      { id: "a08", flag: null },
    ],
  },
  {
    name: "simple CASE never matches a NULL operand",
    rule: "BigQuery CASE expr: compares with =, so NULL matches no WHEN",
    sql: `select id, case c.country when 'US' then 'us' else 'other' end as g from ${CF} where project = 'beta'`,
    expect: [
      { id: "e06", g: "other" },
      { id: "e07", g: "other" },
      { id: "e08", g: "us" },
    ],
  },
  {
    name: "simple CASE over literals picks its branch (folded by the compiler)",
    rule: "BigQuery CASE expr: the first WHEN equal to expr, else ELSE, else NULL",
    sql: `select case 'b' when 'a' then 1 when 'b' then 2 else 3 end as s, case 2 when 1 then 'one' when 2 then 'two' end as i, case 'z' when 'a' then 1.5 else 2.5 end as e, case 'z' when 'a' then 1 end as none, case true when false then 'f' else 't' end as b from ${REST} where id = 't01'`,
    expect: [{ s: 2, i: "two", e: 2.5, none: null, b: "t" }],
  },
  {
    name: "simple CASE over literals picking a NULL branch, and a TIMESTAMP one",
    rule: "BigQuery CASE expr: the first WHEN equal to expr, else ELSE, else NULL",
    sql: `select case 'a' when 'a' then null else 2 end as x, case 'a' when 'a' then timestamp_trunc(timestamp, hour) else timestamp end as t from ${REST} where id = 't01'`,
    expect: [{ x: null, t: 1736935200000000 }],
  },
  {
    name: "CASE with INT64 and FLOAT64 branches is FLOAT64 on every engine",
    rule: "BigQuery CASE: the result is the branches' supertype (INT64 and FLOAT64 meet as FLOAT64)",
    sql: `select id, case when id = 't01' then 1 else 2.5 end as x, case when id = 't01' then 0.5 when id = 't02' then 2 end as y from ${REST} where id in ('t01', 't02') order by id`,
    expect: [
      { id: "t01", x: 1, y: 0.5 },
      { id: "t02", x: 2.5, y: 2 },
    ],
  },
  {
    name: "IS DISTINCT FROM treats NULL as a value",
    rule: "BigQuery comparison operators: IS DISTINCT FROM",
    sql: `select id from ${CF} where c.country is distinct from 'US'`,
    expect: col("id", "e02", "e04", "e06", "e07", "e12"),
  },
  {
    name: "IS NOT DISTINCT FROM NULL",
    rule: "BigQuery comparison operators: IS NOT DISTINCT FROM",
    sql: `select id from ${CF} where c.country is not distinct from null`,
    expect: col("id", "e07"),
  },
  {
    name: "IS [NOT] DISTINCT FROM between INT64 and FLOAT64",
    rule: "BigQuery comparison operators: an INT64 beside a FLOAT64 is compared as FLOAT64, NULL as a value (ClickHouse refused the mix)",
    sql: "select x, x is distinct from 1.0 as d, x is not distinct from 9007199254740992.0 as n from unnest([1, 9007199254740993, null]) as x order by x",
    expect: [
      { x: null, d: true, n: false },
      { x: 1, d: false, n: false },
      { x: "9007199254740993", d: true, n: true },
    ],
  },
  {
    name: "IS [NOT] DISTINCT FROM a DATE or TIMESTAMP literal",
    rule: "BigQuery comparison operators: IS [NOT] DISTINCT FROM takes any expression, a DATE '…' literal too (it was read as a value DATE aliased by its string: a syntax error)",
    sql: "select x is distinct from date '2025-01-15' as d, x is not distinct from date '2025-01-16' as n, timestamp '2025-01-15 10:00:00' is distinct from timestamp '2025-01-15 10:00:01' as t from unnest([date '2025-01-15']) as x",
    expect: [{ d: false, n: false, t: true }],
  },
  {
    name: "IS [NOT] DISTINCT FROM on literals",
    rule: "BigQuery comparison operators: IS [NOT] DISTINCT FROM",
    sql: `select null is distinct from null as a, 1 is distinct from null as b, 1 is not distinct from 1 as c, 'x' is distinct from 'y' as d`,
    expect: [{ a: false, b: true, c: true, d: true }],
  },
  {
    name: "IS TRUE",
    rule: "BigQuery IS operators: IS TRUE",
    sql: `select id from ${BOT} where b.verifiedBot is true`,
    expect: col("id", "e04", "e12"),
  },
  {
    name: "IS NOT TRUE includes NULL",
    rule: "BigQuery IS operators: IS NOT TRUE is TRUE for FALSE and NULL",
    sql: `select id from ${AUTH_M} where m.metering is not true`,
    expect: col("id", "a03", "a04", "a05", "a07", "a08", "a09"),
  },
  {
    name: "three-valued AND and OR",
    rule: "BigQuery logical operators: NULL AND FALSE is FALSE, NULL OR TRUE is TRUE",
    sql: `select null and false as a, null or true as b, null and true as c, not cast(null as bool) as d`,
    expect: [{ a: false, b: true, c: null, d: null }],
  },

  // ---------------------------------------------------------------- regular expressions
  {
    name: "REGEXP_CONTAINS with an anchored raw pattern",
    rule: "BigQuery REGEXP_CONTAINS (RE2); DESIGN.md §3 RE2 semantics",
    sql: `select id from ${REQ} where regexp_contains(q.path, r'^/rest/v1/')`,
    expect: col("id", "e01", "e02", "e05", "e07", "e10", "e12"),
  },
  {
    name: "REGEXP_CONTAINS matches anywhere in the string",
    rule: "BigQuery REGEXP_CONTAINS: partial match unless anchored",
    sql: `select id from ${PG} where regexp_contains(event_message, 'cron')`,
    expect: col("id", "p04", "p08"),
  },
  {
    name: "REGEXP_CONTAINS with the (?i) flag",
    rule: "BigQuery REGEXP_CONTAINS: RE2 flags",
    sql: `select id from ${HEADERS} where regexp_contains(h.user_agent, r'(?i)mozilla')`,
    expect: col("id", "e02", "e06", "e07"),
  },
  {
    name: "REGEXP_CONTAINS with alternation and \\d",
    rule: "BigQuery REGEXP_CONTAINS: RE2 syntax",
    sql: `select id from ${REQ} where regexp_contains(q.path, r'^/(auth|storage)/v\\d/')`,
    expect: col("id", "e03", "e04", "e11"),
  },
  {
    name: "REGEXP_CONTAINS with a parameter as the pattern",
    rule: "BigQuery REGEXP_CONTAINS; DESIGN.md §5 bound parameters",
    sql: `select distinct project from ${EDGE} where regexp_contains(project, @pattern)`,
    params: { pattern: { kind: "string", value: "gamma|beta" } },
    expect: col("project", "beta", "gamma"),
  },
  {
    name: "REGEXP_EXTRACT returns the capturing group",
    rule: "BigQuery REGEXP_EXTRACT: the substring matched by the capturing group",
    sql: `select id, regexp_extract(q.url, r'^https://([^.]+)\\.supabase\\.co') as ref from ${REQ} where id in ('e01', 'e06')`,
    expect: [
      { id: "e01", ref: "alpha" },
      { id: "e06", ref: "beta" },
    ],
  },
  {
    name: "REGEXP_EXTRACT without a group returns the whole match",
    rule: "BigQuery REGEXP_EXTRACT: the first matching substring when there is no group",
    sql: `select regexp_extract(event_message, r'\\d{3}') as code from ${EDGE} where id = 'e04'`,
    expect: [{ code: "404" }],
  },
  {
    name: "REGEXP_EXTRACT without a match is NULL",
    rule: "BigQuery REGEXP_EXTRACT: NULL when there is no match",
    sql: `select regexp_extract(event_message, r'ERROR: (\\w+)') as e from ${PG} where id = 'p01'`,
    expect: [{ e: null }],
  },
  {
    name: "REGEXP_EXTRACT the path from an nginx access line",
    rule: "BigQuery REGEXP_EXTRACT; log-event-shapes.md self-hosted edge lines",
    sql: `select regexp_extract(event_message, r'"[A-Z]+ ([^ ]+) HTTP') as path from ${EDGE} where id = 'e11'`,
    expect: [{ path: "/auth/v1/token?grant_type=password" }],
  },
  {
    name: "REGEXP_REPLACE replaces every match",
    rule: "BigQuery REGEXP_REPLACE: all non-overlapping matches",
    sql: `select regexp_replace(event_message, r'\\d+\\.\\d+\\.\\d+\\.\\d+', 'x.x.x.x') as msg from ${EDGE} where id = 'e01'`,
    expect: [{ msg: "GET | 200 | x.x.x.x | https://alpha.supabase.co/rest/v1/todos?select=* | curl/8.4.0" }],
  },
  {
    name: "REGEXP_EXTRACT with word boundaries (\\b, \\B)",
    rule: "RE2 \\b is an ASCII word boundary, \\B its absence (PostgreSQL writes them \\y and \\Y; its \\b is a backspace)",
    sql: `select regexp_extract(event_message, r'\\b\\d{3}\\b') as code, regexp_extract(event_message, r'\\Bt\\w+') as mid from ${EDGE} where id = 'e04'`,
    expect: [{ code: "404", mid: "ttps" }],
  },
  {
    name: "REGEXP_REPLACE of digits in a path",
    rule: "BigQuery REGEXP_REPLACE",
    sql: `select regexp_replace(q.path, r'\\d+', 'N') as p from ${REQ} where id = 'e12'`,
    expect: [{ p: "/rest/vN/items" }],
  },
  {
    name: "REGEXP_REPLACE with group references",
    rule: "BigQuery REGEXP_REPLACE: \\1…\\9 in the replacement refer to groups",
    sql: `select regexp_replace('abc-123', r'(\\w+)-(\\d+)', r'\\2-\\1') as s`,
    expect: [{ s: "123-abc" }],
  },
  {
    name: "LIKE with %",
    rule: "BigQuery LIKE operator: % matches any sequence; log-event-shapes.md pg_cron page",
    sql: `select id from ${PG} where event_message like '%cron job%'`,
    expect: col("id", "p04", "p08"),
  },
  {
    name: "LIKE with _",
    rule: "BigQuery LIKE operator: _ matches one character",
    sql: `select id from ${REST} where event_message like 'Connection _uccessful'`,
    expect: col("id", "t02"),
  },
  {
    name: "NOT LIKE",
    rule: "BigQuery LIKE operator: NOT LIKE",
    sql: `select id from ${PG} where event_message not like '%connection%'`,
    expect: col("id", "p02", "p03", "p04", "p05", "p07", "p08", "p10"),
  },
  {
    name: "LIKE is case-sensitive",
    rule: "BigQuery LIKE operator: case-sensitive",
    sql: `select id from ${PG} where event_message like '%Connection%'`,
    expect: col("id", "p07"),
  },
  {
    name: "STARTS_WITH",
    rule: "BigQuery STARTS_WITH",
    sql: `select id from ${REQ} where starts_with(q.path, '/auth')`,
    expect: col("id", "e03", "e11"),
  },
  {
    name: "ENDS_WITH",
    rule: "BigQuery ENDS_WITH",
    sql: `select id from ${REQ} where ends_with(q.path, '.png')`,
    expect: col("id", "e04"),
  },
  {
    name: "CONTAINS_SUBSTR is case-insensitive",
    rule: "BigQuery CONTAINS_SUBSTR: normalized, case-insensitive search",
    sql: `select id from ${PG} where contains_substr(event_message, 'CRON JOB')`,
    expect: col("id", "p04", "p08"),
  },
  {
    name: "CONTAINS_SUBSTR on literals",
    rule: "BigQuery CONTAINS_SUBSTR (documented example)",
    sql: `select contains_substr('the blue house', 'Blue house') as a, contains_substr('the blue house', 'red') as b`,
    expect: [{ a: true, b: false }],
  },

  // ---------------------------------------------------------------- string functions
  {
    name: "LOWER and UPPER",
    rule: "BigQuery LOWER, UPPER",
    sql: `select lower('GET /Rest') as l, upper(m.level) as u from ${AUTH_M} where id = 'a03'`,
    expect: [{ l: "get /rest", u: "WARNING" }],
  },
  {
    name: "LENGTH of a field",
    rule: "BigQuery LENGTH",
    sql: `select length(q.path) as n from ${REQ} where id = 'e03'`,
    expect: [{ n: 13 }],
  },
  {
    name: "LENGTH counts characters, not bytes",
    rule: "BigQuery LENGTH: STRING length in characters",
    sql: `select length('café') as n, length('') as z`,
    expect: [{ n: 4, z: 0 }],
  },
  {
    name: "SUBSTR positions: positive, negative, zero and past the end",
    rule: "BigQuery SUBSTR: position 0 is 1, negative counts from the end, past the end is ''",
    sql: `select substr('apple', 2, 2) as a, substr('apple', -2) as b, substr('apple', 0) as c, substr('apple', 123) as d, substr('apple', 1, 123) as e`,
    expect: [{ a: "pp", b: "le", c: "apple", d: "", e: "apple" }],
  },
  {
    name: "SUBSTR with a negative length is an error",
    rule: "BigQuery SUBSTR: an error if length is less than 0",
    sql: `select substr('abc', 1, -1) as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SUBSTR with a negative length read from a column is an error",
    rule: "BigQuery SUBSTR: an error if length is less than 0",
    sql: `select substr(id, 2, length(id) - 5) as x from ${REST}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "LEFT and RIGHT with a negative length are errors",
    rule: "BigQuery LEFT / RIGHT: an error if length is negative",
    sql: `select left(id, length(id) - 9) as x from ${REST}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SUBSTR, LEFT and RIGHT at INT64's extremes, and with NULL arguments",
    rule: "BigQuery SUBSTR / LEFT / RIGHT: positions and lengths past the text are clamped to it; a NULL argument gives NULL (before the length is checked)",
    sql: `select substr('abc', 9223372036854775807) as a, substr('abc', 2, 9223372036854775807) as b, substr('abc', -9223372036854775808, 2) as c, left('abc', 9223372036854775807) as d, right('héllo😀', 9223372036854775807) as e, substr('abc', 1, cast(null as int64)) as f, substr(cast(null as string), 1, -1) as g, right(cast(null as string), -1) as h`,
    expect: [{ a: "", b: "bc", c: "ab", d: "abc", e: "héllo😀", f: null, g: null, h: null }],
  },
  {
    name: "SUBSTR of a column",
    rule: "BigQuery SUBSTR",
    sql: `select substr(id, 2) as n from ${REST} where id = 't01'`,
    expect: [{ n: "01" }],
  },
  {
    name: "SPLIT with an empty or NULL delimiter",
    rule: "BigQuery SPLIT: an empty delimiter splits into characters (not bytes, not the whole text); SPLIT('') is ['']; a NULL delimiter gives NULL",
    sql: `select split('abc', '') as a, split('a😀é', '') as b, split('', '') as c, array_length(split('abc', cast(null as string))) as d, split(id, '') as e from ${REST} where id = 't01'`,
    expect: [{ a: ["a", "b", "c"], b: ["a", "😀", "é"], c: [""], d: null, e: ["t", "0", "1"] }],
  },
  {
    name: "SPLIT and OFFSET pick a field of the edge message",
    rule: "BigQuery SPLIT; array subscripts",
    sql: `select split(event_message, ' | ')[offset(1)] as status from ${EDGE} where id = 'e01'`,
    expect: [{ status: "200" }],
  },
  {
    name: "SPLIT's default delimiter is a comma and keeps empty parts",
    rule: "BigQuery SPLIT: default delimiter ','",
    sql: `select split('a,b,,c') as parts`,
    expect: [{ parts: ["a", "b", "", "c"] }],
  },
  {
    name: "SPLIT of an empty string is one empty string",
    rule: "BigQuery SPLIT: splitting an empty STRING returns an ARRAY with a single empty STRING",
    sql: `select split('', ',') as parts`,
    expect: [{ parts: [""] }],
  },
  {
    name: "UNNEST of SPLIT",
    rule: "BigQuery SPLIT with UNNEST",
    sql: `select part from ${REST}, unnest(split(event_message, ' ')) as part where id = 't02'`,
    expect: col("part", "Connection", "successful"),
  },
  {
    name: "CONCAT",
    rule: "BigQuery CONCAT",
    sql: `select concat(q.method, ' ', q.path) as line from ${REQ} where id = 'e07'`,
    expect: [{ line: "DELETE /rest/v1/todos" }],
  },
  {
    name: "CONCAT with a NULL argument is NULL",
    rule: "BigQuery CONCAT: returns NULL if any input argument is NULL",
    sql: `select concat('country=', c.country) as s from ${CF} where id = 'e07'`,
    expect: [{ s: null }],
  },
  {
    name: "a chain of 200 || operators, a NULL among them making it NULL",
    rule: "BigQuery ||: the concatenation operator, CONCAT of its operands; any NULL operand gives NULL",
    sql: `select ${Array.from({ length: 200 }, (_, i) => `'${i % 10}'`).join(" || ")} as s, 'a' || cast(null as string) || ${Array.from({ length: 100 }, () => "'b'").join(" || ")} as n`,
    expect: [{ s: Array.from({ length: 200 }, (_, i) => String(i % 10)).join(""), n: null }],
  },
  {
    name: "CONCAT casts a number to STRING",
    rule: "BigQuery CONCAT: values of types that can be cast to STRING",
    sql: `select concat('status=', r.status_code) as s from ${RESP} where id = 'e01'`,
    expect: [{ s: "status=200" }],
  },
  {
    name: "the || operator",
    rule: "BigQuery concatenation operator ||",
    sql: `select q.method || ' ' || q.path as line from ${REQ} where id = 'e06'`,
    expect: [{ line: "GET /realtime/v1/websocket" }],
  },
  {
    name: "|| with NULL is NULL",
    rule: "BigQuery concatenation operator: NULL input gives NULL",
    sql: `select 'x' || c.country as s from ${CF} where id = 'e07'`,
    expect: [{ s: null }],
  },
  {
    name: "TRIM, LTRIM, RTRIM",
    rule: "BigQuery TRIM, LTRIM, RTRIM (whitespace, or a set of characters)",
    sql: `select trim('  x  ') as a, ltrim('  x  ') as b, rtrim('  x  ') as c, trim('xxaxx', 'x') as d, trim('***apple***', '*') as e`,
    expect: [{ a: "x", b: "x  ", c: "  x", d: "a", e: "apple" }],
  },
  {
    name: "FORMAT with %s and %d",
    rule: "BigQuery FORMAT: %s, %d",
    sql: `select format('%s returned %d', q.method, r.status_code) as s from ${REQ_RESP} where id = 'e08'`,
    expect: [{ s: "GET returned 503" }],
  },
  {
    name: "FORMAT with width, precision, hex and %%",
    rule: "BigQuery FORMAT: %05d, %.2f, %x, %%",
    sql: `select format('%05d', 42) as a, format('%.2f', 3.14159) as b, format('%x', 255) as c, format('%d%%', 50) as d`,
    expect: [{ a: "00042", b: "3.14", c: "ff", d: "50%" }],
  },
  {
    name: "FORMAT %t and %T of ARRAYs",
    rule: "BigQuery FORMAT: %t of an ARRAY is [value, value, ...] of its elements' %t; %T quotes strings",
    sql: `select format('%t', [1, 2, 3]) as a, format('%T', ['a', 'b']) as b, format('%t', split('a,,b')) as c, format('%10t|', [1, 2]) as d`,
    expect: [{ a: "[1, 2, 3]", b: '["a", "b"]', c: "[a, , b]", d: "    [1, 2]|" }],
  },
  {
    name: "FORMAT %t and %T of STRUCTs",
    rule: "BigQuery FORMAT: %t of a STRUCT is (value, value, ...); %T writes STRUCT(value) for one field; NULL prints as NULL; DESIGN.md §3: a nested record is a REPEATED RECORD of one",
    sql: `select format('%t', struct(1 as a, 'x' as b)) as a, format('%T', struct(1 as a, 'x' as b)) as b, format('%t', struct(struct(1 as x) as s, [1, 2] as arr, cast(null as string) as n)) as c, format('%T', struct('x' as only)) as d`,
    expect: [{ a: "(1, x)", b: '(1, "x")', c: "([(1)], [1, 2], NULL)", d: 'STRUCT("x")' }],
  },
  {
    name: "FORMAT %t of records read from events",
    rule: "BigQuery FORMAT: %t of an ARRAY<STRUCT> prints each element's fields in order",
    sql: `select format('%t', m.request[0].cf) as a, format('%t', m.response) as b from ${EDGE}, unnest(metadata) m where id = 'e01'`,
    expect: [
      {
        a: "[(US, 13335, 37.7749, [(99, false, [1001, 1002])])]",
        b: "[(200, 12, [(application/json, MISS)])]",
      },
    ],
  },
  {
    name: "FORMAT %t of records with missing and null fields",
    rule: "BigQuery FORMAT %t: a NULL field prints NULL; DESIGN.md §4: a repeated field read from events that is missing or null is empty, []",
    sql: "select id, format('%t', m.context) as c, format('%t', m.res) as r, format('%t', metadata) as w from `storage.logs.prod.2`, unnest(metadata) m where id in ('s05', 's06') order by id",
    expect: [
      { id: "s05", c: "[]", r: "[]", w: "[([], info, beta, beta, NULL, [], NULL)]" },
      { id: "s06", c: "[]", r: "[(503)]", w: "[([], warn, beta, beta, req-6, [(503)], 2000.75)]" },
    ],
  },
  {
    name: "FORMAT %T of scalars is a literal",
    rule: 'BigQuery FORMAT: %T gives a literal of the value\'s type (quoted STRING, 1.0 for a whole FLOAT64, CAST("nan" AS FLOAT64), DATE "…", TIMESTAMP "…")',
    sql: `select format('%T', 'a"b') as a, format('%T', 1.0) as b, format('%T', cast('nan' as float64)) as c, format('%T', date '2025-01-15') as d, format('%T', timestamp '2025-01-15 10:00:00.5') as e, format('%T', 7) as f`,
    expect: [
      {
        a: '"a\\"b"',
        b: "1.0",
        c: 'CAST("nan" AS FLOAT64)',
        d: 'DATE "2025-01-15"',
        e: 'TIMESTAMP "2025-01-15 10:00:00.500+00"',
        f: "7",
      },
    ],
  },
  {
    name: "FORMAT %s with a precision cuts the string",
    rule: "BigQuery FORMAT: %.Ns prints at most N characters (PostgreSQL printed the whole string)",
    sql: "select format('%.3s', 'abcdef') as a, format('%5.2s|', 'abc') as b",
    expect: [{ a: "abc", b: "   ab|" }],
  },
  {
    name: "FORMAT %f and %e of NaN and the infinities",
    rule: "BigQuery FORMAT: %f, %e, %E print NaN and ±infinity as nan, inf, -inf (uppercase for %E); PostgreSQL printed Infinity and '#.####'",
    sql: "select format('%f', cast('inf' as float64)) as a, format('%e', cast('nan' as float64)) as b, format('%E', cast('-inf' as float64)) as c, format('%8.1f|', cast('nan' as float64)) as d",
    expect: [{ a: "inf", b: "nan", c: "-INF", d: "     nan|" }],
  },
  {
    name: "FORMAT %f rounds the binary value as printf does",
    rule: "BigQuery FORMAT %f: C's printf of the FLOAT64 (2.675 is stored below 2.675: 2.67; 0.125 and 2.5 are exact ties, rounded to even); PostgreSQL rounded the decimal text",
    sql: "select format('%.2f', 2.675) as a, format('%.2f', 0.125) as b, format('%.0f', 2.5) as c, format('%-6.1f|', 2.25) as d, format('%.2f', 999.999) as e",
    expect: [{ a: "2.67", b: "0.12", c: "2", d: "2.2   |", e: "1000.00" }],
  },
  {
    name: "FORMAT widths and precisions count characters",
    rule: "BigQuery FORMAT: width is the minimum number of characters printed, %.Ns at most N characters (ClickHouse's printf counted bytes of é and 😀)",
    sql: "select format('%8s|', 'é😀') as a, format('%-6s|', 'é') as b, format('%.2s', 'é😀x') as c",
    expect: [{ a: "      é😀|", b: "é     |", c: "é😀" }],
  },
  {
    name: "FORMAT %g and %G",
    rule: "BigQuery FORMAT %g: printf's shortest of %e and %f with P significant digits, trailing zeros removed (PostgreSQL refused %g)",
    sql: "select format('%g', 0.0001) as a, format('%g', 1e20) as b, format('%G', 1e-10) as c, format('%g', 123456789.0) as d, format('%g', 100000.0) as e, format('%.3g', 3.14159) as f, format('%g', 9.9999995) as g, format('%10.3g|', 1234.5) as h",
    expect: [
      {
        a: "0.0001",
        b: "1e+20",
        c: "1E-10",
        d: "1.23457e+08",
        e: "100000",
        f: "3.14",
        g: "10",
        h: "  1.23e+03|",
      },
    ],
  },
  {
    name: "FORMAT %o",
    rule: "BigQuery FORMAT %o: octal, of the 64-bit two's complement for a negative INT64 (PostgreSQL refused %o)",
    sql: "select format('%o', 8) as a, format('%o', 0) as b, format('%o', -1) as c, format('%5o|', 64) as d",
    expect: [{ a: "10", b: "0", c: "1777777777777777777777", d: "  100|" }],
  },
  {
    name: "FORMAT %d of a FLOAT64 is refused",
    rule: "BigQuery FORMAT: %d takes an INT64",
    sql: "select format('%d', 3.5) as a",
    expect: { error: "sql_invalid" },
  },
  {
    name: "REPLACE",
    rule: "BigQuery REPLACE: replaces every occurrence",
    sql: `select replace(q.path, '/v1/', '/v2/') as p from ${REQ} where id = 'e01'`,
    expect: [{ p: "/rest/v2/todos" }],
  },

  // ---------------------------------------------------------------- JSON functions
  {
    name: "JSON_VALUE of a nested key",
    rule: "BigQuery JSON_VALUE; log-event-shapes.md auth reports read $.auth_event.action",
    sql: `select id, json_value(event_message, '$.auth_event.action') as action from ${AUTH} where project = 'alpha' and json_value(event_message, '$.auth_event.action') is not null`,
    expect: [
      { id: "a01", action: "login" },
      { id: "a02", action: "token_refreshed" },
    ],
  },
  {
    name: "JSON functions of text that is not JSON are NULL",
    rule: "BigQuery JSON_VALUE / JSON_QUERY of a STRING: NULL when the text is not JSON (DESIGN.md §3: every backend alike)",
    sql: `select json_value('not json', '$.a') as a, json_query('not json', '$.a') as b, json_extract('{"a":1', '$.a') as c, json_extract_scalar('[1,2', '$[0]') as d, json_value('{"a":1} x', '$.a') as e, json_value('', '$') as f`,
    expect: [{ a: null, b: null, c: null, d: null, e: null, f: null }],
  },
  {
    name: "JSON functions of text that is not JSON, read from events, are NULL",
    rule: "BigQuery JSON_VALUE of a STRING: NULL when the text is not JSON",
    sql: `select id, json_value(event_message, '$.level') as level from ${PG} where id in ('p01', 'p02')`,
    expect: [
      { id: "p01", level: null },
      { id: "p02", level: null },
    ],
  },
  {
    name: "JSON functions of JSON scalars",
    rule: "BigQuery JSON_VALUE / JSON_QUERY: a JSON text may be a scalar ('123', '\"abc\"', 'true')",
    sql: `select json_value('123', '$') as a, json_value('"abc"', '$') as b, json_query('"abc"', '$') as c, json_value('true') as d, json_value('null') as e`,
    expect: [{ a: "123", b: "abc", c: '"abc"', d: "true", e: null }],
  },
  {
    name: "a JSONPath index of an object is NULL",
    rule: "BigQuery JSONPath: [n] indexes an array; on an object it matches nothing (ClickHouse read the object's n-th member)",
    sql: `select json_value('{"a":1}', '$[0]') as a, json_query('{"a":[1]}', '$[0]') as b, json_value('{"a":{"x":5}}', '$.a[0]') as c, json_value('[[1,2],[3]]', '$[1][0]') as d`,
    expect: [{ a: null, b: null, c: null, d: "3" }],
  },
  {
    name: "JSON_QUERY writes JSON compactly",
    rule: "BigQuery JSON_QUERY: the JSON value at the path as JSON-formatted STRING (no spaces between tokens)",
    sql: `select json_query('{"a": [1, 2, 3], "b": {"c" : "d e"}}', '$') as a, json_query('{"a" :  [1,  2]}', '$.a') as b`,
    expect: [{ a: '{"a":[1,2,3],"b":{"c":"d e"}}', b: "[1,2]" }],
  },
  {
    name: "JSON_VALUE of a number is its text",
    rule: "BigQuery JSON_VALUE: scalar converted to STRING",
    sql: `select json_value(event_message, '$.duration') as d from ${AUTH} where id = 'a01'`,
    expect: [{ d: "15000000" }],
  },
  {
    name: "JSON_VALUE of a boolean is its text",
    rule: "BigQuery JSON_VALUE: scalar converted to STRING",
    sql: `select json_value(event_message, '$.metering') as m from ${AUTH} where id = 'a03'`,
    expect: [{ m: "false" }],
  },
  {
    name: "JSON_VALUE of an object is NULL",
    rule: "BigQuery JSON_VALUE: NULL when a non-scalar value is selected",
    sql: `select json_value(event_message, '$.auth_event') as v from ${AUTH} where id = 'a01'`,
    expect: [{ v: null }],
  },
  {
    name: "JSON_VALUE of a missing path is NULL",
    rule: "BigQuery JSON_VALUE: NULL when the path does not exist",
    sql: `select json_value(event_message, '$.nope.deeper') as v from ${AUTH} where id = 'a01'`,
    expect: [{ v: null }],
  },
  {
    name: "JSON_VALUE with a double-quoted path",
    rule: 'BigQuery JSON_VALUE; Studio writes JSON_VALUE(event_message, "$.level")',
    sql: `select JSON_VALUE(event_message, "$.level") as level from ${AUTH} where id = 'a10'`,
    expect: [{ level: "info" }],
  },
  {
    name: "JSON_VALUE with an array index",
    rule: "BigQuery JSONPath: [n] array element",
    sql: `select json_value('{"a": [1, 2, 3]}', '$.a[1]') as v`,
    expect: [{ v: "2" }],
  },
  {
    name: "JSON_VALUE unescapes strings",
    rule: "BigQuery JSON_VALUE: removes the outermost quotes and unescapes the value",
    sql: `select json_value(r'{"s": "a\\"b"}', '$.s') as v`,
    expect: [{ v: 'a"b' }],
  },
  {
    name: "JSON_QUERY of an object is compact JSON text",
    rule: "BigQuery JSON_QUERY: JSON-formatted STRING of the selected value",
    sql: `select json_query(event_message, '$.auth_event') as v from ${AUTH} where id = 'a01'`,
    expect: [{ v: '{"action":"login","actor_id":"u-1"}' }],
  },
  {
    name: "JSON_QUERY of a string keeps its quotes",
    rule: "BigQuery JSON_QUERY: JSON-formatted STRING of the selected value",
    sql: `select json_query(event_message, '$.level') as v from ${AUTH} where id = 'a01'`,
    expect: [{ v: '"info"' }],
  },
  {
    name: "JSON_QUERY of a number",
    rule: "BigQuery JSON_QUERY: JSON-formatted STRING of the selected value",
    sql: `select json_query(event_message, '$.status') as v from ${AUTH} where id = 'a03'`,
    expect: [{ v: "400" }],
  },
  {
    name: "JSON_EXTRACT_SCALAR",
    rule: "BigQuery JSON_EXTRACT_SCALAR: scalar as STRING",
    sql: `select json_extract_scalar(event_message, '$.level') as level, json_extract_scalar(event_message, '$.error') as error from ${AUTH} where id = 'a08'`,
    expect: [{ level: "fatal", error: "dial tcp: connection refused" }],
  },
  {
    name: "JSON_EXTRACT_SCALAR of an object is NULL",
    rule: "BigQuery JSON_EXTRACT_SCALAR: NULL for non-scalar values",
    sql: `select json_extract_scalar(event_message, '$.auth_event') as v from ${AUTH} where id = 'a02'`,
    expect: [{ v: null }],
  },
  {
    name: "CAST of a JSON_VALUE compared with a number",
    rule: "BigQuery JSON_VALUE and CAST AS INT64",
    sql: `select id from ${AUTH} where cast(json_value(event_message, '$.status') as int64) >= 400`,
    expect: col("id", "a03", "a04", "a07"),
  },
  {
    name: "grouping by a JSON_VALUE",
    rule: "BigQuery JSON_VALUE; GROUP BY alias",
    sql: `select json_value(event_message, '$.auth_event.action') as action, count(*) as n from ${AUTH} where json_value(event_message, '$.auth_event.action') is not null group by action`,
    expect: [
      { action: "login", n: 1 },
      { action: "token_refreshed", n: 1 },
      { action: "user_signedup", n: 1 },
    ],
  },
];
