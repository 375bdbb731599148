import { AUTH, col, EDGE, FNLOG, PG, REST, type SqlCase, STORAGE, us } from "./case.ts";

// Query structure: CTEs, set operations, SELECT * variants, subqueries, joins and parameters —
// BigQuery "Query syntax" (WITH, set operators, SELECT *, EXCEPT, REPLACE, joins), "Subqueries",
// and DESIGN.md §3/§5 (CTE order departure, parameters).

export const queryCases: SqlCase[] = [
  // ---------------------------------------------------------------- CTEs
  {
    name: "a CTE",
    rule: "BigQuery WITH clause",
    sql: `with alpha as (select id from ${REST} where project = 'alpha') select id from alpha`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "a CTE reading an earlier CTE",
    rule: "BigQuery WITH clause: later CTEs may reference earlier ones",
    sql: `with a as (select id, project from ${EDGE}), b as (select id from a where project = 'beta') select id from b`,
    expect: col("id", "e06", "e07", "e08"),
  },
  {
    name: "a CTE used twice",
    rule: "BigQuery WITH clause: a CTE may be referenced several times",
    sql: `with c as (select project, count(*) as n from ${EDGE} group by project)
select x.project, x.n, y.total from c as x cross join (select sum(n) as total from c) as y where x.project = 'beta'`,
    expect: [{ project: "beta", n: 3, total: 12 }],
  },
  {
    name: "a CTE column aliasing an expression",
    rule: "BigQuery WITH clause: CTE columns are the SELECT list's names",
    sql: `with c as (select upper(project) as p from ${REST}) select distinct p from c`,
    expect: col("p", "ALPHA", "BETA"),
  },
  {
    name: "a CTE that selects metadata can be unnested outside",
    rule: "BigQuery WITH clause; correlated UNNEST of a CTE column; log-event-shapes.md §0 CTE shape",
    sql: `with logs as (select id, metadata from ${AUTH})
select l.id, m.status from logs as l cross join unnest(l.metadata) as m where m.status >= 500`,
    expect: [{ id: "a04", status: 500 }],
  },
  {
    name: "a CTE named like a built-in CTE",
    rule: "BigQuery WITH clause; log-event-shapes.md §0 CTE names",
    sql: `with edge_logs as (select id from ${EDGE} where project = 'gamma') select count(*) as n from edge_logs`,
    expect: [{ n: 3 }],
  },
  {
    name: "a final SELECT over a CTE ending in ORDER BY keeps its order",
    rule: "DESIGN.md §3 departure: a final SELECT with no ORDER BY over a CTE that ends in ORDER BY keeps that order",
    sql: `with x as (select id from ${EDGE} where project = 'alpha' order by timestamp desc) select id from x`,
    ordered: true,
    expect: col("id", "e09", "e05", "e04", "e03", "e02", "e01"),
  },
  {
    name: "the CTE order survives a WHERE in the final SELECT",
    rule: "DESIGN.md §3 departure: a final SELECT with no ORDER BY over a CTE that ends in ORDER BY keeps that order",
    sql: `with x as (select id, project, timestamp from ${EDGE} order by timestamp desc) select id from x where project = 'beta'`,
    ordered: true,
    expect: col("id", "e08", "e07", "e06"),
  },
  {
    name: "logs.all style: a project CTE, then LIMIT in the final SELECT",
    rule: "log-event-shapes.md §0 (CTE per source, ordered by timestamp desc); DESIGN.md §3 CTE order departure",
    sql: `with edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from ${EDGE} as t
  where t.project = @project
  order by t.timestamp desc
)
select id, timestamp from edge_logs limit 2`,
    params: { project: { kind: "string", value: "beta" } },
    ordered: true,
    expect: [
      { id: "e08", timestamp: us("2025-01-15T11:45:00Z") },
      { id: "e07", timestamp: us("2025-01-15T11:20:00Z") },
    ],
  },
  {
    name: "logs.all style: a CTE filtering on metadata.project via unnest",
    rule: "log-event-shapes.md §0 (storage_logs filters metadata.project); BigQuery correlated UNNEST",
    sql: `with storage_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from ${STORAGE} as t cross join unnest(t.metadata) as m
  where m.project = @project
  order by t.timestamp desc
)
select id, event_message from storage_logs`,
    params: { project: { kind: "string", value: "alpha" } },
    ordered: true,
    expect: [
      { id: "s03", event_message: "Object not found" },
      { id: "s02", event_message: "request completed" },
      { id: "s01", event_message: "request completed" },
    ],
  },
  {
    name: "a CTE column that does not exist is an error",
    rule: "DESIGN.md §3 departure: a CTE column that does not exist is an error",
    sql: `with c as (select id from ${REST}) select c.project from c`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an unqualified name that is not a CTE column is an error",
    rule: "DESIGN.md §3 departure: a CTE column that does not exist is an error",
    sql: `with c as (select id from ${REST}) select project from c`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "a source column not selected into the CTE is an error in WHERE",
    rule: "DESIGN.md §3 departure: a CTE column that does not exist is an error",
    sql: `with c as (select id from ${EDGE}) select id from c where timestamp > '2025-01-15'`,
    expect: { error: "sql_invalid" },
  },

  // ---------------------------------------------------------------- set operations
  {
    name: "UNION ALL keeps duplicates",
    rule: "BigQuery set operators: UNION ALL",
    sql: `select project from ${REST} union all select project from ${REST} where id = 't03'`,
    expect: col("project", "alpha", "alpha", "beta", "beta"),
  },
  {
    name: "UNION DISTINCT removes duplicates and keeps one NULL",
    rule: "BigQuery set operators: UNION DISTINCT",
    sql: `select project from ${REST} union distinct select project from ${PG}`,
    expect: col("project", "alpha", "beta", null),
  },
  {
    name: "EXCEPT DISTINCT",
    rule: "BigQuery set operators: EXCEPT DISTINCT",
    sql: `select project from ${EDGE} except distinct select project from ${REST}`,
    expect: col("project", "gamma"),
  },
  {
    name: "INTERSECT DISTINCT",
    rule: "BigQuery set operators: INTERSECT DISTINCT",
    sql: `select project from ${EDGE} intersect distinct select project from ${PG}`,
    expect: col("project", "alpha", "beta"),
  },
  {
    name: "ORDER BY and LIMIT apply to the whole set operation",
    rule: "BigQuery query syntax: ORDER BY/LIMIT after a set operation apply to its result",
    sql: `select id from ${REST} union all select id from ${FNLOG} order by id desc limit 2`,
    expect: col("id", "t03", "t02"),
  },
  {
    name: "UNION ALL of INT64 and FLOAT64 is FLOAT64",
    rule: "BigQuery set operators: columns coerced to a supertype",
    sql: `select 1 as x union all select 2.5`,
    expect: col("x", 1, 2.5),
  },
  {
    name: "set operation column names come from the first query",
    rule: "BigQuery set operators: result column names are those of the first query",
    sql: `select id as a from ${REST} where id = 't01' union all select id as b from ${REST} where id = 't02'`,
    expect: col("a", "t01", "t02"),
  },
  {
    name: "parenthesised set operands",
    rule: "BigQuery query syntax: ( query_expr ) set_op ( query_expr )",
    sql: `(select id from ${REST} where id = 't01') union all (select id from ${REST} where id = 't02')`,
    expect: col("id", "t01", "t02"),
  },
  {
    name: "UNION ALL across sources inside a CTE",
    rule: "BigQuery WITH clause and UNION ALL; DESIGN.md §3 literal coercion",
    sql: `with all_logs as (select id, timestamp from ${REST} union all select id, timestamp from ${FNLOG})
select id from all_logs where timestamp = '2025-01-15 10:00:01'`,
    expect: col("id", "t02", "d02"),
  },
  {
    name: "UNION ALL of three queries",
    rule: "BigQuery set operators: chained UNION ALL",
    sql: `select 'rest' as src, count(*) as n from ${REST} union all select 'fn', count(*) from ${FNLOG} union all select 'storage', count(*) from ${STORAGE}`,
    expect: [
      { src: "rest", n: 3 },
      { src: "fn", n: 3 },
      { src: "storage", n: 8 },
    ],
  },

  // ---------------------------------------------------------------- SELECT *
  {
    name: "SELECT * over a source",
    rule: "BigQuery SELECT *: every column; DESIGN.md §3 top-level keys are columns",
    sql: `select * from ${REST} where id = 't01'`,
    expect: [
      {
        id: "t01",
        timestamp: us("2025-01-15T10:00:00Z"),
        event_message: "Attempting to connect to the database...",
        project: "alpha",
        metadata: [{ host: "db-alpha" }],
      },
    ],
  },
  {
    name: "SELECT * EXCEPT",
    rule: "BigQuery SELECT * EXCEPT",
    sql: `select * except (metadata, event_message) from ${REST} where id = 't01'`,
    expect: [{ id: "t01", timestamp: us("2025-01-15T10:00:00Z"), project: "alpha" }],
  },
  {
    name: "SELECT * EXCEPT … REPLACE",
    rule: "BigQuery SELECT * EXCEPT and REPLACE",
    sql: `select * except (metadata) replace (upper(project) as project) from ${REST} where id = 't03'`,
    expect: [
      {
        id: "t03",
        timestamp: us("2025-01-15T10:00:02Z"),
        event_message: "Listening on port 3000",
        project: "BETA",
      },
    ],
  },
  {
    name: "SELECT * REPLACE over a CTE",
    rule: "BigQuery SELECT * REPLACE",
    sql: `with x as (select id, project from ${REST}) select * replace (concat(project, '!') as project) from x where id = 't02'`,
    expect: [{ id: "t02", project: "alpha!" }],
  },
  {
    name: "alias.* of a subquery",
    rule: "BigQuery SELECT expression.*",
    sql: `select s.* from (select id, project from ${REST} where id = 't02') as s`,
    expect: [{ id: "t02", project: "alpha" }],
  },
  {
    name: "alias.* of an unnested record",
    rule: "BigQuery SELECT expression.*: the fields of a STRUCT",
    sql: `select m.* from ${REST} cross join unnest(metadata) as m where id = 't02'`,
    expect: [{ host: "db-alpha" }],
  },
  {
    name: "SELECT * from a CTE",
    rule: "BigQuery SELECT * over a WITH query",
    sql: `with x as (select id, project from ${REST} where project = 'beta') select * from x`,
    expect: [{ id: "t03", project: "beta" }],
  },
  {
    name: "SELECT * EXCEPT over a CTE",
    rule: "BigQuery SELECT * EXCEPT",
    sql: `with x as (select id, project, timestamp from ${REST}) select * except (timestamp) from x where id = 't01'`,
    expect: [{ id: "t01", project: "alpha" }],
  },
  {
    name: "SELECT * EXCEPT of a column the CTE lacks is an error",
    rule: "BigQuery SELECT * EXCEPT: every listed column must exist; DESIGN.md §3 CTE columns",
    sql: `with x as (select id from ${REST}) select * except (nope) from x`,
    expect: { error: "sql_invalid" },
  },

  // ---------------------------------------------------------------- subqueries
  {
    name: "a scalar subquery without FROM in the outer query",
    rule: "BigQuery scalar subqueries",
    sql: `select (select count(*) from ${REST}) as n`,
    expect: [{ n: 3 }],
  },
  {
    name: "a scalar subquery in WHERE",
    rule: "BigQuery scalar subqueries",
    sql: `select id from ${EDGE} where timestamp = (select max(timestamp) from ${EDGE})`,
    expect: col("id", "e09"),
  },
  {
    name: "a scalar subquery returning no row is NULL",
    rule: "BigQuery scalar subqueries: NULL when the subquery returns no rows",
    sql: `select (select id from ${REST} where id = 'zzz') as x`,
    expect: [{ x: null }],
  },
  {
    name: "an IN subquery",
    rule: "BigQuery IN subqueries",
    sql: `select id from ${PG} where project in (select project from ${REST} where id = 't03')`,
    expect: col("id", "p06", "p07", "p08", "p09"),
  },
  {
    name: "a correlated EXISTS",
    rule: "BigQuery EXISTS subqueries, correlated",
    sql: `select t.id from ${REST} as t where exists (select 1 from ${PG} as p where p.project = t.project and p.id = 'p06')`,
    expect: col("id", "t03"),
  },
  {
    name: "a correlated NOT EXISTS",
    rule: "BigQuery EXISTS subqueries, correlated",
    sql: `select distinct e.project from ${EDGE} as e where not exists (select 1 from ${REST} as r where r.project = e.project)`,
    expect: col("project", "gamma"),
  },
  {
    name: "a derived table without an alias",
    rule: "BigQuery FROM (subquery)",
    sql: `select n from (select count(*) as n from ${PG} where project = 'alpha')`,
    expect: col("n", 5),
  },
  {
    name: "a correlated scalar subquery in the SELECT list",
    rule: "BigQuery scalar subqueries, correlated",
    sql: `select t.id, (select count(*) from ${PG} as p where p.project = t.project) as pg_events from ${REST} as t`,
    expect: [
      { id: "t01", pg_events: 5 },
      { id: "t02", pg_events: 5 },
      { id: "t03", pg_events: 4 },
    ],
  },
  // ClickHouse decorrelates these into an aggregation joined on the correlated column: an outer
  // row no inner row matched got NULL
  {
    name: "a correlated COUNT subquery over no matching rows is 0",
    rule: "BigQuery scalar subqueries: an aggregate without GROUP BY returns one row, also over no rows (COUNT is 0 there)",
    sql: `select t.id, (select count(*) from ${PG} as p where p.project = t.project and p.id = 'zzz') as n from ${REST} as t`,
    expect: [
      { id: "t01", n: 0 },
      { id: "t02", n: 0 },
      { id: "t03", n: 0 },
    ],
  },
  {
    name: "correlated aggregate subqueries over no matching rows: each aggregate's value over none",
    rule: "BigQuery aggregate functions over no rows: COUNT, COUNTIF and COUNT(DISTINCT) are 0, SUM and MAX NULL; the expression around them is computed from those",
    sql: `select t.id, (select count(*) from ${PG} as p where p.project = t.project) as n, (select count(*) + 1 from ${PG} as p where p.project = t.project) as n1, (select countif(p.id > 'p03') from ${PG} as p where p.project = t.project) as c, (select sum(length(p.id)) from ${PG} as p where p.project = t.project) as s, (select coalesce(max(p.id), 'none') from ${PG} as p where p.project = t.project) as m, (select count(distinct p.id) from ${PG} as p where p.project = t.project) as d from ${EDGE} as t`,
    expect: [
      { id: "e01", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e02", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e03", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e04", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e05", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e06", n: 4, n1: 5, c: 4, s: 12, m: "p09", d: 4 },
      { id: "e07", n: 4, n1: 5, c: 4, s: 12, m: "p09", d: 4 },
      { id: "e08", n: 4, n1: 5, c: 4, s: 12, m: "p09", d: 4 },
      { id: "e09", n: 5, n1: 6, c: 2, s: 15, m: "p05", d: 5 },
      { id: "e10", n: 0, n1: 1, c: 0, s: null, m: "none", d: 0 },
      { id: "e11", n: 0, n1: 1, c: 0, s: null, m: "none", d: 0 },
      { id: "e12", n: 0, n1: 1, c: 0, s: null, m: "none", d: 0 },
    ],
  },
  {
    name: "a correlated COUNT subquery of 0 in WHERE",
    rule: "BigQuery scalar subqueries: COUNT over no rows is 0, so `= 0` keeps the rows nothing matched",
    sql: `select t.id from ${EDGE} as t where (select count(*) from ${PG} as p where p.project = t.project) = 0`,
    expect: col("id", "e10", "e11", "e12"),
  },
  // ClickHouse's decorrelation lost the correlated column once a WHERE filtered on another ("can't
  // find correlated column … in current header"): a 422 "join the values in instead" before
  {
    name: "a correlated subquery in the SELECT list of a filtered query",
    rule: "BigQuery scalar subqueries, correlated, beside a WHERE on another column",
    sql: `select t.id, (select count(*) from ${PG} as p where p.project = t.project) as n, (select coalesce(max(p.id), 'none') from ${PG} as p where p.project = t.project) as m from ${EDGE} as t where t.id in ('e01', 'e06', 'e10')`,
    expect: [
      { id: "e01", n: 5, m: "p05" },
      { id: "e06", n: 4, m: "p09" },
      { id: "e10", n: 0, m: "none" },
    ],
  },
  {
    name: "a correlated subquery over a CTE filtered by WHERE",
    rule: "BigQuery scalar subqueries, correlated, over a CTE with a WHERE",
    sql: `with e as (select id, project from ${EDGE}) select e.id, (select count(*) from ${PG} as p where p.project = e.project) as n from e where e.id > 'e08'`,
    expect: [
      { id: "e09", n: 5 },
      { id: "e10", n: 0 },
      { id: "e11", n: 0 },
      { id: "e12", n: 0 },
    ],
  },
  // ClickHouse refused these ("Correlated subqueries in ORDER BY are not supported"): the order
  // completed for ties repeats every selected column, the subquery among them
  {
    name: "a correlated subquery selected in an ordered, limited query",
    rule: "BigQuery scalar subqueries, correlated, in a query with ORDER BY and LIMIT",
    sql: `select t.id, (select count(*) from ${PG} as p where p.project = t.project) as n from ${EDGE} as t order by n desc, t.id limit 4`,
    expect: [
      { id: "e01", n: 5 },
      { id: "e02", n: 5 },
      { id: "e03", n: 5 },
      { id: "e04", n: 5 },
    ],
  },
  {
    name: "a correlated subquery as an ORDER BY key",
    rule: "BigQuery ORDER BY of any expression, a correlated scalar subquery too",
    sql: `select t.id from ${EDGE} as t order by (select count(*) from ${PG} as p where p.project = t.project), t.id limit 4`,
    expect: col("id", "e10", "e11", "e12", "e06"),
  },

  // ---------------------------------------------------------------- joins
  {
    name: "an inner join on project",
    rule: "BigQuery INNER JOIN",
    sql: `select count(*) as n from ${REST} as a join ${PG} as b on a.project = b.project`,
    expect: [{ n: 14 }],
  },
  {
    name: "a join with USING",
    rule: "BigQuery JOIN … USING",
    sql: `select count(*) as n from ${REST} join ${PG} using (project)`,
    expect: [{ n: 14 }],
  },
  {
    name: "USING merges the join column",
    rule: "BigQuery JOIN … USING: the USING column is referenced unqualified",
    sql: `select distinct project from ${REST} inner join ${PG} using (project)`,
    expect: col("project", "alpha", "beta"),
  },
  {
    name: "a left join keeps unmatched rows with NULLs",
    rule: "BigQuery LEFT OUTER JOIN",
    sql: `select e.id, r.id as rest_id from ${EDGE} as e left join ${REST} as r on r.project = e.project where e.project = 'gamma'`,
    expect: [
      { id: "e10", rest_id: null },
      { id: "e11", rest_id: null },
      { id: "e12", rest_id: null },
    ],
  },
  {
    name: "a full outer join",
    rule: "BigQuery FULL OUTER JOIN; NULL keys never match",
    sql: `select a.project as a, b.project as b from (select distinct project from ${EDGE}) as a full join (select distinct project from ${PG}) as b on a.project = b.project`,
    expect: [
      { a: "alpha", b: "alpha" },
      { a: "beta", b: "beta" },
      { a: "gamma", b: null },
      { a: null, b: null },
    ],
  },
  {
    name: "a cross join of two sources",
    rule: "BigQuery CROSS JOIN",
    sql: `select count(*) as n from ${REST} cross join ${FNLOG}`,
    expect: [{ n: 9 }],
  },
  {
    name: "a comma join with the condition in WHERE",
    rule: "BigQuery comma cross join",
    sql: `select count(*) as n from ${REST} as a, ${PG} as b where a.project = b.project and b.id in ('p01', 'p06')`,
    expect: [{ n: 3 }],
  },
  {
    name: "a parenthesised join",
    rule: "BigQuery query syntax: parenthesised join ( from_item join_operation )",
    sql: `select count(*) as n from (${REST} as a join ${PG} as b on a.project = b.project)`,
    expect: [{ n: 14 }],
  },
  {
    name: "nested parenthesised joins",
    rule: "BigQuery query syntax: parenthesised joins nest",
    sql: `select a.id, b.id as pid, c.id as aid from (${REST} as a join (${PG} as b join ${AUTH} as c on b.project = c.project and c.id = 'a06') on a.project = b.project) where b.id = 'p06'`,
    expect: [{ id: "t03", pid: "p06", aid: "a06" }],
  },
  {
    name: "a self join through a CTE",
    rule: "BigQuery WITH clause; self join; TIMESTAMP_ADD",
    sql: `with x as (select id, timestamp from ${REST})
select a.id as a, b.id as b from x as a join x as b on b.timestamp = timestamp_add(a.timestamp, interval 1 second)`,
    expect: [
      { a: "t01", b: "t02" },
      { a: "t02", b: "t03" },
    ],
  },
  {
    name: "joining two sources' unnested records",
    rule: "BigQuery joins over correlated UNNEST",
    sql: `select e.id as edge, a.id as auth from ${EDGE} as e cross join unnest(e.metadata) as em cross join unnest(em.response) as er
join (${AUTH} as a cross join unnest(a.metadata) as am) on am.status = er.status_code and a.project = e.project
where e.project = 'alpha'`,
    expect: [
      { edge: "e01", auth: "a01" },
      { edge: "e01", auth: "a02" },
      { edge: "e01", auth: "a09" },
      { edge: "e05", auth: "a04" },
    ],
  },

  // ---------------------------------------------------------------- parameters
  {
    name: "a string parameter",
    rule: "DESIGN.md §5: parameters are bound, never interpolated",
    sql: `select id from ${REST} where project = @project`,
    params: { project: { kind: "string", value: "beta" } },
    expect: col("id", "t03"),
  },
  {
    name: "a string parameter holding a quote is a value, not SQL",
    rule: "DESIGN.md §5: request values are bound, never interpolated",
    sql: `select id from ${REST} where project = @project`,
    params: { project: { kind: "string", value: "alpha' or '1'='1" } },
    expect: [],
  },
  {
    name: "an integer parameter",
    rule: "DESIGN.md §5: integer parameters",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.status_code >= @min`,
    params: { min: { kind: "integer", value: "500" } },
    expect: col("id", "e05", "e08"),
  },
  {
    name: "a parameter used twice",
    rule: "DESIGN.md §5: @name found in the AST, bound wherever it occurs",
    sql: `select count(*) as n from ${EDGE} where project = @p and @p != ''`,
    params: { p: { kind: "string", value: "beta" } },
    expect: [{ n: 3 }],
  },
  {
    name: "a parameter in the SELECT list",
    rule: "DESIGN.md §5: parameters are values",
    sql: `select @project as p`,
    params: { project: { kind: "string", value: "alpha" } },
    expect: [{ p: "alpha" }],
  },
  {
    name: "an absent string parameter is NULL",
    rule: "DESIGN.md §5: other parameters: absent binds NULL",
    sql: `select @project is null as absent`,
    params: { project: { kind: "string" } },
    expect: [{ absent: true }],
  },
  {
    name: "an empty string parameter is ''",
    rule: "DESIGN.md §5: other parameters: empty binds ''",
    sql: `select @project = '' as empty, @project is null as absent`,
    params: { project: { kind: "string", value: "" } },
    expect: [{ empty: true, absent: false }],
  },
];
