import { EDGE, PG, type SqlCase } from "./case.ts";

// Differential testing of the three backends with queries written the way dashboard authors write
// BigQuery log SQL (Supabase / Logflare log explorer style). Each case is a query whose answer
// differed between DuckDB, PostgreSQL and ClickHouse, or from what BigQuery documents; the
// expected rows are BigQuery's (its documentation, or ZetaSQL, its reference implementation,
// where the documentation is silent).

export const dashboardDiffCases: SqlCase[] = [
  // ---------------------------------------------------------------- NULL propagation
  {
    name: "a NULL dividend divided by zero is NULL, not an error",
    rule: "BigQuery operators: an operator of a NULL operand is NULL; division by zero raises only for a value (ClickHouse raised for NULL / 0, DIV and MOD too)",
    sql: "select x / 0 as a, div(x, 0) as b, mod(x, 0) as c from unnest([cast(null as int64)]) as x",
    expect: [{ a: null, b: null, c: null }],
  },
  {
    name: "a ratio over a LEFT JOIN UNNEST row with no record is NULL",
    rule: "BigQuery operators: NULL / 0 is NULL; an event without metadata reads NULL fields (ClickHouse raised division by zero)",
    sql: `select id, m.response.origin_time / 0 as r, div(m.response.status_code, 0) as d from ${EDGE} t left join unnest(t.metadata) as m on true where id = 'e09'`,
    expect: [{ id: "e09", r: null, d: null }],
  },
  // ---------------------------------------------------------------- regular expressions
  {
    name: "REGEXP_EXTRACT: a parenthesis inside a class is no capturing group",
    rule: "BigQuery REGEXP_EXTRACT returns the whole match when the pattern has no capturing group; RE2 reads [(] as the character (DuckDB extracted group 1 of it: '')",
    sql: `select regexp_extract(event_message, r'[|] [0-9]+ [|]') as status, regexp_extract('took (12ms)', r'[(][0-9]+ms[)]') as took from ${EDGE} where id = 'e03'`,
    expect: [{ status: "| 401 |", took: "(12ms)" }],
  },
  {
    name: "REGEXP_EXTRACT refuses a pattern with two capturing groups",
    rule: "BigQuery REGEXP_EXTRACT: a regular expression passed into an extraction function must not have more than 1 capturing group (every engine returned the first)",
    sql: `select regexp_extract(m.request.path, r'^/(w+)/(vd)/') as svc from ${EDGE} cross join unnest(metadata) as m`,
    expect: { error: "sql_invalid" },
  },
  // ---------------------------------------------------------------- IN UNNEST and NULL
  {
    name: "x IN UNNEST of an array holding NULL is NULL when no element equals x",
    rule: "BigQuery IN operator: IN with a NULL in the list can only return TRUE or NULL, never FALSE (DuckDB and ClickHouse answered FALSE, and NOT IN TRUE)",
    sql: "select x, x in unnest([2, null]) as i, x not in unnest([2, null]) as ni from unnest([1, 2]) as x order by x",
    expect: [
      { x: 1, i: null, ni: null },
      { x: 2, i: true, ni: false },
    ],
  },
  {
    name: "NOT IN UNNEST of a country list holding NULL keeps no row",
    rule: "BigQuery IN operator: NOT IN a list holding NULL is never TRUE, so WHERE keeps nothing (DuckDB and ClickHouse kept FR and BR)",
    sql: `select id from ${EDGE} cross join unnest(metadata) as m where m.request.cf.country not in unnest(['US', 'DE', null])`,
    expect: [],
  },
  {
    name: "a NULL value IN UNNEST of an empty array is FALSE, of a non-empty one NULL",
    rule: "BigQuery IN operator: IN with an empty right side is always FALSE; with a NULL left side and a non-empty right side always NULL (ClickHouse answered NULL for the empty one)",
    sql: `select id, cast(null as int64) in unnest(m.request.cf.botManagement.detectionIds) as a from ${EDGE} cross join unnest(metadata) as m where id in ('e02', 'e03') order by id`,
    expect: [
      { id: "e02", a: false },
      { id: "e03", a: null },
    ],
  },
  {
    name: "RE2's \\w, \\d, \\s and POSIX classes are ASCII on every backend",
    rule: "BigQuery regular expressions are RE2: \\w is [0-9A-Za-z_], \\d [0-9], \\s [\\t\\n\\f\\r ], [[:alpha:]] [A-Za-z] (PostgreSQL's followed the database locale: é was a word character, a no-break space a space)",
    sql: "select regexp_contains('é', r'^\\w$') as w, regexp_contains('٣', r'^\\d$') as d, regexp_contains('\\u00a0', r'^\\s$') as s, regexp_contains('é', '^[[:alpha:]]$') as alpha, regexp_contains('é', r'^[\\w]$') as in_class, regexp_contains('é', r'^\\W$') as not_w, regexp_contains('É', '(?i)^é$') as folded",
    expect: [{ w: false, d: false, s: false, alpha: false, in_class: false, not_w: true, folded: true }],
  },
  {
    name: "a word extracted from a log line stops at the first non-ASCII letter",
    rule: "BigQuery REGEXP_EXTRACT / REGEXP_REPLACE with RE2's ASCII \\w (PostgreSQL's \\w took naïve and café whole)",
    sql: `select regexp_extract('naïve café 42', r'(\\w+) \\d+') as a, regexp_replace('café ü 3', r'\\w', '.') as b, regexp_replace(concat(id, '\\u00a0é'), r'\\s|\\W', '_') as c from ${EDGE} where id = 'e01'`,
    expect: [{ a: null, b: "...é ü .", c: "e01__" }],
  },
  // ---------------------------------------------------------------- named windows
  {
    name: "ORDER BY and LIMIT after a WINDOW clause order and cut the rows",
    rule: "BigQuery query syntax: WINDOW comes before ORDER BY and LIMIT (the parser dropped both silently: every row came back, in each engine's order)",
    sql: `select id, rank() over w as r from ${EDGE} window w as (order by project) order by id desc limit 3 offset 1`,
    expect: [
      { id: "e11", r: 10 },
      { id: "e10", r: 10 },
      { id: "e09", r: 1 },
    ],
  },
  {
    name: "OVER (w) and OVER (w ORDER BY …) start from the named window",
    rule: "BigQuery window function calls: a window specification naming a window takes its PARTITION BY, ORDER BY and frame and may add what it lacks (OVER (w) was read as an empty window: every row counted the whole table)",
    sql:
      `select id, count(*) over (w) as running, sum(1) over (p order by id) as n, count(*) over b as desc_n from ${EDGE} where id < 'e05' ` +
      "window w as (partition by project order by timestamp desc), p as (partition by project), b as (p order by id desc) order by id",
    expect: [
      { id: "e01", running: 4, n: 1, desc_n: 4 },
      { id: "e02", running: 3, n: 2, desc_n: 3 },
      { id: "e03", running: 2, n: 3, desc_n: 2 },
      { id: "e04", running: 1, n: 4, desc_n: 1 },
    ],
  },
  {
    name: "a window starting from a named window cannot order it again",
    rule: "BigQuery window function calls: a window that refers to a named window with an ORDER BY cannot have its own",
    sql: `select count(*) over (w order by id) as n from ${EDGE} window w as (order by project)`,
    expect: { error: "sql_invalid" },
  },
  // ---------------------------------------------------------------- set operations
  {
    name: "ORDER BY and LIMIT after a parenthesised last operand apply to the whole UNION ALL",
    rule: "BigQuery set operators: an ORDER BY or LIMIT after the last query applies to the whole result, and a parenthesised query keeps its own (the parser dropped the outer ones and qes took the last operand's own for them: only p10 came back)",
    sql: `(select id from ${EDGE} order by id limit 2) union all (select id from ${PG} order by id desc limit 1) order by id desc`,
    expect: [{ id: "p10" }, { id: "e02" }, { id: "e01" }],
  },
  {
    name: "a parenthesised last operand keeps its own ORDER BY and LIMIT",
    rule: "BigQuery set operators: ORDER BY and LIMIT inside a parenthesised operand are that operand's",
    sql: `select id from ${EDGE} where id = 'e01' union all (select id from ${PG} order by id desc limit 2)`,
    expect: [{ id: "e01" }, { id: "p10" }, { id: "p09" }],
    // the ORDER BY is the operand's: a UNION ALL has no order of its own (ClickHouse runs its
    // operands in parallel, and answered p10, p09, e01 once)
    ordered: false,
  },
  // ---------------------------------------------------------------- unicode case mapping
  {
    name: "UPPER and LOWER are Unicode's full case mappings",
    rule: "BigQuery UPPER / LOWER: ICU's root-locale case mapping (ZetaSQL UpperUtf8/LowerUtf8): ß is SS, ﬁ FI, a final Σ lowers to ς, İ to i̇ (DuckDB gave ẞTRAẞE, PostgreSQL left ß, neither wrote ς)",
    sql: "select upper('Straße') as u, upper('ﬁx ŉ') as f, lower('ΟΔΟΣ ΣΑΣ') as l, lower('İ') as i, upper('éa') as e",
    expect: [{ u: "STRASSE", f: "FIX ʼN", l: "οδος σας", i: "i\u0307", e: "ÉA" }],
  },
  {
    name: "GROUP BY UPPER of a city name folds ß and SS together",
    rule: "BigQuery UPPER (ICU full mapping): 'Straße' and 'STRASSE' are one group",
    sql: "select upper(x) as city, count(*) as n from unnest(['Straße', 'STRASSE', 'straße']) as x group by 1",
    expect: [{ city: "STRASSE", n: 3 }],
  },
  {
    name: "ORDER BY and LIMIT after a parenthesised query order and cut it",
    rule: "BigQuery query syntax: a parenthesised query expression may be followed by ORDER BY and LIMIT (the parser dropped both: three rows came back unordered)",
    sql: `(select id from ${EDGE} where id < 'e04') order by id desc limit 2`,
    expect: [{ id: "e03" }, { id: "e02" }],
  },
  {
    name: "a CTE body that is a parenthesised query with ORDER BY and LIMIT keeps them",
    rule: "BigQuery WITH clause: the body is any query expression, ORDER BY and LIMIT included (the parser dropped them: every row came back)",
    sql: `with newest as ((select id, timestamp from ${EDGE} where project = 'alpha') order by timestamp desc limit 1) select id from newest`,
    expect: [{ id: "e09" }],
  },
  // ---------------------------------------------------------------- FORMAT
  {
    name: "FORMAT %'d groups the digits in threes",
    rule: "BigQuery FORMAT flag ': FORMAT(\"%'d\", 12345678) returns 12,345,678 (ZetaSQL's format tests: %'7d of 54321 is ' 54,321'); every engine's printf ignored the flag",
    sql: `select format("%'d", 12345678) as a, format("%'d", -987654321) as b, format("%'d", 321) as c, format("%'7d|", 54321) as d, format("%-'9d|", 1234) as e, format("%+'d", 1234567) as f, format("%'d", -9223372036854775808) as h, format("%'d requests", count(*)) as n from ${EDGE}`,
    expect: [
      {
        a: "12,345,678",
        b: "-987,654,321",
        c: "321",
        d: " 54,321|",
        e: "1,234    |",
        f: "+1,234,567",
        h: "-9,223,372,036,854,775,808",
        n: "12 requests",
      },
    ],
  },
  {
    name: "FORMAT's ' flag with zero padding is refused by name",
    rule: "BigQuery FORMAT %'015d pads with zeros outside the groups; qes refuses it rather than print it without groups",
    sql: `select format("%'015d", 1234567) as a from ${EDGE}`,
    expect: { error: "sql_invalid" },
  },
];
