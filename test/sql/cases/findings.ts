import { BOUNCER, col, EDGE, PG, REST, RT, type SqlCase, us } from "./case.ts";

// Issue 11's findings: constructs real dashboards send that qes refused, failed or answered
// differently per backend. Expected rows follow BigQuery's documentation ("Lexical structure",
// "Query syntax", "Date functions", "String functions") and DESIGN.md §3's departures.

const ONE = `${REST} where id = 't01'`;
const PATHS = `${EDGE}, unnest(metadata) m, unnest(m.request) q`;

export const findingCases: SqlCase[] = [
  // ---------------------------------------------------------------- quoted aliases, odd names
  {
    name: "a backtick-quoted alias is the column's name",
    rule: "BigQuery lexical: quoted identifiers may contain spaces; an alias names the output column",
    sql: `select 1 as \`my col\` from ${ONE}`,
    expect: [{ "my col": 1 }],
  },
  {
    name: "two backtick-quoted aliases are two columns",
    rule: "BigQuery lexical: quoted identifiers",
    sql: `select 1 as \`my col\`, 'x' as \`other col\` from ${ONE}`,
    expect: [{ "my col": 1, "other col": "x" }],
  },
  {
    name: "backtick-quoted table and UNNEST aliases",
    rule: "BigQuery lexical: quoted identifiers as range variables",
    sql: `select \`t u\`.id, \`v w\` as v from ${EDGE} as \`t u\`, unnest([7]) as \`v w\` where \`t u\`.id = 'e01'`,
    expect: [{ id: "e01", v: 7 }],
  },
  {
    name: "a column named __proto__ is data",
    rule: "BigQuery: any identifier may name a column; the row keeps it",
    sql: `select 1 as __proto__, 2 as constructor from ${ONE}`,
    expect: [JSON.parse('{"__proto__": 1, "constructor": 2}')],
  },
  // ---------------------------------------------------------------- SELECT * over UNNEST
  {
    name: "SELECT * FROM UNNEST(array) AS x has the column x",
    rule: "BigQuery UNNEST operator: the alias names the element column",
    sql: "select * from unnest([1, 2, 3]) as x",
    expect: [{ x: 1 }, { x: 2 }, { x: 3 }],
  },
  {
    name: "SELECT * FROM UNNEST … WITH OFFSET has the element and the offset",
    rule: "BigQuery UNNEST operator: WITH OFFSET adds the offset column",
    sql: "select * from unnest(['a', 'b']) as v with offset as o order by o",
    expect: [
      { v: "a", o: 0 },
      { v: "b", o: 1 },
    ],
  },
  // ---------------------------------------------------------------- unknown escapes
  {
    name: "an unknown escape is the backslash and the character",
    rule: "DESIGN.md §3 departure: '\\s' is backslash + s (BigQuery refuses it)",
    sql: `select '\\s' as s, length('\\d+') as n, 'a\\tb' as tab from ${ONE}`,
    expect: [{ s: "\\s", n: 3, tab: "a\tb" }],
  },
  {
    name: "an unknown escape in a regular expression means the regex class",
    rule: "DESIGN.md §3 departure: unknown escapes keep the backslash; RE2 \\s is whitespace",
    sql: `select id from ${EDGE} where regexp_contains(event_message, '[Ee]rror|\\s[45][0-9][0-9]\\s') order by id`,
    expect: [{ id: "e03" }, { id: "e04" }, { id: "e05" }, { id: "e08" }, { id: "e11" }],
  },
  {
    name: "a doubled quote inside a string is the quote (Supabase Studio's search escaping)",
    rule: "docs/compiler.md departure: 'it''s' is it's, as the reference platform reads Studio's search literals; BigQuery refuses it",
    sql: `select 'it''s' as s, "a ""b""" as d, regexp_contains("can't", 'can''t') as m, length('a''') as n from ${ONE}`,
    expect: [{ s: "it's", d: 'a "b"', m: true, n: 2 }],
  },
  {
    name: "PostgreSQL's cast operator e::text (Supabase Studio's self-hosted pg_cron page)",
    rule: "docs/compiler.md departure: e::text is CAST(e AS STRING), as the reference platform's self-hosted backend reads it",
    sql: `select '5'::int + 1 as n, 7::text as s, upper(concat('a', 'b'))::text as u, (1 = 1)::text as b from ${ONE}`,
    expect: [{ n: 6, s: "7", u: "AB", b: "true" }],
  },
  // ---------------------------------------------------------------- constructs refused by name
  {
    name: "PIVOT is refused by name",
    rule: "issue 11: SQL is never silently ignored; PIVOT is not implemented",
    sql: `select * from (select project, 1 as n from ${EDGE}) pivot (sum(n) for project in ('alpha', 'beta'))`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "UNPIVOT is refused by name",
    rule: "issue 11: SQL is never silently ignored",
    sql: `select * from (select 1 as a, 2 as b from ${ONE}) unpivot (v for k in (a, b))`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "FOR SYSTEM_TIME AS OF is refused",
    rule: "issue 11: time travel is refused",
    sql: `select id from ${EDGE} for system_time as of current_timestamp()`,
    expect: { error: "sql_invalid" },
  },
  // ---------------------------------------------------------------- subscripts after CASE
  {
    name: "a subscript after CASE … END",
    rule: "BigQuery array subscript operator on any array expression",
    sql: `select case when id = 't01' then [10, 20] else [30] end[offset(1)] as a, case when false then [1] else [2, 3] end[safe_ordinal(3)] as b from ${ONE}`,
    expect: [{ a: 20, b: null }],
  },
  // ---------------------------------------------------------------- weeks
  {
    name: "EXTRACT(WEEK(<weekday>) FROM …)",
    rule: "BigQuery EXTRACT: WEEK(<WEEKDAY>) weeks begin on WEEKDAY; days before the first one are week 0",
    sql: `select extract(week(monday) from timestamp '2025-01-15 00:00:00') as mon, extract(week(sunday) from date '2025-01-05') as sun, extract(week from date '2025-01-04') as week0, extract(week(saturday) from date '2025-01-04') as sat, extract(week(thursday) from date '2025-01-01') as thu from ${ONE}`,
    expect: [{ mon: 2, sun: 1, week0: 0, sat: 1, thu: 0 }],
  },
  {
    name: "DATE_DIFF by WEEK counts Sunday boundaries",
    rule: "BigQuery DATE_DIFF: WEEK counts week boundaries (weeks start on Sunday)",
    sql: `select date_diff(date '2025-01-15', date '2025-01-01', week) as w, date_diff(date '2025-01-05', date '2025-01-04', week) as sat_sun, date_diff(date '2025-01-06', date '2025-01-05', week) as sun_mon, date_diff(date '2025-01-01', date '2025-01-15', week) as back from ${ONE}`,
    expect: [{ w: 2, sat_sun: 1, sun_mon: 0, back: -2 }],
  },
  {
    name: "DATE_DIFF by ISOWEEK, WEEK(MONDAY), QUARTER and ISOYEAR",
    rule: "BigQuery DATE_DIFF: ISOWEEK and WEEK(MONDAY) start on Monday; QUARTER and ISOYEAR count boundaries",
    sql: `select date_diff(date '2025-01-06', date '2025-01-05', isoweek) as iso, date_diff(date '2025-01-06', date '2025-01-05', week(monday)) as mon, date_diff(date '2025-04-01', date '2025-03-31', quarter) as q, date_diff(date '2025-01-01', date '2024-12-29', isoyear) as iy from ${ONE}`,
    expect: [{ iso: 1, mon: 1, q: 1, iy: 1 }],
  },
  // ---------------------------------------------------------------- FORMAT
  {
    name: "FORMAT %e and %E",
    rule: "BigQuery FORMAT: %e/%E scientific notation, precision 6 by default",
    sql: `select format('%e', 1.5) as a, format('%.2E', -1234.5) as b, format('%12.3e|', 0.000123) as c, format('%.0e', 2.5) as d from ${ONE}`,
    expect: [{ a: "1.500000e+00", b: "-1.23E+03", c: "   1.230e-04|", d: "2e+00" }],
  },
  {
    name: "FORMAT sign flags",
    rule: "BigQuery FORMAT: '+' shows the sign of positive numbers, ' ' a space",
    sql: `select format('%+d|% d|%+d', 5, 7, -3) as s from ${ONE}`,
    expect: [{ s: "+5| 7|-3" }],
  },
  // ---------------------------------------------------------------- constant keys
  {
    name: "GROUP BY a field the schema does not know (NULL)",
    rule: "DESIGN.md §3: an unknown field is NULL; BigQuery groups by a constant as one group",
    sql: `select timestamp_trunc(timestamp, hour) as timestamp, h.x_sb_error_code as error_code, count(*) as count from ${EDGE} cross join unnest(metadata) as m cross join unnest(m.response) as r cross join unnest(r.headers) as h group by timestamp, error_code order by timestamp`,
    expect: [
      { timestamp: 1736931600000000, error_code: null, count: 1 },
      { timestamp: 1736935200000000, error_code: null, count: 4 },
      { timestamp: 1736938800000000, error_code: null, count: 2 },
    ],
  },
  {
    name: "GROUP BY and ORDER BY literals and NULL",
    rule: "BigQuery GROUP BY / ORDER BY: any expression, constants included, is a key",
    sql: `select 'x' as k, true as b, count(*) as c from ${EDGE} group by k, b, 'y', null order by k, null, 'z', b`,
    expect: [{ k: "x", b: true, c: 12 }],
  },
  {
    name: "GROUP BY a constant over no rows returns no groups",
    rule: "BigQuery GROUP BY: no input rows, no groups",
    sql: `select count(*) as c from ${EDGE} where false group by 'a'`,
    expect: [],
  },
  {
    name: "PARTITION BY and window ORDER BY constants",
    rule: "BigQuery window calls: PARTITION BY / ORDER BY take any expression",
    sql: `select id, row_number() over (partition by null order by 'a', id) as rn from ${EDGE} order by null, id limit 3`,
    expect: [
      { id: "e01", rn: 1 },
      { id: "e02", rn: 2 },
      { id: "e03", rn: 3 },
    ],
  },
  // ---------------------------------------------------------------- LIKE escapes
  {
    name: "a backslash escapes _ and % in LIKE",
    rule: "BigQuery LIKE: a backslash escapes \\, _ and % in the pattern",
    sql: `select countif(event_message like '%\\\\_%') as underscore, countif('a%b' like 'a\\\\%b') as pct, countif('axb' like 'a\\\\%b') as not_pct, countif('a\\\\b' like 'a\\\\\\\\b') as backslash from ${EDGE}`,
    expect: [{ underscore: 1, pct: 12, not_pct: 0, backslash: 12 }],
  },
  // ---------------------------------------------------------------- ties in windows
  {
    name: "ROW_NUMBER over tied keys numbers rows the same way on every backend",
    rule: "DESIGN.md §3: where BigQuery leaves an order unspecified, every backend agrees (window order completed by the other columns)",
    sql: `select project, id, row_number() over (order by project) as r from ${EDGE} qualify r < 5 order by project limit 2 offset 1`,
    expect: [
      { project: "alpha", id: "e02", r: 2 },
      { project: "alpha", id: "e03", r: 3 },
    ],
  },
  {
    name: "LAG over tied keys",
    rule: "DESIGN.md §3: window order completed by the other selected columns",
    sql: `select id, lag(id) over (partition by project order by project) as prev from ${EDGE} where project = 'beta' order by id`,
    expect: [
      { id: "e06", prev: null },
      { id: "e07", prev: "e06" },
      { id: "e08", prev: "e07" },
    ],
  },
  // ---------------------------------------------------------------- ties under LIMIT / OFFSET
  {
    name: "ties at a LIMIT cut: the order is completed by the output columns",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select q.path, count(*) as n from ${PATHS} group by path order by n desc limit 3`,
    expect: [
      { path: "/rest/v1/todos", n: 3 },
      { path: "/auth/v1/token?grant_type=password", n: 1 },
      { path: "/auth/v1/user", n: 1 },
    ],
  },
  {
    name: "ties on the leading key at a LIMIT cut, newest first (an engine may keep only rows past the cut's key first)",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select e.id, p.id as pid from ${EDGE} as e cross join ${PG} as p order by e.timestamp desc limit 12`,
    expect: [
      ...["p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09", "p10"].map((pid) => ({
        id: "e09",
        pid,
      })),
      { id: "e08", pid: "p01" },
      { id: "e08", pid: "p02" },
    ],
  },
  {
    name: "ties on the leading key inside a LIMIT, none at its end (an engine may read n+1 rows ahead)",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select e.id, p.id as pid from ${EDGE} as e cross join ${PG} as p order by e.timestamp desc limit 10`,
    expect: ["p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09", "p10"].map((pid) => ({
      id: "e09",
      pid,
    })),
  },
  {
    name: "ties filling a LIMIT's last group exactly (a read-ahead of n+1 rows ends on another key)",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select e.id, p.id as pid from ${EDGE} as e cross join ${PG} as p order by e.timestamp desc limit 20`,
    expect: ["e09", "e08"].flatMap((id) =>
      ["p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09", "p10"].map((pid) => ({ id, pid })),
    ),
  },
  {
    name: "ties across a LIMIT's end and a read-ahead's (rows n and n+1 share the leading key)",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select e.id, p.id as pid from ${EDGE} as e cross join ${PG} as p order by e.timestamp desc limit 15`,
    expect: [
      ...["p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09", "p10"].map((pid) => ({
        id: "e09",
        pid,
      })),
      ...["p01", "p02", "p03", "p04", "p05"].map((pid) => ({ id: "e08", pid })),
    ],
  },
  {
    name: "an ordered LIMIT over a CTE that its WHERE reads again (an engine may read the CTE's rows past a cut)",
    rule: "DESIGN.md §3: an optimisation of an ordered LIMIT changes no row of the result",
    sql: `with e as (select id, timestamp from ${EDGE}) select id from e where timestamp > (select min(timestamp) from e) order by timestamp desc limit 3`,
    expect: [{ id: "e09" }, { id: "e08" }, { id: "e07" }],
  },
  {
    name: "an ordered LIMIT whose select list reads its table again",
    rule: "DESIGN.md §3: an optimisation of an ordered LIMIT changes no row of the result",
    sql: `select id, (select count(*) from ${EDGE}) as n from ${EDGE} order by timestamp desc limit 2`,
    expect: [
      { id: "e09", n: 12 },
      { id: "e08", n: 12 },
    ],
  },
  {
    name: "ties on the leading key at a LIMIT cut, oldest first",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select e.id, p.id as pid from ${EDGE} as e cross join ${PG} as p where p.project is not null order by e.timestamp limit 3`,
    expect: [
      { id: "e10", pid: "p01" },
      { id: "e10", pid: "p02" },
      { id: "e10", pid: "p03" },
    ],
  },
  {
    name: "grouped rows ordered by every group key are cut at a LIMIT the same way, NULL group first",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select m.counter as c, count(*) as n from ${EDGE} left join unnest(metadata) as m on true group by c order by c limit 2`,
    expect: [
      { c: null, n: 10 },
      { c: -42, n: 1 },
    ],
  },
  {
    name: "grouped rows ordered by every group key, descending, NULL group last",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select m.counter as c, count(*) as n from ${EDGE} left join unnest(metadata) as m on true group by c order by c desc limit 3`,
    expect: [
      { c: "9007199254740993", n: 1 },
      { c: -42, n: 1 },
      { c: null, n: 10 },
    ],
  },
  {
    name: "grouped rows ordered by some of the group keys are completed by the others at a LIMIT",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `select project, id, count(*) as n from ${EDGE} group by project, id order by project limit 2`,
    expect: [
      { project: "alpha", id: "e01", n: 1 },
      { project: "alpha", id: "e02", n: 1 },
    ],
  },
  {
    name: "ties at a LIMIT cut over a CTE that filters a join (an engine may cut on the CTE's own rows)",
    rule: "DESIGN.md §3: where LIMIT cuts an ordered result, ties are broken the same way on every backend",
    sql: `with e as (select t.id, p.id as pid, t.timestamp from ${EDGE} as t cross join ${PG} as p where p.project = 'beta') select id, pid from e order by timestamp desc limit 3`,
    expect: [
      { id: "e09", pid: "p06" },
      { id: "e09", pid: "p07" },
      { id: "e09", pid: "p08" },
    ],
  },
  {
    name: "a LIMIT cut over a CTE that has a LIMIT of its own cuts the CTE's rows",
    rule: "BigQuery query syntax: a CTE's LIMIT applies before the query that reads it",
    sql: `with e as (select id, timestamp from ${EDGE} order by timestamp limit 5) select id from e order by timestamp desc limit 2`,
    expect: col("id", "e02", "e01"),
  },
  {
    name: "a LIMIT cut over a CTE filtered again by the reading query",
    rule: "BigQuery query syntax: WHERE filters before ORDER BY and LIMIT",
    sql: `with e as (select id, timestamp, project from ${EDGE}) select id from e where project = 'beta' order by timestamp desc limit 2`,
    expect: col("id", "e08", "e07"),
  },
  {
    name: "a window over the rows of an ordered LIMIT sees every row, not only those past the cut",
    rule: "BigQuery query syntax: window functions are computed before ORDER BY and LIMIT",
    sql: `select id, count(*) over () as n, row_number() over (order by timestamp) as r from ${EDGE} order by timestamp desc limit 2`,
    expect: [
      { id: "e09", n: 12, r: 12 },
      { id: "e08", n: 12, r: 11 },
    ],
  },
  {
    name: "ties at an OFFSET",
    rule: "DESIGN.md §3: where OFFSET cuts an ordered result, ties are broken the same way on every backend",
    sql: `select q.path, count(*) as n from ${PATHS} group by path order by n desc limit 2 offset 2`,
    expect: [
      { path: "/auth/v1/user", n: 1 },
      { path: "/functions/v1/hello", n: 1 },
    ],
  },
  {
    name: "ties at a LIMIT decided by a column the outer query does not select",
    rule: "DESIGN.md §3: the rows a LIMIT keeps are the same on every backend",
    sql: `with top as (select id, project from ${EDGE} order by project limit 2) select id from top order by id`,
    expect: [{ id: "e01" }, { id: "e02" }],
  },
  {
    name: "ties at a LIMIT over records",
    rule: "DESIGN.md §3: ties broken the same way on every backend, record columns included",
    sql: `select project, m.request[0].method as method from ${EDGE}, unnest(metadata) m order by project desc limit 2`,
    expect: [
      { project: "gamma", method: "GET" },
      { project: "gamma", method: "GET" },
    ],
  },
  {
    name: "ties at a LIMIT of a set operation",
    rule: "DESIGN.md §3: ties broken the same way on every backend",
    sql: `select project, id from ${EDGE} union all select project, id from \`postgres.logs\` order by project limit 4`,
    expect: [
      { project: null, id: "p10" },
      { project: "alpha", id: "e01" },
      { project: "alpha", id: "e02" },
      { project: "alpha", id: "e03" },
    ],
  },
  {
    name: "SELECT DISTINCT … ORDER BY … LIMIT",
    rule: "BigQuery SELECT DISTINCT with ORDER BY on selected columns; ties broken by the rest",
    sql: `select distinct project, q.method from ${PATHS} order by project limit 3`,
    expect: [
      { project: "alpha", method: "GET" },
      { project: "alpha", method: "POST" },
      { project: "beta", method: "DELETE" },
    ],
  },
  // ---------------------------------------------------------------- found by fuzzing (bench/.scratch)
  {
    name: "an OR among a function's arguments is that argument",
    rule: "BigQuery: OR binds inside one argument; a call's arguments are separated by commas (was a 500)",
    sql: `select coalesce(null, id = 'x' or id = 't01', false) as c, greatest(false, id = 't01' or false) as g, [false, true or false] as a from ${ONE}`,
    expect: [{ c: true, g: true, a: [false, true] }],
  },
  {
    name: "DIV by zero raises",
    rule: "BigQuery DIV: division by zero is an error (ClickHouse answered 500, DuckDB NULL)",
    sql: `select div(5, 0) as d from ${ONE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "MOD by zero raises",
    rule: "BigQuery MOD: division by zero is an error (ClickHouse answered 500, DuckDB NULL)",
    sql: `select mod(length(id), 0) as m from ${ONE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a bare NULL passed to aggregates and typed functions",
    rule: "BigQuery: an untyped NULL takes the type its place expects (INT64 by default); the call is NULL (PostgreSQL refused sum(NULL) as ambiguous, DuckDB EXTRACT(… FROM NULL))",
    sql: `select sum(null) as s, max(null) as mx, array_agg(null) as a, -null as n, extract(day from null) as d, date_trunc(null, month) as dt, abs(null) as ab from ${ONE}`,
    expect: [{ s: null, mx: null, a: [], n: null, d: null, dt: null, ab: null }],
  },
  {
    name: "CAST of an empty string to INT64 is the query's error",
    rule: "BigQuery CAST: a STRING that is not a number cannot be cast to INT64 (ClickHouse answered 500)",
    sql: `select cast(s as int64) as n from unnest(['']) as s`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a delimiter read per row is refused on every backend",
    rule: "docs/functions.md departure: SPLIT's delimiter is a literal or a parameter (ClickHouse refused a column, the others ran it)",
    sql: `select split('a,b', id) as a from ${ONE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "characters to trim read per row are refused on every backend",
    rule: "docs/functions.md departure: LTRIM/RTRIM/TRIM take a literal or a parameter (ClickHouse refused a column)",
    sql: `select rtrim(id, id) as a from ${ONE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a STRING_AGG delimiter read per row is refused on every backend",
    rule: "docs/functions.md departure: STRING_AGG's delimiter is a literal or a parameter (DuckDB and ClickHouse refused a column, PostgreSQL ran it)",
    sql: `select string_agg(id, project) as a from ${REST}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "delimiters and characters to trim given as parameters",
    rule: "BigQuery SPLIT, ARRAY_TO_STRING, STRING_AGG, TRIM: a parameter is a constant on every engine",
    sql: `select split('a;b', @d) as s, array_to_string(['x', 'y'], @d) as j, string_agg(id, @d order by id) as g, trim(';a;', @d) as t from ${REST}`,
    params: { d: { kind: "string", value: ";" } },
    expect: [{ s: ["a", "b"], j: "x;y", g: "t01;t02;t03", t: "a" }],
  },
  {
    name: "a NULL delimiter or set of characters to trim gives NULL",
    rule: "BigQuery SPLIT, ARRAY_TO_STRING, TRIM: a NULL argument gives NULL (DuckDB's ARRAY_TO_STRING joined with ',')",
    sql: `select split('a;b', cast(null as string)) is null as s, array_to_string(['x', 'y'], cast(null as string)) as j, array_to_string(split(id, '0'), cast(null as string)) as k, trim(';a;', cast(null as string)) as t from ${REST} where id = 't01'`,
    expect: [{ s: true, j: null, k: null, t: null }],
  },
  {
    name: "a string literal aggregated",
    rule: "BigQuery aggregate functions take any expression of their type, a literal too (PostgreSQL refused array_agg('x') as ambiguous)",
    sql: `select array_agg('x') as a, max('z') as m, any_value('v') as v, array_agg(distinct 'x' ignore nulls) as d from ${REST}`,
    expect: [{ a: ["x", "x", "x"], m: "z", v: "v", d: ["x"] }],
  },
  {
    name: "JSON functions of a literal that is not JSON",
    rule: "BigQuery JSON_VALUE/JSON_QUERY of text that is not JSON: NULL (PostgreSQL refused a literal, as it parses a literal's cast with the query)",
    sql: `select json_query('%Z', '$.a') as a, json_value('$', '$.a') as b, json_extract('', '$') as c, json_extract_scalar('x', '$') as d from ${ONE}`,
    expect: [{ a: null, b: null, c: null, d: null }],
  },
  {
    name: "STRING_AGG in a subquery over the UNNEST of a row's array",
    rule: "BigQuery correlated subqueries over UNNEST: STRING_AGG of the row's elements, NULL over none (ClickHouse answered 500)",
    sql: `select id, (select string_agg(x, '-' order by x desc) from unnest(['a', t.id, null]) as x) as a, (select string_agg(x) from unnest(split(t.id, 'z')) as x where x = 'q') as b from ${REST} as t order by id`,
    expect: [
      { id: "t01", a: "t01-a", b: null },
      { id: "t02", a: "t02-a", b: null },
      { id: "t03", a: "t03-a", b: null },
    ],
  },
  {
    name: "a chain of 3,000 || operands",
    rule: "README limits: a chain of || counts as one level, however long (DuckDB refused 1,000 operands, PostgreSQL ran out of stack near 5,000)",
    sql: `select length('a'${" || 'a'".repeat(2999)}) as n, 'x'${" || 'y'".repeat(20)} || cast(null as string) as z from ${ONE}`,
    expect: [{ n: 3000, z: null }],
  },
  {
    name: "ARRAY_LENGTH of a repeated record of one element",
    rule: "DESIGN.md §3: a nested object is a REPEATED RECORD of one element, so its ARRAY_LENGTH is 1; NULL where absent (DuckDB said 0, ClickHouse its number of keys, PostgreSQL refused it)",
    sql: `select id, array_length(t.metadata) as a, array_length(m.request) as b from ${EDGE} as t left join unnest(t.metadata) as m on true where id in ('e01', 'e09') order by id`,
    expect: [
      { id: "e01", a: 1, b: 1 },
      { id: "e09", a: null, b: null },
    ],
  },
  {
    name: "a string literal as a window function's value",
    rule: "BigQuery FIRST_VALUE/LAST_VALUE/LAG take any expression (PostgreSQL refused a literal: 'could not determine polymorphic type')",
    sql: `select id, first_value('z') over () as f, last_value('x') over () as l, lag('y') over (order by id) as g from ${REST} order by id`,
    expect: [
      { id: "t01", f: "z", l: "x", g: null },
      { id: "t02", f: "z", l: "x", g: "y" },
      { id: "t03", f: "z", l: "x", g: "y" },
    ],
  },
  {
    name: "SUBSTR, LEFT and RIGHT with positions and lengths beyond 32 bits",
    rule: "BigQuery SUBSTR/LEFT/RIGHT: a position or length past the string's end is the string's end (PostgreSQL: 'integer out of range', DuckDB: 'Substring length outside of supported range')",
    sql: `select substr('abcdef', 253402300799999999) as a, substr('abcdef', -9223372036854775807) as b, substr('abcdef', 2, 9223372036854775807) as c, left('abc', 9223372036854775807) as d, right('abc', 4294967296) as e from ${ONE}`,
    expect: [{ a: "", b: "abcdef", c: "bcdef", d: "abc", e: "abc" }],
  },
  {
    name: "a negative length given to SUBSTR is refused",
    rule: "BigQuery SUBSTR: the length cannot be negative (only PostgreSQL refused it; DuckDB and ClickHouse answered '')",
    sql: `select substr('abc', 1, -9223372036854775807) as a from ${ONE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a ROWS frame offset beyond 32 bits",
    rule: "BigQuery window frames: n PRECEDING / FOLLOWING takes any INT64 (ClickHouse refused more than 2^31 - 2 rows)",
    sql: `select id, count(*) over (order by id rows between 9223372036854775807 preceding and 2147483648 following) as a, sum(1) over (order by id rows between 2147483647 preceding and current row) as b from ${REST} order by id`,
    expect: [
      { id: "t01", a: 3, b: 1 },
      { id: "t02", a: 3, b: 2 },
      { id: "t03", a: 3, b: 3 },
    ],
  },
];

const AUTH_SRC = "`gotrue.logs.prod`";

// ---------------------------------------------------------------- range variables as STRUCTs
export const structCases: SqlCase[] = [
  {
    name: "a CTE's alias used as a value, subscripted by position",
    rule: "BigQuery: a range variable on its own is a STRUCT of its row; STRUCT subscript by position",
    sql: `with dates as (select timestamp_sub(current_timestamp(), interval 1 hour) as start) select count(*) as n from dates, ${EDGE} as t where t.timestamp >= dates[0]`,
    expect: [{ n: 5 }],
  },
  {
    name: "STRUCT subscripts: OFFSET, ORDINAL, SAFE_OFFSET, and a field by name",
    rule: "BigQuery field access operator: struct[OFFSET(n)], [ORDINAL(n)], [SAFE_OFFSET(n)] by position",
    sql: `with dates as (select timestamp_sub(current_timestamp(), interval 1 hour) as start, 'x' as label) select dates[offset(1)] as a, dates[ordinal(1)] as b, dates[safe_offset(5)] as c, dates.label as d from dates`,
    expect: [{ a: "x", b: 1736938800000000, c: null, d: "x" }],
  },
  {
    name: "a range variable selected whole is a STRUCT of its columns",
    rule: "BigQuery: SELECT alias returns a STRUCT of the row",
    sql: `with d as (select timestamp_sub(current_timestamp(), interval 1 hour) as start, 'x' as label, date '2025-01-02' as day, [1, 2] as arr) select d from d`,
    expect: [{ d: { start: 1736938800000000, label: "x", day: "2025-01-02", arr: [1, 2] } }],
  },
  {
    name: "a subquery's alias as a STRUCT",
    rule: "BigQuery: a range variable on its own is a STRUCT of its row",
    sql: "select s, s[1] as b from (select 1 as a, 'b' as b) as s",
    expect: [{ s: { a: 1, b: "b" }, b: "b" }],
  },
  {
    name: "a STRUCT literal subscripted by position",
    rule: "BigQuery field access operator on STRUCT(…)",
    sql: `select struct(1 as a, 'x' as b)[offset(1)] as b, struct(1 as a, 'x' as b)[0] as a from ${ONE}`,
    expect: [{ b: "x", a: 1 }],
  },
  {
    name: "a source table's alias subscripted by position",
    rule: "BigQuery: a table's range variable is a STRUCT of its columns in table order",
    sql: `select t[offset(0)] as id, t[1] as ts from ${EDGE} as t where id = 'e01'`,
    expect: [{ id: "e01", ts: 1736935200000000 }],
  },
  {
    name: "subscripts chained through a CTE's record column",
    rule: "BigQuery: STRUCT subscript, then ARRAY subscript and field access",
    sql: `with c as (select id, metadata from ${EDGE} where id = 'e01') select c[1][0].request[0].path as p from c`,
    expect: [{ p: "/rest/v1/todos" }],
  },
  // a range variable's STRUCT was typed as its JSON text: MAX, ORDER BY, LENGTH, ARRAY_AGG …
  // took each engine's own text of the row (PostgreSQL's spaced, ClickHouse's INT64 as strings)
  ...[
    ["MAX of", `select max(t) as x from ${EDGE} as t`],
    ["ORDER BY", `select id from ${EDGE} as t order by t`],
    ["GROUP BY", `select count(*) as n from ${EDGE} as t group by t`],
    ["COUNT(DISTINCT) of", `select count(distinct t) as n from ${EDGE} as t`],
    ["ARRAY_AGG of", `select array_agg(t) as a from ${EDGE} as t`],
    ["STRING_AGG of", `select string_agg(t, ',') as s from ${EDGE} as t`],
    ["LENGTH of", `select length(t) as n from ${EDGE} as t`],
    ["= between", `select t = t as e from ${EDGE} as t`],
  ].map(
    ([what, sql]): SqlCase => ({
      name: `${what} a range variable's STRUCT is refused, as of any STRUCT`,
      rule: "BigQuery: a range variable on its own is a STRUCT of its row, not the text of one",
      sql: sql as string,
      expect: { error: "sql_invalid" },
    }),
  ),
  // CONCAT took any value: a STRUCT as each engine's own JSON text (`{"a" : 1}` on PostgreSQL,
  // `{"a":"1"}` on ClickHouse), an ARRAY failed in DuckDB and PostgreSQL and was text in ClickHouse
  ...[
    ["a STRUCT literal", `select concat(struct(1 as a), '') as c from ${ONE}`],
    ["a range variable's STRUCT", `select concat(t, '') as c from ${EDGE} as t`],
    ["an unnested record", `select concat(m, '') as c from ${EDGE} as t, unnest(t.metadata) m`],
    ["a repeated record", `select t.metadata || 'x' as c from ${EDGE} as t`],
    ["an ARRAY", `select concat([1, 2], '') as c from ${ONE}`],
    ["an ARRAY with ||", `select [1] || [2] as c from ${ONE}`],
  ].map(
    ([what, sql]): SqlCase => ({
      name: `CONCAT of ${what} is refused`,
      rule: "BigQuery: CONCAT takes STRING (or BYTES) values: no matching signature for a STRUCT or an ARRAY",
      sql: sql as string,
      expect: { error: "sql_invalid" },
    }),
  ),
  {
    name: "MAX and MIN of a STRUCT are refused",
    rule: "BigQuery data type properties: STRUCT is not orderable (MAX/MIN need an orderable type)",
    sql: `select max(m) as x from ${EDGE}, unnest(metadata) m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "MIN of a STRUCT literal is refused",
    rule: "BigQuery data type properties: STRUCT is not orderable (MAX/MIN need an orderable type)",
    sql: `select min(struct(id as a)) as x from ${EDGE}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "GROUP BY a STRUCT is refused",
    rule: "BigQuery: grouping by expressions of type STRUCT is not allowed",
    sql: `select count(*) as n from ${EDGE}, unnest(metadata) m group by m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "GROUP BY a repeated record is refused",
    rule: "BigQuery: grouping by expressions of type STRUCT (here ARRAY<STRUCT>) is not allowed",
    sql: `select count(*) as n from ${EDGE}, unnest(metadata) m, unnest(m.request) q group by q.cf`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SELECT DISTINCT of a STRUCT is refused",
    rule: "BigQuery: a column of type STRUCT cannot be used in SELECT DISTINCT",
    sql: `select distinct m from ${EDGE}, unnest(metadata) m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "COUNT(DISTINCT) of a STRUCT is refused",
    rule: "BigQuery: DISTINCT needs a groupable type; STRUCT is not",
    sql: `select count(distinct m) as n from ${EDGE}, unnest(metadata) m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "UNION DISTINCT of a STRUCT column is refused",
    rule: "BigQuery: set operations with DISTINCT need groupable column types; STRUCT is not",
    sql: `select m from ${EDGE}, unnest(metadata) m union distinct select m from ${EDGE}, unnest(metadata) m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "ORDER BY a STRUCT is refused",
    rule: "BigQuery data type properties: STRUCT is not orderable (ORDER BY does not support it)",
    sql: `select id from ${EDGE}, unnest(metadata) m order by m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "PARTITION BY and window ORDER BY of a STRUCT are refused",
    rule: "BigQuery: PARTITION BY needs a groupable, window ORDER BY an orderable type; STRUCT is neither",
    sql: `select row_number() over (partition by m) as x from ${EDGE}, unnest(metadata) m`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "ORDER BY an ARRAY is refused",
    rule: "BigQuery data type properties: ARRAY is not orderable",
    sql: `select id from ${EDGE} order by split(id, '0')`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "GREATEST of STRUCTs is refused",
    rule: "BigQuery GREATEST: the arguments must be of an orderable type; STRUCT is not",
    sql: "select greatest(struct(1 as a), struct(2 as a)) as x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "ANY_VALUE of a record read from events",
    rule: "BigQuery ANY_VALUE takes any type; DESIGN.md §3: every backend takes the same one (PostgreSQL has no min(json))",
    sql: `select any_value(m.request[0].cf) as cf from ${EDGE}, unnest(metadata) m where id in ('e01', 'e02')`,
    expect: [
      {
        cf: [
          {
            country: "DE",
            asn: 3320,
            latitude: 52.52,
            botManagement: [{ score: 30, verifiedBot: false, detectionIds: [] }],
          },
        ],
      },
    ],
  },
];

// ---------------------------------------------------------------- join groups right of outer joins
export const joinGroupCases: SqlCase[] = [
  {
    name: "LEFT JOIN of a parenthesised join group",
    rule: "BigQuery FROM clause: a parenthesised join is a from_item; unmatched rows keep NULLs",
    sql: `select a.id, r.status_code as s from ${AUTH_SRC} as a cross join unnest(a.metadata) as am left join (${EDGE} as e cross join unnest(e.metadata) as em cross join unnest(em.response) as r) on am.status = r.status_code where a.id in ('a03', 'a04', 'a05', 'a07') order by a.id`,
    expect: [
      { id: "a03", s: 400 },
      { id: "a04", s: 500 },
      { id: "a05", s: null },
      { id: "a07", s: null },
    ],
  },
  {
    name: "LEFT JOIN of a join group whose ON reads inside the group",
    rule: "BigQuery FROM clause: the ON condition sees the group's range variables",
    sql: `select a.id, e.id as eid from ${AUTH_SRC} as a left join (${EDGE} as e cross join unnest(e.metadata) as em cross join unnest(em.request) as q) on a.project = e.project and q.method = 'DELETE' where a.id in ('a01', 'a06') order by a.id`,
    expect: [
      { id: "a01", eid: null },
      { id: "a06", eid: "e07" },
    ],
  },
  {
    name: "FULL JOIN of a join group with a LEFT JOIN inside",
    rule: "BigQuery FROM clause: FULL JOIN keeps unmatched rows of both sides",
    sql: `select count(*) as n, countif(a.id is null) as only_group, countif(e.id is null) as only_auth from ${AUTH_SRC} as a full join (${EDGE} as e left join \`postgres.logs\` as p on e.project = p.project) on a.id = e.id`,
    expect: [{ n: 55, only_group: 45, only_auth: 10 }],
  },
  {
    name: "an inner JOIN of a group with a LEFT JOIN inside",
    rule: "BigQuery FROM clause: outer joins inside a parenthesised group",
    sql: `select p.id as pid, g.id as gid from ${EDGE} as e join (\`postgres.logs\` as p left join ${AUTH_SRC} as g on p.id = g.id) on e.project = p.project where e.id = 'e06' order by pid`,
    expect: [
      { pid: "p06", gid: null },
      { pid: "p07", gid: null },
      { pid: "p08", gid: null },
      { pid: "p09", gid: null },
    ],
  },
];

// An ordered LIMIT on a non-NULL leading key is planned per engine (docs/compiler.md, "The newest
// n rows"): cut at the n-th key, read ahead n+1 rows (ClickHouse), or cut first through an index
// (DuckDB). Each case below is a shape that could make a plan differ from the plain query.
const CUT = "DESIGN.md §3: an optimisation of an ordered LIMIT changes no row of the result";
const E = `with e as (select id, timestamp, project from ${EDGE})`;
/** REST rows t01..t03, only t01 joined to e01: b's columns are NULL on t02 and t03 */
const OUTER = `${REST} as a left join ${EDGE} as b on a.project = b.project and b.id = 'e01' and a.id = 't01'`;

export const orderedLimitCases: SqlCase[] = [
  {
    name: "cut: oldest three",
    rule: CUT,
    sql: `select id from ${EDGE} order by timestamp limit 3`,
    expect: col("id", "e10", "e11", "e12"),
  },
  {
    name: "cut: LIMIT 1, newest and oldest",
    rule: CUT,
    sql: `select (select id from ${EDGE} order by timestamp desc limit 1) as newest, (select id from ${EDGE} order by timestamp limit 1) as oldest from ${EDGE} order by timestamp desc limit 1`,
    expect: [{ newest: "e09", oldest: "e10" }],
  },
  {
    name: "cut: LIMIT 1 at a microsecond apart from the next row",
    rule: CUT,
    sql: `select id from ${EDGE} where timestamp < '2025-01-15 10:30:00' order by timestamp desc limit 1`,
    expect: col("id", "e02"),
  },
  {
    name: "cut: ascending LIMIT 1 at a microsecond before midnight",
    rule: CUT,
    sql: `select id, timestamp from ${EDGE} order by timestamp limit 1`,
    expect: [{ id: "e10", timestamp: us("2025-01-14T23:59:59.999999Z") }],
  },
  {
    name: "cut: a cut value with fractional microseconds",
    rule: CUT,
    sql: `select id from ${EDGE} where project = 'gamma' order by timestamp desc limit 1`,
    expect: col("id", "e12"),
  },
  {
    name: "cut: LIMIT larger than the rows",
    rule: CUT,
    sql: `select id from ${EDGE} where project = 'beta' order by timestamp desc limit 100`,
    expect: col("id", "e08", "e07", "e06"),
  },
  {
    name: "cut: LIMIT equal to the rows, and one fewer",
    rule: CUT,
    sql: `select (select count(*) from (select id from ${EDGE} order by timestamp desc limit 12)) as a, (select min(id) from (select id from ${EDGE} order by timestamp desc limit 11)) as b from ${REST} where id = 't01'`,
    expect: [{ a: 12, b: "e01" }],
  },
  {
    name: "cut: LIMIT 11 of 12 keeps all but the oldest",
    rule: CUT,
    sql: `select id from ${EDGE} order by timestamp desc limit 11`,
    expect: col("id", "e09", "e08", "e07", "e06", "e05", "e04", "e03", "e02", "e01", "e12", "e11"),
  },
  {
    name: "cut: a filter matching nothing",
    rule: CUT,
    sql: `select id from ${EDGE} where project = 'nope' order by timestamp desc limit 5`,
    expect: [],
  },
  {
    name: "cut: a CTE whose filter matches nothing",
    rule: CUT,
    sql: `with e as (select id, timestamp from ${EDGE} where project = 'nope') select id from e order by timestamp limit 5`,
    expect: [],
  },
  {
    name: "cut: an empty source",
    rule: CUT,
    sql: `select id from ${BOUNCER} order by timestamp desc limit 3`,
    expect: [],
  },
  {
    name: "cut: SELECT * of a CTE",
    rule: CUT,
    sql: `${E} select * from e order by timestamp desc limit 2`,
    expect: [
      { id: "e09", timestamp: us("2025-01-15T11:59:59Z"), project: "alpha" },
      { id: "e08", timestamp: us("2025-01-15T11:45:00Z"), project: "beta" },
    ],
  },
  {
    name: "cut: a CTE with its own WHERE on a parameter, newest",
    rule: CUT,
    sql: `with e as (select id, timestamp from ${EDGE} where project = @project) select id from e order by timestamp desc limit 2`,
    params: { project: { kind: "string", value: "beta" } },
    expect: col("id", "e08", "e07"),
  },
  {
    name: "cut: a CTE with its own WHERE on a parameter, oldest",
    rule: CUT,
    sql: `with e as (select id, timestamp from ${EDGE} where project = @project and timestamp >= '2025-01-15') select id from e order by timestamp limit 2`,
    params: { project: { kind: "string", value: "gamma" } },
    expect: col("id", "e11", "e12"),
  },
  {
    name: "cut: a parameter only in the select list",
    rule: CUT,
    sql: `select id, @tag as tag from ${EDGE} order by timestamp desc limit 2`,
    params: { tag: { kind: "string", value: "x" } },
    expect: [
      { id: "e09", tag: "x" },
      { id: "e08", tag: "x" },
    ],
  },
  {
    name: "cut: a parameter in the select list and one in the WHERE",
    rule: CUT,
    sql: `select @tag as tag, id from ${EDGE} where project = @project order by timestamp limit 2`,
    params: { tag: { kind: "string", value: "x" }, project: { kind: "string", value: "beta" } },
    expect: [
      { tag: "x", id: "e06" },
      { tag: "x", id: "e07" },
    ],
  },
  {
    name: "cut: parameters first met in another order by the cut than by the query",
    rule: CUT,
    sql: `select @a as a, id from ${EDGE} where project = @b and id != @a order by timestamp desc limit 2`,
    params: { a: { kind: "string", value: "x" }, b: { kind: "string", value: "beta" } },
    expect: [
      { a: "x", id: "e08" },
      { a: "x", id: "e07" },
    ],
  },
  {
    name: "cut: a parameter of the CTE's select list and one of its WHERE",
    rule: CUT,
    sql: `with e as (select id, timestamp, @a as a from ${EDGE} where project = @b) select a, id from e order by timestamp limit 2`,
    params: { a: { kind: "string", value: "x" }, b: { kind: "string", value: "alpha" } },
    expect: [
      { a: "x", id: "e01" },
      { a: "x", id: "e02" },
    ],
  },
  {
    name: "cut: a stored query's CTE over the last hour (CURRENT_TIMESTAMP) read with a pattern parameter, newest",
    rule: CUT,
    sql: `with edge_logs as (select t.timestamp, t.id, t.event_message from ${EDGE} t where t.timestamp > timestamp_sub(current_timestamp(), interval 1 hour)) select id, @q as q from edge_logs where regexp_contains(event_message, @q) order by timestamp desc limit 2`,
    params: { q: { kind: "string", value: "^GET" } },
    expect: [
      { id: "e08", q: "^GET" },
      { id: "e06", q: "^GET" },
    ],
  },
  {
    name: "cut: a stored query's CTE over the last hour (CURRENT_TIMESTAMP) read with a pattern parameter, oldest",
    rule: CUT,
    sql: `with edge_logs as (select t.timestamp, t.id, t.event_message from ${EDGE} t where t.timestamp > timestamp_sub(current_timestamp(), interval 1 hour)) select id from edge_logs where not regexp_contains(event_message, @q) order by timestamp limit 5`,
    params: { q: { kind: "string", value: "^GET" } },
    expect: col("id", "e07", "e09"),
  },
  {
    name: "cut: a chain of CTEs, each filtering, newest",
    rule: CUT,
    sql: `with a as (select id, timestamp, project from ${EDGE} where project != 'gamma'), b as (select id, timestamp as ts from a where project = 'alpha') select id from b order by ts desc limit 3`,
    expect: col("id", "e09", "e05", "e04"),
  },
  {
    name: "cut: a chain of CTEs, each filtering, oldest",
    rule: CUT,
    sql: `with a as (select id, timestamp, project from ${EDGE} where project != 'gamma'), b as (select id, timestamp from a where project = 'alpha') select id from b order by timestamp limit 2`,
    expect: col("id", "e01", "e02"),
  },
  {
    name: "cut: expressions over the CTE's columns in the select list",
    rule: CUT,
    sql: `${E} select upper(id) as u, case when project = 'beta' then 1 else 0 end as b from e order by timestamp desc limit 3`,
    expect: [
      { u: "E09", b: 0 },
      { u: "E08", b: 1 },
      { u: "E07", b: 1 },
    ],
  },
  {
    name: "cut: a window in the CTE sees every row",
    rule: CUT,
    sql: `with e as (select id, timestamp, row_number() over (order by timestamp) as r, count(*) over () as n from ${EDGE}) select id, r, n from e order by timestamp desc limit 2`,
    expect: [
      { id: "e09", r: 12, n: 12 },
      { id: "e08", r: 11, n: 12 },
    ],
  },
  {
    name: "cut: a CTE read by another CTE that the WHERE reads",
    rule: CUT,
    sql: `${E}, f as (select timestamp from e) select id from e where timestamp > (select min(timestamp) from f) order by timestamp desc limit 3`,
    expect: col("id", "e09", "e08", "e07"),
  },
  {
    name: "cut: a subquery in the select list reads the same CTE",
    rule: CUT,
    sql: `${E} select id, (select count(*) from e) as n from e order by timestamp desc limit 2`,
    expect: [
      { id: "e09", n: 12 },
      { id: "e08", n: 12 },
    ],
  },
  {
    name: "cut: a correlated subquery in the select list reads the same CTE",
    rule: CUT,
    sql: `${E} select id, (select count(*) from e as f where f.timestamp <= e.timestamp) as n from e order by timestamp limit 2`,
    expect: [
      { id: "e10", n: 1 },
      { id: "e11", n: 2 },
    ],
  },
  {
    name: "cut: a subquery in the ORDER BY reads the same CTE",
    rule: CUT,
    sql: `${E} select id from e order by timestamp desc, (select max(id) from e) limit 2`,
    expect: col("id", "e09", "e08"),
  },
  {
    name: "cut: EXISTS over the same CTE",
    rule: CUT,
    sql: `${E} select id from e where exists (select 1 from e as f where f.timestamp < '2025-01-15') order by timestamp desc limit 2`,
    expect: col("id", "e09", "e08"),
  },
  {
    name: "cut: a correlated EXISTS over the same CTE",
    rule: CUT,
    sql: `${E} select id from e where not exists (select 1 from e as f where f.timestamp < e.timestamp) order by timestamp desc limit 2`,
    expect: col("id", "e10"),
  },
  {
    name: "cut: IN over the same table",
    rule: CUT,
    sql: `select id from ${EDGE} where id in (select id from ${EDGE} where project = 'gamma') order by timestamp desc limit 2`,
    expect: col("id", "e12", "e11"),
  },
  {
    name: "cut: a subquery in FROM",
    rule: CUT,
    sql: `select id from (select id, timestamp from ${EDGE} where project = 'alpha') order by timestamp desc limit 2`,
    expect: col("id", "e09", "e05"),
  },
  {
    name: "cut: rows of an UNNEST join tie on the key",
    rule: CUT,
    sql: `select e.id, x from ${EDGE} as e, unnest([2, 1]) as x order by e.timestamp desc limit 3`,
    expect: [
      { id: "e09", x: 1 },
      { id: "e09", x: 2 },
      { id: "e08", x: 1 },
    ],
  },
  {
    name: "cut: a self join of the CTE",
    rule: CUT,
    sql: `${E} select a.id, b.id as bid from e as a join e as b on a.project = b.project where b.project = 'beta' order by a.timestamp, b.timestamp desc limit 4`,
    expect: [
      { id: "e06", bid: "e08" },
      { id: "e06", bid: "e07" },
      { id: "e06", bid: "e06" },
      { id: "e07", bid: "e08" },
    ],
  },
  {
    name: "cut: an explicit second key breaks ties before the selected columns",
    rule: CUT,
    sql: `select e.id, r.id as rid from ${EDGE} as e cross join ${REST} as r order by e.timestamp desc, r.id desc limit 4`,
    expect: [
      { id: "e09", rid: "t03" },
      { id: "e09", rid: "t02" },
      { id: "e09", rid: "t01" },
      { id: "e08", rid: "t03" },
    ],
  },
  {
    name: "cut: ties across sources of a UNION ALL CTE",
    rule: CUT,
    sql: `with u as (select id, timestamp from ${EDGE} union all select id, timestamp from ${RT}) select id from u where timestamp < '2025-01-15 10:01:00' order by timestamp desc limit 2`,
    expect: col("id", "e02", "e01"),
  },
  {
    name: "cut: ties at the boundary across sources of a UNION ALL CTE, oldest",
    rule: CUT,
    sql: `with u as (select id, timestamp from ${EDGE} union all select id, timestamp from ${RT}) select id from u where timestamp >= '2025-01-15 09:30:00' order by timestamp limit 2`,
    expect: col("id", "e01", "r01"),
  },
  {
    name: "cut: a UNION ALL at the top level, newest",
    rule: CUT,
    sql: `select id, timestamp as ts from ${EDGE} union all select id, timestamp from ${REST} order by ts desc limit 2`,
    expect: [
      { id: "e09", ts: us("2025-01-15T11:59:59Z") },
      { id: "e08", ts: us("2025-01-15T11:45:00Z") },
    ],
  },
  {
    name: "cut: a UNION ALL at the top level, oldest, ties across its branches",
    rule: CUT,
    sql: `select id, timestamp as ts from ${EDGE} union all select id, timestamp from ${REST} order by ts limit 5`,
    expect: [
      { id: "e10", ts: us("2025-01-14T23:59:59.999999Z") },
      { id: "e11", ts: us("2025-01-15T00:00:00Z") },
      { id: "e12", ts: us("2025-01-15T09:00:00.123456Z") },
      { id: "e01", ts: us("2025-01-15T10:00:00Z") },
      { id: "t01", ts: us("2025-01-15T10:00:00Z") },
    ],
  },
  {
    name: "cut: ordered LIMITs inside both branches of a UNION ALL",
    rule: CUT,
    sql: `select id from (select id from (select id, timestamp from ${EDGE} order by timestamp desc limit 2) union all select id from (select id, timestamp from ${REST} order by timestamp limit 1)) order by id`,
    expect: col("id", "e08", "e09", "t01"),
  },
  {
    name: "cut: DISTINCT",
    rule: CUT,
    sql: `select distinct timestamp, project from (select timestamp, project from ${EDGE} union all select timestamp, project from ${EDGE}) order by timestamp desc limit 2`,
    expect: [
      { timestamp: us("2025-01-15T11:59:59Z"), project: "alpha" },
      { timestamp: us("2025-01-15T11:45:00Z"), project: "beta" },
    ],
  },
  {
    name: "cut: GROUP BY the key",
    rule: CUT,
    sql: `with u as (select timestamp from ${EDGE} union all select timestamp from ${RT}) select timestamp, count(*) as n from u where timestamp < '2025-01-15 10:02:00' group by timestamp order by timestamp desc limit 3`,
    expect: [
      { timestamp: us("2025-01-15T10:01:00Z"), n: 1 },
      { timestamp: us("2025-01-15T10:00:00.000001Z"), n: 1 },
      { timestamp: us("2025-01-15T10:00:00Z"), n: 2 },
    ],
  },
  {
    name: "cut: GROUP BY an hour of the key",
    rule: CUT,
    sql: `select timestamp_trunc(timestamp, hour) as h, count(*) as n from ${EDGE} group by h order by h desc limit 2`,
    expect: [
      { h: us("2025-01-15T11:00:00Z"), n: 5 },
      { h: us("2025-01-15T10:00:00Z"), n: 4 },
    ],
  },
  {
    name: "cut: ORDER BY an expression of the key, ties broken by the selected columns",
    rule: CUT,
    sql: `select id from ${EDGE} order by timestamp_trunc(timestamp, hour) desc limit 3`,
    expect: col("id", "e05", "e06", "e07"),
  },
  {
    name: "cut: ORDER BY a CTE column that is an expression of the key",
    rule: CUT,
    sql: `with e as (select id, timestamp_trunc(timestamp, hour) as h from ${EDGE}) select id from e order by h limit 2`,
    expect: col("id", "e10", "e11"),
  },
  {
    name: "cut: ORDER BY an alias of the key",
    rule: CUT,
    sql: `select id, timestamp as ts from ${EDGE} order by ts desc limit 2`,
    expect: [
      { id: "e09", ts: us("2025-01-15T11:59:59Z") },
      { id: "e08", ts: us("2025-01-15T11:45:00Z") },
    ],
  },
  {
    name: "cut: ORDER BY an ordinal of the key",
    rule: CUT,
    sql: `select timestamp, id from ${EDGE} order by 1 limit 2`,
    expect: [
      { timestamp: us("2025-01-14T23:59:59.999999Z"), id: "e10" },
      { timestamp: us("2025-01-15T00:00:00Z"), id: "e11" },
    ],
  },
  {
    name: "cut: a window in the select list of a CTE read ordered",
    rule: CUT,
    sql: `${E} select id, lag(id) over (order by timestamp) as prev from e order by timestamp desc limit 2`,
    expect: [
      { id: "e09", prev: "e08" },
      { id: "e08", prev: "e07" },
    ],
  },
  {
    name: "cut: a user column named like the read-ahead's own columns",
    rule: CUT,
    sql: `select id as __k0, 1 as __retry, 2 as __n, 3 as __last from ${EDGE} order by timestamp desc limit 2`,
    expect: [
      { __k0: "e09", __retry: 1, __n: 2, __last: 3 },
      { __k0: "e08", __retry: 1, __n: 2, __last: 3 },
    ],
  },
  {
    name: "cut: the key of the NULL side of a LEFT JOIN, newest, NULLs last",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${OUTER} order by b.timestamp desc limit 2`,
    expect: [
      { id: "t01", bid: "e01" },
      { id: "t02", bid: null },
    ],
  },
  {
    name: "cut: the key of the NULL side of a LEFT JOIN, oldest, NULLs first",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${OUTER} order by b.timestamp limit 2`,
    expect: [
      { id: "t02", bid: null },
      { id: "t03", bid: null },
    ],
  },
  {
    name: "cut: the key of the NULL side of a RIGHT JOIN",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${EDGE} as b right join ${REST} as a on a.project = b.project and b.id = 'e01' and a.id = 't01' order by b.timestamp desc limit 2`,
    expect: [
      { id: "t01", bid: "e01" },
      { id: "t02", bid: null },
    ],
  },
  {
    name: "cut: the key of a LEFT JOIN's NULL side through a CTE",
    rule: CUT,
    sql: `with j as (select a.id, b.timestamp as ts from ${OUTER}) select id from j order by ts limit 2`,
    expect: col("id", "t02", "t03"),
  },
  {
    name: "cut: the key of a LEFT JOIN's NULL side through a subquery, newest",
    rule: CUT,
    sql: `select id from (select a.id, b.timestamp as ts from ${OUTER}) order by ts desc limit 2`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "cut: a key NULL in a later branch of a UNION ALL CTE, oldest",
    rule: CUT,
    sql: `with u as (select id, timestamp as ts from ${REST} union all select 'x', null) select id from u order by ts limit 2`,
    expect: col("id", "x", "t01"),
  },
  {
    name: "cut: a key NULL in a later branch of a UNION ALL CTE, newest past the rows",
    rule: CUT,
    sql: `with u as (select id, timestamp as ts from ${REST} union all select 'x', null) select id from u order by ts desc limit 5`,
    expect: col("id", "t03", "t02", "t01", "x"),
  },
  {
    name: "cut: the key of both sides of a FULL JOIN",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${REST} as a full join ${EDGE} as b on a.project = b.project and b.id = 'e01' and a.id = 't01' where b.id is null or b.id = 'e01' order by a.timestamp desc limit 3`,
    expect: [
      { id: "t03", bid: null },
      { id: "t02", bid: null },
      { id: "t01", bid: "e01" },
    ],
  },
  {
    name: "cut: the key of a FULL JOIN's NULL side, oldest, NULLs first",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${REST} as a full join ${EDGE} as b on a.project = b.project and b.id = 'e01' and a.id = 't01' order by a.timestamp limit 2`,
    expect: [
      { id: null, bid: "e02" },
      { id: null, bid: "e03" },
    ],
  },
  {
    name: "cut: the key of a LEFT JOIN's NULL side inside a join group",
    rule: CUT,
    sql: `select a.id, b.id as bid from ${REST} as a left join (${EDGE} as b cross join unnest([1]) as x) on a.project = b.project and b.id = 'e01' and a.id = 't01' order by b.timestamp limit 2`,
    expect: [
      { id: "t02", bid: null },
      { id: "t03", bid: null },
    ],
  },
  {
    name: "cut: the key of a LEFT JOIN's NULL side, explicitly NULLS LAST",
    rule: CUT,
    sql: `select a.id from ${OUTER} order by b.timestamp nulls last limit 2`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "cut: the key of a LEFT JOIN's NULL side, a CTE of every column",
    rule: CUT,
    sql: `with c as (select * from ${EDGE} where id = 'e01') select a.id from ${REST} as a left join c on a.project = c.project and a.id = 't01' order by c.timestamp desc limit 2`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "cut: RIGHT JOIN USING the key keeps the right side's key",
    rule: CUT,
    sql: `select timestamp from ${EDGE} as a right join ${REST} as b using (timestamp) order by timestamp limit 3`,
    expect: [
      { timestamp: us("2025-01-15T10:00:00Z") },
      { timestamp: us("2025-01-15T10:00:01Z") },
      { timestamp: us("2025-01-15T10:00:02Z") },
    ],
  },
  {
    name: "cut: FULL JOIN USING the key is either side's key",
    rule: "BigQuery FROM clause: FULL JOIN USING (c) yields COALESCE of both sides' c",
    sql: `select timestamp, a.id, b.id as bid from ${EDGE} as a full join ${REST} as b using (timestamp) where a.id is null or b.id is not null order by timestamp desc limit 3`,
    expect: [
      { timestamp: us("2025-01-15T10:00:02Z"), id: null, bid: "t03" },
      { timestamp: us("2025-01-15T10:00:01Z"), id: null, bid: "t02" },
      { timestamp: us("2025-01-15T10:00:00Z"), id: "e01", bid: "t01" },
    ],
  },
  {
    name: "cut: LIMIT 0",
    rule: CUT,
    sql: `select id from ${EDGE} order by timestamp desc limit 0`,
    expect: [],
  },
  {
    name: "cut: SELECT * in a CTE, newest",
    rule: CUT,
    sql: `with e as (select * from ${EDGE} where project = 'beta') select id, project from e order by timestamp desc limit 2`,
    expect: [
      { id: "e08", project: "beta" },
      { id: "e07", project: "beta" },
    ],
  },
  {
    name: "cut: an ordered LIMIT over a CTE's ordered LIMIT",
    rule: CUT,
    sql: `with top as (select id, timestamp from ${EDGE} order by timestamp desc limit 5) select id from top order by timestamp limit 2`,
    expect: col("id", "e05", "e06"),
  },
  {
    name: "cut: a CTE ordered without LIMIT, read with a LIMIT",
    rule: CUT,
    sql: `with o as (select id, timestamp from ${EDGE} where project = 'alpha' order by timestamp desc) select id from o limit 2`,
    expect: col("id", "e09", "e05"),
  },
  {
    name: "cut: a key filtered by OR with another column",
    rule: CUT,
    sql: `select id from ${EDGE} where timestamp > '2025-01-15 11:30:00' or id = 'e10' order by timestamp limit 2`,
    expect: col("id", "e10", "e08"),
  },
  {
    name: "cut: a CTE renaming the key and another column to its name",
    rule: CUT,
    sql: `with e as (select id as timestamp, timestamp as ts from ${EDGE}) select timestamp as id from e order by ts desc limit 2`,
    expect: col("id", "e09", "e08"),
  },
  {
    name: "cut: the key of a CTE whose column name is the key of another",
    rule: CUT,
    sql: `with e as (select id, timestamp_sub(timestamp, interval 12 hour) as timestamp from ${EDGE}) select id, timestamp from e order by timestamp limit 1`,
    expect: [{ id: "e10", timestamp: us("2025-01-14T11:59:59.999999Z") }],
  },
  {
    name: "cut: SELECT * EXCEPT of the table",
    rule: CUT,
    sql: `select * except (metadata) from ${EDGE} order by timestamp desc limit 1`,
    expect: [
      {
        id: "e09",
        timestamp: us("2025-01-15T11:59:59Z"),
        project: "alpha",
        event_message: "worker heartbeat",
      },
    ],
  },
  {
    name: "cut: user names like the plans' own CTEs and aliases",
    rule: CUT,
    sql: `with __recent as (select id, timestamp from ${EDGE} as __cut where project = 'beta') select __cut_rows.id as __ahead from __recent as __cut_rows order by timestamp desc limit 2`,
    expect: col("__ahead", "e08", "e07"),
  },
  {
    name: "cut: an aggregate ordered by the key is refused",
    rule: "BigQuery query syntax: ORDER BY of an aggregate query reads grouped or aggregated values",
    sql: `select count(*) as n from ${EDGE} order by timestamp desc limit 1`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "cut: a WHERE of its own over a plain CTE with one",
    rule: CUT,
    sql: `with e as (select id, timestamp, project from ${EDGE} where timestamp < '2025-01-15 11:30:00') select id from e where project = @p order by timestamp desc limit 2`,
    params: { p: { kind: "string", value: "beta" } },
    expect: col("id", "e07", "e06"),
  },
];
