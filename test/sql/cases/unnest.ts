import { AUTH, col, EDGE, PG, REST, RT, type SqlCase, STORAGE, us } from "./case.ts";

// UNNEST in every form, field paths and array subscripts: BigQuery "Query syntax" (UNNEST
// operator, implicit UNNEST, correlated joins), "Work with arrays" (accessing array elements) and
// DESIGN.md §3 (nested objects are repeated records; UNNEST of missing/null/empty yields no rows).

const CF = `${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(r.cf) c`;
const BOT = `${CF}, unnest(c.botManagement) b`;
const ALPHA_IDS = ["e01", "e02", "e03", "e04", "e05", "e09"];

export const unnestCases: SqlCase[] = [
  // ---------------------------------------------------------------- join forms
  {
    name: "CROSS JOIN UNNEST drops events without metadata",
    rule: "DESIGN.md §3: UNNEST of a missing field yields no rows; CROSS JOIN UNNEST drops the outer row",
    sql: `select count(*) as n from ${EDGE} cross join unnest(metadata) as m`,
    expect: [{ n: 11 }],
  },
  {
    name: "comma join UNNEST is a CROSS JOIN",
    rule: "BigQuery query syntax: the comma cross join",
    sql: `select count(*) as n from ${EDGE}, unnest(metadata) as m`,
    expect: [{ n: 11 }],
  },
  {
    name: "implicit UNNEST of a path in FROM",
    rule: "BigQuery UNNEST operator: implicit UNNEST (FROM t, t.array_column)",
    sql: `select count(*) as n from ${EDGE} as e, e.metadata as m`,
    expect: [{ n: 11 }],
  },
  {
    name: "implicit UNNEST of a two-step path in FROM",
    rule: "BigQuery UNNEST operator: implicit UNNEST of a path (FROM t, t.struct.array_column)",
    sql: `select id, h.x_real_ip from ${EDGE} as e, e.metadata.request as r, r.headers as h where project = 'alpha'`,
    expect: [
      { id: "e01", x_real_ip: "203.0.113.7" },
      { id: "e02", x_real_ip: "198.51.100.23" },
      { id: "e03", x_real_ip: "203.0.113.7" },
      { id: "e04", x_real_ip: "192.0.2.10" },
      { id: "e05", x_real_ip: "203.0.113.7" },
    ],
  },
  {
    name: "LEFT JOIN UNNEST … ON TRUE keeps events without metadata",
    rule: "DESIGN.md §3: LEFT JOIN UNNEST(...) ON TRUE keeps the row with NULLs",
    sql: `select count(*) as n from ${EDGE} left join unnest(metadata) as m on true`,
    expect: [{ n: 12 }],
  },
  {
    name: "LEFT JOIN UNNEST gives NULL fields for the missing record",
    rule: "DESIGN.md §3: LEFT JOIN UNNEST keeps the row with NULLs",
    sql: `select id, m.counter from ${EDGE} left join unnest(metadata) as m on true where project = 'alpha'`,
    expect: ALPHA_IDS.map((id) => ({ id, counter: null })),
  },
  {
    name: "LEFT JOIN UNNEST without a join condition",
    rule: "BigQuery correlated join: LEFT JOIN UNNEST needs no ON clause",
    sql: `select count(*) as n from ${EDGE} left join unnest(metadata) as m`,
    expect: [{ n: 12 }],
  },
  {
    name: "a chain of three unnests reaches header values",
    rule: "BigQuery correlated CROSS JOIN UNNEST chains; DESIGN.md §3 nested records",
    sql: `select id, h.x_real_ip from ${EDGE} cross join unnest(metadata) m cross join unnest(m.request) r cross join unnest(r.headers) h where project = 'alpha'`,
    expect: [
      { id: "e01", x_real_ip: "203.0.113.7" },
      { id: "e02", x_real_ip: "198.51.100.23" },
      { id: "e03", x_real_ip: "203.0.113.7" },
      { id: "e04", x_real_ip: "192.0.2.10" },
      { id: "e05", x_real_ip: "203.0.113.7" },
    ],
  },
  {
    name: "a chain of unnests drops events lacking a nested record",
    rule: "DESIGN.md §3: UNNEST of a missing field yields no rows",
    sql: `select id from ${BOT}`,
    expect: col("id", "e01", "e02", "e03", "e04", "e06", "e08", "e12"),
  },
  {
    name: "a chain of LEFT JOIN unnests keeps rows with a missing nested record",
    rule: "DESIGN.md §3: LEFT JOIN UNNEST(...) ON TRUE keeps the row with NULLs",
    sql: `select e.id, h.content_type from ${EDGE} as e left join unnest(e.metadata) m on true left join unnest(m.response) r on true left join unnest(r.headers) h on true where e.project = 'beta'`,
    expect: [
      { id: "e06", content_type: null },
      { id: "e07", content_type: null },
      { id: "e08", content_type: "text/html" },
    ],
  },
  {
    name: "counting through a chain of comma unnests",
    rule: "DESIGN.md §3: UNNEST of a missing field yields no rows",
    sql: `select count(*) as n from ${EDGE}, unnest(metadata) m, unnest(m.response) r, unnest(r.headers) h`,
    expect: [{ n: 7 }],
  },
  {
    name: "alias shadowing: cross join unnest(metadata) as metadata",
    rule: "BigQuery name resolution: a FROM alias hides the column of the same name; log-event-shapes.md §2 auth preview",
    sql: `select metadata.level, metadata.status from ${AUTH} cross join unnest(metadata) as metadata where id = 'a03'`,
    expect: [{ level: "warning", status: 400 }],
  },
  {
    name: "the Studio auth preview over a shadowing alias",
    rule: "log-event-shapes.md §2 (auth_logs preview); BigQuery alias shadowing",
    sql: `select id, metadata.level, metadata.status, metadata.path, metadata.msg, metadata.error
from ${AUTH} cross join unnest(metadata) as metadata
where metadata.status >= 400
order by timestamp`,
    expect: [
      {
        id: "a03",
        level: "warning",
        status: 400,
        path: "/token",
        msg: "request completed",
        error: "invalid_grant: Invalid login credentials",
      },
      {
        id: "a04",
        level: "error",
        status: 500,
        path: "/user",
        msg: "request completed",
        error: "database error",
      },
      {
        id: "a07",
        level: "error",
        status: 422,
        path: "/signup",
        msg: "request completed",
        error: "email address already registered",
      },
    ],
  },
  {
    name: "shadowing aliases chained: unnest(metadata.request) as request",
    rule: "BigQuery name resolution: FROM aliases hide columns; correlated UNNEST of the shadowing alias",
    sql: `select request.path from ${EDGE} cross join unnest(metadata) as metadata cross join unnest(metadata.request) as request where id = 'e03'`,
    expect: [{ path: "/auth/v1/user" }],
  },
  {
    name: "an unqualified field resolves through an unnest alias",
    rule: "BigQuery name resolution: fields of a STRUCT range variable are visible unqualified",
    sql: `select id, status_code from ${EDGE} cross join unnest(metadata) as m cross join unnest(m.response) as r where status_code >= 500`,
    expect: [
      { id: "e05", status_code: 500 },
      { id: "e08", status_code: 503 },
    ],
  },
  {
    name: "an unqualified field resolves through an UNNEST without alias",
    rule: "BigQuery UNNEST operator: for arrays of STRUCT, each field becomes a column",
    sql: `select id, level from ${AUTH} cross join unnest(metadata) where level = 'fatal'`,
    expect: [{ id: "a08", level: "fatal" }],
  },
  {
    name: "an unqualified field present in two unnested records is ambiguous",
    rule: "BigQuery name resolution: an ambiguous unqualified name is an error",
    sql: `select headers from ${EDGE}, unnest(metadata) m, unnest(m.request) r, unnest(m.response) s`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an unqualified column present in two joined sources is ambiguous",
    rule: "BigQuery name resolution: an ambiguous unqualified name is an error",
    sql: `select id from ${REST} a join ${PG} b on a.project = b.project`,
    expect: { error: "sql_invalid" },
  },

  // ---------------------------------------------------------------- arrays of scalars, empty and NULL
  {
    name: "UNNEST of an array of scalars",
    rule: "DESIGN.md §3: an array of scalars is an array; BigQuery UNNEST yields one row per element",
    sql: `select id, d from ${BOT}, unnest(b.detectionIds) as d`,
    expect: [
      { id: "e01", d: 1001 },
      { id: "e01", d: 1002 },
      { id: "e03", d: 1003 },
      { id: "e04", d: 1001 },
      { id: "e06", d: 1002 },
      { id: "e06", d: 1004 },
      { id: "e06", d: 1004 },
      { id: "e08", d: 1001 },
      { id: "e12", d: 1001 },
      { id: "e12", d: 1005 },
    ],
  },
  {
    name: "CROSS JOIN UNNEST of an empty array drops the row",
    rule: "DESIGN.md §3: UNNEST of an empty field yields no rows",
    sql: `select count(*) as n from ${BOT}, unnest(b.detectionIds) as d where id = 'e02'`,
    expect: [{ n: 0 }],
  },
  {
    name: "LEFT JOIN UNNEST of an empty array keeps the row with NULL",
    rule: "DESIGN.md §3: LEFT JOIN UNNEST(...) ON TRUE keeps the row with NULLs",
    sql: `select id, d from ${BOT} left join unnest(b.detectionIds) as d on true where id = 'e02'`,
    expect: [{ id: "e02", d: null }],
  },
  {
    name: "LEFT JOIN UNNEST over an empty, a missing and a null array",
    rule: "DESIGN.md §3: UNNEST of a missing, null or empty field yields no rows; LEFT JOIN keeps the row",
    sql: `select id, c.host from ${STORAGE} cross join unnest(metadata) as m left join unnest(m.context) as c on true where m.project = 'beta'`,
    expect: [
      { id: "s04", host: null },
      { id: "s05", host: null },
      { id: "s06", host: null },
    ],
  },
  {
    name: "CROSS JOIN UNNEST over an empty, a missing and a null array",
    rule: "DESIGN.md §3: UNNEST of a missing, null or empty field yields no rows",
    sql: `select id from ${STORAGE} cross join unnest(metadata) as m cross join unnest(m.context) as c where m.project = 'beta'`,
    expect: [],
  },
  {
    name: "UNNEST of an array of N objects yields N rows",
    rule: "DESIGN.md §3: an array of objects is a repeated record of N",
    sql: `select id, c.pid from ${STORAGE}, unnest(metadata) m, unnest(m.context) c`,
    expect: [
      { id: "s01", pid: 11 },
      { id: "s02", pid: 11 },
      { id: "s03", pid: 12 },
      { id: "s03", pid: 13 },
      { id: "s08", pid: 11 },
    ],
  },
  {
    name: "UNNEST WITH OFFSET numbers records from zero",
    rule: "BigQuery UNNEST operator: WITH OFFSET gives the zero-based position",
    sql: `select c.pid, i from ${STORAGE}, unnest(metadata) m, unnest(m.context) as c with offset as i where id = 's03'`,
    expect: [
      { pid: 12, i: 0 },
      { pid: 13, i: 1 },
    ],
  },
  {
    name: "UNNEST WITH OFFSET over scalars keeps duplicates apart",
    rule: "BigQuery UNNEST operator: WITH OFFSET",
    sql: `select d, o from ${BOT}, unnest(b.detectionIds) as d with offset o where id = 'e06'`,
    expect: [
      { d: 1002, o: 0 },
      { d: 1004, o: 1 },
      { d: 1004, o: 2 },
    ],
  },
  {
    name: "UNNEST of an array literal",
    rule: "BigQuery UNNEST operator over an array literal",
    sql: `select x from unnest([3, 1, 2]) as x`,
    expect: col("x", 3, 1, 2),
  },
  {
    name: "UNNEST of an array literal ordered by offset",
    rule: "BigQuery UNNEST: WITH OFFSET preserves the array's order",
    sql: `select x from unnest(['c', 'a', 'b']) as x with offset as o order by o`,
    expect: col("x", "c", "a", "b"),
  },
  {
    name: "UNNEST of an array of STRUCT literals",
    rule: "BigQuery UNNEST: arrays of STRUCT; STRUCT constructor",
    sql: `select s.a, s.b from unnest([struct(1 as a, 'x' as b), struct(2 as a, 'y' as b)]) as s`,
    expect: [
      { a: 1, b: "x" },
      { a: 2, b: "y" },
    ],
  },
  {
    name: "UNNEST of an empty array literal yields no rows",
    rule: "BigQuery UNNEST operator: an empty array produces no rows",
    sql: `select count(*) as n from unnest([]) as x`,
    expect: [{ n: 0 }],
  },
  {
    name: "IN UNNEST of an array literal",
    rule: "BigQuery IN operator: value IN UNNEST(array)",
    sql: `select id from ${EDGE}, unnest(metadata) m, unnest(m.response) r where r.status_code in unnest([401, 404])`,
    expect: col("id", "e03", "e04"),
  },
  {
    name: "IN UNNEST of an array field",
    rule: "BigQuery IN operator: value IN UNNEST(array)",
    sql: `select id from ${BOT} where 1004 in unnest(b.detectionIds)`,
    expect: col("id", "e06"),
  },
  {
    name: "NOT IN UNNEST is true for an empty array",
    rule: "BigQuery IN operator: IN UNNEST of an empty array is FALSE",
    sql: `select id from ${BOT} where 1001 not in unnest(b.detectionIds)`,
    expect: col("id", "e02", "e03", "e06"),
  },
  {
    name: "a correlated subquery counts an array's elements",
    rule: "BigQuery expression subqueries over UNNEST of a correlated array",
    sql: `select id, (select count(*) from unnest(b.detectionIds)) as n from ${BOT}`,
    expect: [
      { id: "e01", n: 2 },
      { id: "e02", n: 0 },
      { id: "e03", n: 1 },
      { id: "e04", n: 1 },
      { id: "e06", n: 3 },
      { id: "e08", n: 1 },
      { id: "e12", n: 2 },
    ],
  },
  {
    name: "EXISTS over a correlated UNNEST",
    rule: "BigQuery EXISTS subquery over UNNEST",
    sql: `select id from ${BOT} where exists (select 1 from unnest(b.detectionIds) as d where d > 1003)`,
    expect: col("id", "e06", "e12"),
  },
  {
    name: "ARRAY subquery over a correlated UNNEST",
    rule: "BigQuery ARRAY subquery: ARRAY(SELECT … ORDER BY …)",
    sql: `select array(select d from unnest(b.detectionIds) as d order by d desc) as ds from ${BOT} where id = 'e12'`,
    expect: [{ ds: [1005, 1001] }],
  },
  {
    name: "a scalar subquery picks one record of an array",
    rule: "BigQuery scalar subqueries over UNNEST of a correlated array",
    sql: `select (select c.host from unnest(m.context) as c where c.pid = 13) as host from ${STORAGE} cross join unnest(metadata) as m where id = 's03'`,
    expect: [{ host: "storage-2" }],
  },
  {
    name: "UNNEST of a CTE column that holds metadata",
    rule: "BigQuery WITH clause; correlated UNNEST of a CTE column",
    sql: `with logs as (select id, metadata from ${STORAGE})
select l.id, c.pid from logs as l, unnest(l.metadata) as m, unnest(m.context) as c where l.id = 's03'`,
    expect: [
      { id: "s03", pid: 12 },
      { id: "s03", pid: 13 },
    ],
  },
  {
    name: "UNNEST of an array of scalars inside a nested record",
    rule: "DESIGN.md §3: arrays of scalars inside records",
    sql: `select d from ${RT}, unnest(metadata) m, unnest(m.context) c, unnest(c.domain) d`,
    expect: col("d", "elixir", "phoenix"),
  },
  {
    name: "four levels of nested records",
    rule: "DESIGN.md §3: every nested object is a repeated record of one",
    sql: `select id, v.node from ${RT}, unnest(metadata) m, unnest(m.context) c, unnest(c.vm) v`,
    expect: [
      { id: "r02", node: "realtime@10.0.0.1" },
      { id: "r04", node: "realtime@10.0.0.2" },
    ],
  },
  {
    name: "a nested record present in only some events",
    rule: "DESIGN.md §3: UNNEST of a missing field yields no rows",
    sql: `select id, x.connected, x.limit from ${RT}, unnest(metadata) m, unnest(m.measurements) x`,
    expect: [
      { id: "r01", connected: 10, limit: 200 },
      { id: "r03", connected: 0, limit: 200 },
    ],
  },

  // ---------------------------------------------------------------- subscripts and field paths
  {
    name: "a bare index subscript on metadata",
    rule: "BigQuery arrays: array[n] is a zero-based index",
    sql: `select metadata[0].host as host from ${REST} where id = 't01'`,
    expect: [{ host: "db-alpha" }],
  },
  {
    name: "OFFSET subscripts through two repeated records",
    rule: "BigQuery arrays: array[OFFSET(n)]",
    sql: `select metadata[offset(0)].parsed[offset(0)].error_severity as sev from ${PG} where id = 'p02'`,
    expect: [{ sev: "ERROR" }],
  },
  {
    name: "unqualified metadata[0].parsed[0].x",
    rule: "BigQuery arrays: array[n]; log-event-shapes.md §1 paths like metadata[0].parsed[0].error_severity",
    sql: `select id, metadata[0].parsed[0].error_severity as sev from ${PG} where id in ('p01', 'p05', 'p06')`,
    expect: [
      { id: "p01", sev: "LOG" },
      { id: "p05", sev: "ERROR" },
      { id: "p06", sev: "FATAL" },
    ],
  },
  {
    name: "ORDINAL subscripts are one-based",
    rule: "BigQuery arrays: array[ORDINAL(n)]",
    sql: `select metadata[ordinal(1)].request[ordinal(1)].method as method from ${EDGE} where id = 'e07'`,
    expect: [{ method: "DELETE" }],
  },
  {
    name: "a qualified path with subscripts down to a header",
    rule: "DESIGN.md §4 (metadata[0].request[0].headers[0].x_real_ip); BigQuery field access",
    sql: `select t.metadata[0].request[0].headers[0].x_real_ip as ip from ${EDGE} as t where t.id = 'e04'`,
    expect: [{ ip: "192.0.2.10" }],
  },
  {
    name: "SAFE_OFFSET past the end is NULL",
    rule: "BigQuery arrays: SAFE_OFFSET returns NULL when out of range",
    sql: `select metadata[safe_offset(1)].host as host from ${REST} where id = 't01'`,
    expect: [{ host: null }],
  },
  {
    name: "SAFE_OFFSET on an event without metadata is NULL",
    rule: "BigQuery arrays: SAFE_OFFSET on an empty array returns NULL",
    sql: `select id, metadata[safe_offset(0)].level as level from ${STORAGE} where id in ('s07', 's08')`,
    expect: [
      { id: "s07", level: null },
      { id: "s08", level: "info" },
    ],
  },
  {
    name: "SAFE_OFFSET subscripts in WHERE skip events lacking the record",
    rule: "BigQuery arrays: SAFE_OFFSET; comparisons with NULL are not true",
    sql: `select id from ${PG} where metadata[safe_offset(0)].parsed[safe_offset(0)].error_severity = 'ERROR'`,
    expect: col("id", "p02", "p05"),
  },
  {
    name: "subscripts on an array of scalars",
    rule: "BigQuery arrays: array[n], [OFFSET(n)], [ORDINAL(n)]",
    sql: `select b.detectionIds[0] as first, b.detectionIds[offset(1)] as second, b.detectionIds[ordinal(1)] as also_first from ${BOT} where id = 'e01'`,
    expect: [{ first: 1001, second: 1002, also_first: 1001 }],
  },
  {
    name: "SAFE_ORDINAL in and out of range",
    rule: "BigQuery arrays: SAFE_ORDINAL returns NULL when out of range",
    sql: `select id, b.detectionIds[safe_ordinal(3)] as third from ${BOT} where id in ('e01', 'e02', 'e06')`,
    expect: [
      { id: "e01", third: null },
      { id: "e02", third: null },
      { id: "e06", third: 1004 },
    ],
  },
  {
    name: "SAFE_OFFSET past integer's range is NULL",
    rule: "BigQuery arrays: SAFE_OFFSET returns NULL when out of range, for any INT64 (PostgreSQL raised 'integer out of range' on JSON-held arrays, DuckDB and PostgreSQL overflowed on INT64's largest)",
    sql: `select b.detectionIds[safe_offset(3000000000)] as x, metadata[safe_offset(3000000000)].request[safe_offset(0)].method as y, ['a', 'b'][safe_offset(9223372036854775807)] as z from ${BOT} where id = 'e01'`,
    expect: [{ x: null, y: null, z: null }],
  },
  {
    name: "an OFFSET subscript into an array of records",
    rule: "BigQuery arrays: array[OFFSET(n)].field",
    sql: `select m.context[offset(1)].pid as pid from ${STORAGE}, unnest(metadata) m where id = 's03'`,
    expect: [{ pid: 13 }],
  },
  {
    name: "subscripts on a CTE row's array",
    rule: "BigQuery arrays: subscripts on an array column of a CTE; GENERATE_TIMESTAMP_ARRAY",
    sql: `with buckets as (
  select generate_timestamp_array(timestamp '2025-01-15 10:00:00', timestamp '2025-01-15 12:00:00', interval 1 hour) as dates
)
select dates[0] as first, dates[offset(2)] as last, dates[safe_offset(3)] as none from buckets`,
    expect: [{ first: us("2025-01-15T10:00:00Z"), last: us("2025-01-15T12:00:00Z"), none: null }],
  },
  {
    name: "a table-qualified column path t.metadata",
    rule: "BigQuery field access: range_variable.column",
    sql: `select t.metadata from ${REST} as t where t.id = 't02'`,
    expect: [{ metadata: [{ host: "db-alpha" }] }],
  },
  {
    name: "a field path a.b.c through STRUCT values",
    rule: "BigQuery field access operator on nested STRUCTs",
    sql: `select s.a.b from (select struct(struct(1 as b, 'x' as c) as a) as s)`,
    expect: [{ b: 1 }],
  },
  {
    name: "a field path a.b.c through a CTE column holding a record",
    rule: "BigQuery field access: cte_alias.struct_column.field",
    sql: `with x as (select m as meta from ${STORAGE}, unnest(metadata) as m where id = 's01')
select x.meta.level as level, x.meta.tenantId as tenant from x`,
    expect: [{ level: "info", tenant: "alpha" }],
  },
];
