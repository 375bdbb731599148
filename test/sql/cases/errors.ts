import { EDGE, REST, type SqlCase } from "./case.ts";

// Refusals with their stable codes (DESIGN.md §5 sandbox and §7 error codes; issue 4): unknown
// functions, unknown relations, statements other than one SELECT, and invalid SQL.

const SANDBOX_FN =
  "DESIGN.md §5: only functions in the BigQuery catalogue the compiler knows (function_not_allowed)";
const SANDBOX_REL = "DESIGN.md §5: only known sources or the query's CTE names (relation_not_allowed)";

export const errorCases: SqlCase[] = [
  {
    name: "an unknown function is refused",
    rule: SANDBOX_FN,
    sql: `select made_up_fn(id) as x from ${REST}`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "a PostgreSQL function outside the catalogue is refused",
    rule: SANDBOX_FN,
    sql: `select pg_sleep(1) as x from ${REST}`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "a settings function is refused",
    rule: SANDBOX_FN,
    sql: `select current_setting('search_path') as x`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "a DuckDB file function is refused",
    rule: SANDBOX_FN,
    sql: `select read_text('/etc/passwd') as x`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "version() is refused",
    rule: SANDBOX_FN,
    sql: `select version() as v`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "an unknown function inside a CTE is refused",
    rule: SANDBOX_FN,
    sql: `with x as (select made_up_fn(id) as y from ${REST}) select y from x`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "an unknown function used as a window function is refused",
    rule: SANDBOX_FN,
    sql: `select made_up_fn(id) over () as x from ${REST}`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "an unknown function with the SAFE. prefix is refused",
    rule: SANDBOX_FN,
    sql: `select safe.made_up_fn(id) as x from ${REST}`,
    expect: { error: "function_not_allowed" },
  },
  {
    name: "an unknown source is refused",
    rule: SANDBOX_REL,
    sql: "select * from `nope.logs`",
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "information_schema is refused",
    rule: SANDBOX_REL,
    sql: `select * from information_schema.tables`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "pg_catalog is refused",
    rule: SANDBOX_REL,
    sql: `select * from pg_catalog.pg_tables`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "a backend's physical table name is refused",
    rule: `${SANDBOX_REL}; the storage layout is not a source`,
    sql: `select * from src_cloudflare_logs_prod`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "an unknown table inside a subquery is refused",
    rule: SANDBOX_REL,
    sql: `select id from ${REST} where project in (select project from secrets)`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "an unknown table inside a CTE is refused",
    rule: SANDBOX_REL,
    sql: `with x as (select * from users) select * from x`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "an unknown table in a join is refused",
    rule: SANDBOX_REL,
    sql: `select a.id from ${REST} as a join users as u on u.id = a.id`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "an unknown table in a set operation is refused",
    rule: SANDBOX_REL,
    sql: `select id from ${REST} union all select id from users`,
    expect: { error: "relation_not_allowed" },
  },
  {
    name: "a syntax error",
    rule: "DESIGN.md §7: sql_syntax",
    sql: `select from where`,
    expect: { error: "sql_syntax" },
  },
  {
    name: "SQL of only a comment is a syntax error",
    rule: "DESIGN.md §7: sql_syntax",
    sql: `-- nothing here`,
    expect: { error: "sql_syntax" },
  },
  {
    name: "two statements are refused",
    rule: "DESIGN.md §5: one statement (statement_not_allowed)",
    sql: `select 1 as a; select 2 as b`,
    expect: { error: "statement_not_allowed" },
  },
  {
    name: "DELETE is refused",
    rule: "DESIGN.md §5: SELECT only (statement_not_allowed)",
    sql: `delete from ${REST} where true`,
    expect: { error: "statement_not_allowed" },
  },
  {
    name: "CREATE TABLE is refused",
    rule: "DESIGN.md §5: SELECT only (statement_not_allowed)",
    sql: `create table x (a int64)`,
    expect: { error: "statement_not_allowed" },
  },
  {
    name: "two result columns with the same name are refused",
    rule: "BigQuery: duplicate column names in the result are not supported",
    sql: `select id, id from ${REST}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an invalid regular expression in SQL",
    rule: "DESIGN.md §3: an invalid pattern in SQL is sql_invalid",
    sql: `select id from ${REST} where regexp_contains(id, '(')`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a backreference (outside RE2) in SQL",
    rule: "DESIGN.md §3: RE2 subset; a refused pattern in SQL is sql_invalid",
    sql: `select id from ${REST} where regexp_contains(id, r'(t)\\1')`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a lookahead (outside RE2) in SQL",
    rule: "DESIGN.md §3: RE2 subset; a refused pattern in SQL is sql_invalid",
    sql: `select id from ${EDGE} where regexp_contains(event_message, r'GET(?= )')`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a function called with too many arguments",
    rule: "BigQuery: no matching signature for function LOWER",
    sql: `select lower('a', 'b') as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "REGEXP_CONTAINS of a number",
    rule: "BigQuery: no matching signature for function REGEXP_CONTAINS(INT64, STRING)",
    sql: `select regexp_contains(1, 'a') as x`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an ORDER BY ordinal beyond the SELECT list",
    rule: "BigQuery ORDER BY: the ordinal must name a SELECT list column",
    sql: `select id from ${REST} order by 2`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a GROUP BY ordinal beyond the SELECT list",
    rule: "BigQuery GROUP BY: the ordinal must name a SELECT list column",
    sql: `select project, count(*) as n from ${REST} group by 3`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SELECT DISTINCT of an ARRAY",
    rule: "BigQuery SELECT DISTINCT: ARRAY columns cannot be compared (PostgreSQL refused it with ORDER BY, the others ran it)",
    sql: `select distinct id, [id] as a from ${REST} order by 2`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "SELECT DISTINCT of a repeated record",
    rule: "BigQuery SELECT DISTINCT: a REPEATED RECORD is an ARRAY (PostgreSQL refused it, the others ran it)",
    sql: `select distinct metadata from ${REST}`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an INTERVAL literal beyond BigQuery's range",
    rule: "BigQuery INTERVAL: at most 3,660,000 days either way (DuckDB and PostgreSQL overflowed, ClickHouse wrapped around and answered)",
    sql: `select date_sub(null, interval 4294967296 day) as a, timestamp_add(timestamp '2025-01-01', interval -9223372036854775807 microsecond) as b`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a LIKE pattern ending in a lone backslash, where no row reaches it",
    rule: "BigQuery LIKE: a pattern cannot end with the escape character (only ClickHouse refused it when no row was read)",
    sql: `select id from ${REST} where false and id like '%\\\\'`,
    expect: { error: "sql_invalid" },
  },
];
