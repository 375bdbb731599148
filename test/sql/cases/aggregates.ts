import { AUTH, BOUNCER, col, EDGE, PG, REST, type SqlCase, STORAGE, us } from "./case.ts";

// Aggregate functions, GROUP BY / HAVING, window functions and QUALIFY: BigQuery "Aggregate
// functions", "Approximate aggregate functions", "Window function calls", "Query syntax" (GROUP BY,
// HAVING, QUALIFY), with DESIGN.md §3's departures (exact APPROX_*, ANY_VALUE = minimum,
// ARRAY_AGG without ORDER BY ordered by value).

const RESP = `${EDGE}, unnest(metadata) m, unnest(m.response) r`;
const HEADERS = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.headers) h`;
const CF = `${EDGE}, unnest(metadata) m, unnest(m.request) q, unnest(q.cf) c`;
const BOT = `${CF}, unnest(c.botManagement) b`;

// origin_time over the edge events: 12, 40, 5, 7, 2500, 1, 3, 30000, 9 (e10, e11: NULL)
// sorted: 1, 3, 5, 7, 9, 12, 40, 2500, 30000 (n = 9)
const APPROX = "DESIGN.md §3 departure: APPROX_QUANTILES is exact, rank max(1, ceil(q·n)), 1-based";

export const aggregateCases: SqlCase[] = [
  {
    name: "STRING_AGG with LIMIT 0 is NULL",
    rule: "BigQuery STRING_AGG: NULL when no value is aggregated (DuckDB and PostgreSQL answered '')",
    sql: "select string_agg(x, ',' limit 0) as a, string_agg(x limit 1) as b from unnest(['a', 'b']) x",
    expect: [{ a: null, b: "a" }],
  },
  {
    name: "STRING_AGG with LIMIT counts the non-NULL values it joins",
    rule: "BigQuery STRING_AGG: concatenates non-NULL values; LIMIT keeps n of them (a NULL ordered first was LIMIT 1's value: DuckDB answered NULL, PostgreSQL '')",
    sql: "select string_agg(x limit 1) as a, string_agg(x, '+' order by x desc limit 2) as b, string_agg(distinct x limit 2) as c from unnest(['b', null, 'a', 'c']) as x",
    expect: [{ a: "a", b: "c+b", c: "a,b" }],
  },
  {
    name: "ARRAY_AGG and STRING_AGG over a window of whole partitions",
    rule: "BigQuery ARRAY_AGG / STRING_AGG with OVER (PARTITION BY …); DESIGN.md §3 ordered by value (PostgreSQL refused any window ARRAY_AGG or STRING_AGG, DuckDB a windowed STRING_AGG with LIMIT)",
    sql: "select s.x, array_agg(s.x) over (partition by s.p) as a, string_agg(s.x, '-' order by s.x desc) over (partition by s.p) as c, string_agg(s.x limit 1) over () as e from unnest([struct('b' as x, 1 as p), struct('a' as x, 1 as p), struct('c' as x, 2 as p)]) as s order by s.x",
    expect: [
      { x: "a", a: ["a", "b"], c: "b-a", e: "a" },
      { x: "b", a: ["a", "b"], c: "b-a", e: "a" },
      { x: "c", a: ["c"], c: "c", e: "a" },
    ],
  },
  {
    name: "COUNT(DISTINCT) over a window of whole partitions",
    rule: "BigQuery COUNT (documented example: COUNT(DISTINCT x) OVER (PARTITION BY MOD(x, 3))); NULL is not counted (PostgreSQL refused DISTINCT in a window)",
    sql: "select x, count(distinct x) over (partition by mod(x, 3)) as d, count(distinct y) over () as n from unnest([1, 4, 4, 5]) as x, unnest([if(x = 4, null, x)]) as y order by x",
    expect: [
      { x: 1, d: 2, n: 2 },
      { x: 4, d: 2, n: 2 },
      { x: 4, d: 2, n: 2 },
      { x: 5, d: 1, n: 2 },
    ],
  },
  {
    name: "SUM(DISTINCT) of two arguments is refused",
    rule: "BigQuery SUM([DISTINCT] expression): one argument (a second was dropped without a word)",
    sql: "select sum(distinct x, 2) as s from unnest([1, 1]) as x",
    expect: { error: "sql_invalid", message: /takes one argument/ },
  },
  {
    name: "SUM, AVG, MIN and MAX with DISTINCT",
    rule: "BigQuery SUM([DISTINCT] expression), AVG([DISTINCT] expression): each distinct non-NULL value once (a syntax error: the parser takes DISTINCT in COUNT only)",
    sql: "select sum(distinct x) as s, avg(distinct x) as a, min(distinct x) as mn, max(distinct x) as mx, sum(distinct f) as sf from unnest([1, 1, 2, null]) as x, unnest([1.5]) as f",
    expect: [{ s: 3, a: 1.5, mn: 1, mx: 2, sf: 1.5 }],
  },
  {
    name: "APPROX_COUNT_DISTINCT over a window of whole partitions is exact",
    rule: "DESIGN.md §3: APPROX_COUNT_DISTINCT is exact; over a window it counts as COUNT(DISTINCT) does, on every backend (PostgreSQL refused DISTINCT in a window)",
    sql: "select x, approx_count_distinct(x) over (partition by mod(x, 3)) as d from unnest([1, 4, 4, 5]) as x order by x",
    expect: [
      { x: 1, d: 2 },
      { x: 4, d: 2 },
      { x: 4, d: 2 },
      { x: 5, d: 1 },
    ],
  },
  {
    name: "LAG with a negative offset is refused",
    rule: "BigQuery LAG / LEAD: the offset must be a non-negative integer (DuckDB and PostgreSQL read -1 as a LEAD)",
    sql: "select lag(x, -1) over (order by x) as a from unnest([1, 2]) x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "NTILE of 0 buckets is refused",
    rule: "BigQuery NTILE: the bucket count must be positive",
    sql: "select ntile(0) over (order by x) as a from unnest([1, 2]) x",
    expect: { error: "sql_invalid" },
  },
  {
    name: "a NULL LAG offset or NTILE bucket count is refused",
    rule: "BigQuery NTILE: an error if the bucket count is NULL, 0 or negative; LAG / LEAD: the offset is a non-NULL, non-negative integer (DuckDB and PostgreSQL answered NULL, ClickHouse refused in its own words)",
    sql: "select lag(x, null) over (order by x) as a, ntile(null) over (order by x) as n from unnest([1, 2]) as x",
    expect: { error: "sql_invalid", message: /must not be NULL/ },
  },
  // ---------------------------------------------------------------- COUNT, COUNTIF
  {
    name: "COUNT(*) counts every event",
    rule: "BigQuery COUNT(*)",
    sql: `select count(*) as n from ${EDGE}`,
    expect: [{ n: 12 }],
  },
  {
    name: "COUNT(expr) skips NULLs",
    rule: "BigQuery COUNT(expression): counts non-NULL values",
    sql: `select count(r.origin_time) as n from ${RESP}`,
    expect: [{ n: 9 }],
  },
  {
    name: "aggregates over no rows: counts are 0, the rest NULL",
    rule: "BigQuery aggregate functions: COUNT/COUNTIF of no rows is 0; SUM, AVG, MIN, MAX, LOGICAL_OR are NULL",
    sql: `select count(*) as n, count(id) as c, countif(true) as ci, sum(1) as s, avg(1) as a, min(id) as mn, max(timestamp) as mx, logical_or(true) as lo from ${BOUNCER}`,
    expect: [{ n: 0, c: 0, ci: 0, s: null, a: null, mn: null, mx: null, lo: null }],
  },
  {
    name: "an aggregate without GROUP BY over a filter matching nothing returns one row",
    rule: "BigQuery aggregate functions: one output row without GROUP BY",
    sql: `select count(*) as n, max(id) as mx from ${REST} where false`,
    expect: [{ n: 0, mx: null }],
  },
  {
    name: "COUNTIF counts TRUE values",
    rule: "BigQuery COUNTIF",
    sql: `select countif(r.status_code >= 400) as errors from ${RESP}`,
    expect: [{ errors: 5 }],
  },
  {
    name: "COUNTIF does not count NULL conditions",
    rule: "BigQuery COUNTIF: counts TRUE only",
    sql: `select countif(c.country = 'US') as us_requests from ${CF}`,
    expect: [{ us_requests: 4 }],
  },
  {
    name: "COUNT and COUNTIF per project",
    rule: "BigQuery COUNT, COUNTIF with GROUP BY",
    sql: `select project, count(*) as n, countif(r.status_code >= 400) as errors from ${RESP} group by project`,
    expect: [
      { project: "alpha", n: 5, errors: 3 },
      { project: "beta", n: 3, errors: 1 },
      { project: "gamma", n: 3, errors: 1 },
    ],
  },
  {
    name: "COUNT(DISTINCT)",
    rule: "BigQuery COUNT(DISTINCT expression)",
    sql: `select count(distinct project) as n from ${EDGE}`,
    expect: [{ n: 3 }],
  },
  {
    name: "COUNT(DISTINCT) ignores NULL",
    rule: "BigQuery COUNT(DISTINCT expression): NULL is not counted",
    sql: `select count(distinct h.x_real_ip) as n from ${HEADERS}`,
    expect: [{ n: 4 }],
  },
  {
    name: "APPROX_COUNT_DISTINCT is exact",
    rule: "DESIGN.md §3 departure: APPROX_COUNT_DISTINCT is exact",
    sql: `select approx_count_distinct(h.x_real_ip) as n from ${HEADERS}`,
    expect: [{ n: 4 }],
  },
  {
    name: "APPROX_COUNT_DISTINCT per group",
    rule: "DESIGN.md §3 departure: APPROX_COUNT_DISTINCT is exact",
    sql: `select project, approx_count_distinct(h.x_real_ip) as ips from ${HEADERS} group by project`,
    expect: [
      { project: "alpha", ips: 3 },
      { project: "beta", ips: 2 },
      { project: "gamma", ips: 1 },
    ],
  },

  // ---------------------------------------------------------------- SUM, AVG, MIN, MAX, ANY_VALUE
  {
    name: "SUM of INT64",
    rule: "BigQuery SUM: INT64 input gives INT64",
    sql: `select sum(r.status_code) as s from ${RESP}`,
    expect: [{ s: 3314 }],
  },
  {
    name: "SUM of INT64 near 2^53 is exact",
    rule: "BigQuery SUM over INT64 is exact; DESIGN.md §4 INT64 wire value",
    sql: `select sum(m.counter) as s from ${EDGE}, unnest(metadata) m`,
    expect: [{ s: 9007199254740951 }],
  },
  {
    name: "INT64 arithmetic beyond 2^53 is exact and sent as a string",
    rule: "BigQuery INT64 arithmetic; DESIGN.md §4 INT64 beyond ±2^53 → string",
    sql: `select sum(m.counter) + 100 as s, max(m.counter) as mx from ${EDGE}, unnest(metadata) m`,
    expect: [{ s: "9007199254741051", mx: "9007199254740993" }],
  },
  {
    name: "SUM of FLOAT64",
    rule: "BigQuery SUM: FLOAT64 input gives FLOAT64",
    sql: `select sum(m.responseTime) as s from ${STORAGE}, unnest(metadata) m`,
    expect: [{ s: 2162.5 }],
  },
  {
    name: "AVG of INT64 is FLOAT64",
    rule: "BigQuery AVG: INT64 input gives FLOAT64",
    sql: `select avg(x) as a from unnest([1, 2]) as x`,
    expect: [{ a: 1.5 }],
  },
  {
    name: "AVG of auth durations",
    rule: "BigQuery AVG ignores NULL",
    sql: `select avg(m.duration) as a from ${AUTH}, unnest(metadata) m`,
    expect: [{ a: 23062500 }],
  },
  {
    name: "AVG ignores NULL within a group",
    rule: "BigQuery AVG ignores NULL",
    sql: `select avg(m.responseTime) as a from ${STORAGE}, unnest(metadata) m where m.project = 'beta'`,
    expect: [{ a: 1050.375 }],
  },
  {
    name: "MIN and MAX of INT64",
    rule: "BigQuery MIN, MAX",
    sql: `select min(r.status_code) as lo, max(r.status_code) as hi from ${RESP}`,
    expect: [{ lo: 101, hi: 503 }],
  },
  {
    name: "MIN and MAX of TIMESTAMP",
    rule: "BigQuery MIN, MAX over TIMESTAMP; DESIGN.md §4 wire µs",
    sql: `select min(timestamp) as first, max(timestamp) as last from ${EDGE}`,
    expect: [{ first: us("2025-01-14T23:59:59.999999Z"), last: us("2025-01-15T11:59:59Z") }],
  },
  {
    name: "MIN and MAX of STRING",
    rule: "BigQuery MIN, MAX over STRING",
    sql: `select min(project) as lo, max(project) as hi from ${EDGE}`,
    expect: [{ lo: "alpha", hi: "gamma" }],
  },
  {
    name: "ANY_VALUE takes the minimum per group",
    rule: "DESIGN.md §3 departure: ANY_VALUE takes the minimum",
    sql: `select project, any_value(id) as some_id from ${EDGE} group by project`,
    expect: [
      { project: "alpha", some_id: "e01" },
      { project: "beta", some_id: "e06" },
      { project: "gamma", some_id: "e10" },
    ],
  },
  {
    name: "ANY_VALUE over all rows takes the minimum",
    rule: "DESIGN.md §3 departure: ANY_VALUE takes the minimum",
    sql: `select any_value(r.status_code) as s from ${RESP}`,
    expect: [{ s: 101 }],
  },

  // ---------------------------------------------------------------- ARRAY_AGG, STRING_AGG, LOGICAL_*
  {
    name: "ARRAY_AGG with ORDER BY",
    rule: "BigQuery ARRAY_AGG(… ORDER BY …)",
    sql: `select array_agg(r.status_code order by timestamp) as s from ${RESP} where project = 'gamma'`,
    ordered: false,
    expect: [{ s: [200, 400, 200] }],
  },
  {
    name: "ARRAY_AGG without ORDER BY orders by value",
    rule: "DESIGN.md §3 departure: ARRAY_AGG without ORDER BY orders by value",
    sql: `select array_agg(r.status_code) as s from ${RESP} where project = 'gamma'`,
    expect: [{ s: [200, 200, 400] }],
  },
  {
    name: "ARRAY_AGG of strings without ORDER BY orders by value",
    rule: "DESIGN.md §3 departure: ARRAY_AGG without ORDER BY orders by value",
    sql: `select array_agg(m.level) as levels from ${AUTH}, unnest(metadata) m where project = 'beta'`,
    expect: [{ levels: ["error", "fatal", "info"] }],
  },
  {
    name: "ARRAY_AGG(DISTINCT)",
    rule: "BigQuery ARRAY_AGG(DISTINCT …); DESIGN.md §3 ordered by value",
    sql: `select array_agg(distinct project) as projects from ${EDGE}`,
    expect: [{ projects: ["alpha", "beta", "gamma"] }],
  },
  {
    name: "ARRAY_AGG over no rows is a NULL array",
    rule: "BigQuery ARRAY_AGG: if there are zero input rows, the function returns NULL (a result shows a NULL array as [])",
    sql: `select array_agg(id) is null as a, array_length(array_agg(id)) as n, array_to_string(array_agg(id), ',') as s, array_agg(id) as ids from ${REST} where id = 'none'`,
    expect: [{ a: true, n: null, s: null, ids: [] }],
  },
  {
    name: "ARRAY_AGG(DISTINCT) keeps one NULL",
    rule: "BigQuery ARRAY_AGG: NULLs are kept unless IGNORE NULLS is given; DISTINCT keeps one of each value, NULL included",
    sql: "select array_length(array_agg(distinct x)) as d, array_length(array_agg(x)) as a, array_length(array_agg(distinct x ignore nulls)) as i, array_length(array_agg(distinct x order by x limit 2)) as l from unnest(['b', null, 'a', 'b', null]) as x",
    expect: [{ d: 3, a: 5, i: 2, l: 2 }],
  },
  {
    name: "ARRAY_AGG(DISTINCT) of a field with NULLs, per group",
    rule: "BigQuery ARRAY_AGG: NULLs are kept unless IGNORE NULLS; DISTINCT keeps one NULL",
    sql: `select project, array_length(array_agg(distinct c.country)) as n from ${CF} group by project order by project`,
    expect: [
      { project: "alpha", n: 3 },
      { project: "beta", n: 3 },
      { project: "gamma", n: 1 },
    ],
  },
  {
    name: "ARRAY_AGG with ORDER BY … DESC LIMIT",
    rule: "BigQuery ARRAY_AGG(… ORDER BY … LIMIT n)",
    sql: `select array_agg(r.status_code order by r.status_code desc limit 2) as top from ${RESP}`,
    ordered: false,
    expect: [{ top: [503, 500] }],
  },
  {
    name: "ARRAY_AGG IGNORE NULLS",
    rule: "BigQuery ARRAY_AGG(… IGNORE NULLS …)",
    sql: `select array_agg(c.country ignore nulls order by c.country) as countries from ${CF} where project = 'beta'`,
    ordered: false,
    expect: [{ countries: ["BR", "US"] }],
  },
  {
    name: "ARRAY_AGG per group ordered by timestamp descending",
    rule: "BigQuery ARRAY_AGG(… ORDER BY …) with GROUP BY",
    sql: `select project, array_agg(id order by timestamp desc) as ids from ${EDGE} group by project`,
    ordered: false,
    expect: [
      { project: "alpha", ids: ["e09", "e05", "e04", "e03", "e02", "e01"] },
      { project: "beta", ids: ["e08", "e07", "e06"] },
      { project: "gamma", ids: ["e12", "e11", "e10"] },
    ],
  },
  {
    name: "ARRAY_AGG over no rows is an empty array",
    rule: "BigQuery ARRAY_AGG of no rows is NULL; a NULL ARRAY is returned as [] in query results",
    sql: `select array_agg(id) as ids from ${BOUNCER}`,
    expect: [{ ids: [] }],
  },
  {
    name: "a subscript on ARRAY_AGG",
    rule: "BigQuery arrays: subscript on a function result",
    sql: `select array_agg(id order by timestamp)[offset(0)] as first from ${EDGE}`,
    ordered: false,
    expect: [{ first: "e10" }],
  },
  {
    name: "STRING_AGG with a delimiter and ORDER BY",
    rule: "BigQuery STRING_AGG(expr, delimiter ORDER BY …)",
    sql: `select string_agg(id, ',' order by timestamp) as ids from ${REST}`,
    ordered: false,
    expect: [{ ids: "t01,t02,t03" }],
  },
  {
    name: "STRING_AGG's default delimiter is a comma",
    rule: "BigQuery STRING_AGG: default delimiter ','",
    sql: `select string_agg(distinct project order by project) as ps from ${EDGE}`,
    ordered: false,
    expect: [{ ps: "alpha,beta,gamma" }],
  },
  {
    name: "STRING_AGG skips NULL values",
    rule: "BigQuery STRING_AGG ignores NULL",
    sql: `select string_agg(c.country, '|' order by timestamp) as cs from ${CF} where project = 'beta'`,
    ordered: false,
    expect: [{ cs: "BR|US" }],
  },
  {
    name: "STRING_AGG with LIMIT",
    rule: "BigQuery STRING_AGG(… ORDER BY … LIMIT n)",
    sql: `select string_agg(id, ',' order by timestamp desc limit 2) as ids from ${REST}`,
    ordered: false,
    expect: [{ ids: "t03,t02" }],
  },
  {
    name: "LOGICAL_OR and LOGICAL_AND",
    rule: "BigQuery LOGICAL_OR, LOGICAL_AND",
    sql: `select logical_or(b.verifiedBot) as any_bot, logical_and(b.verifiedBot) as all_bots from ${BOT}`,
    expect: [{ any_bot: true, all_bots: false }],
  },
  {
    name: "LOGICAL_OR and LOGICAL_AND per project",
    rule: "BigQuery LOGICAL_OR, LOGICAL_AND with GROUP BY",
    sql: `select project, logical_or(b.verifiedBot) as any_bot, logical_and(b.verifiedBot) as all_bots from ${BOT} group by project`,
    expect: [
      { project: "alpha", any_bot: true, all_bots: false },
      { project: "beta", any_bot: false, all_bots: false },
      { project: "gamma", any_bot: true, all_bots: true },
    ],
  },
  {
    name: "LOGICAL_AND ignores NULL",
    rule: "BigQuery LOGICAL_AND ignores NULL",
    sql: `select logical_and(m.metering) as all_metered from ${AUTH}, unnest(metadata) m where project = 'beta'`,
    expect: [{ all_metered: true }],
  },

  // ---------------------------------------------------------------- APPROX_QUANTILES
  {
    name: "APPROX_QUANTILES returns n+1 boundaries, NULLs ignored",
    rule: `${APPROX}; BigQuery APPROX_QUANTILES returns n+1 values, ignoring NULL`,
    sql: `select approx_quantiles(r.origin_time, 4) as q from ${RESP}`,
    expect: [{ q: [1, 5, 9, 40, 30000] }],
  },
  {
    name: "APPROX_QUANTILES in thirds",
    rule: APPROX,
    sql: `select approx_quantiles(r.origin_time, 3) as q from ${RESP}`,
    expect: [{ q: [1, 5, 12, 30000] }],
  },
  {
    name: "APPROX_QUANTILES median with OFFSET: rank ceil(4.5) = 5",
    rule: APPROX,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(50)] as p50 from ${RESP}`,
    expect: [{ p50: 9 }],
  },
  {
    name: "APPROX_QUANTILES p99: rank ceil(8.91) = 9",
    rule: APPROX,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(99)] as p99 from ${RESP}`,
    expect: [{ p99: 30000 }],
  },
  {
    name: "APPROX_QUANTILES p88: rank ceil(7.92) = 8",
    rule: APPROX,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(88)] as p88 from ${RESP}`,
    expect: [{ p88: 2500 }],
  },
  {
    name: "APPROX_QUANTILES low ranks: p10 rank 1, p12 rank 2",
    rule: APPROX,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(10)] as p10, approx_quantiles(r.origin_time, 100)[offset(12)] as p12 from ${RESP}`,
    expect: [{ p10: 1, p12: 3 }],
  },
  {
    name: "APPROX_QUANTILES quantile 0 is the minimum",
    rule: `${APPROX}: max(1, ceil(0)) = 1`,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(0)] as p0, approx_quantiles(r.origin_time, 100)[offset(100)] as p100 from ${RESP}`,
    expect: [{ p0: 1, p100: 30000 }],
  },
  {
    name: "APPROX_QUANTILES median of ten values is the fifth",
    rule: `${APPROX}: ceil(0.5·10) = 5 (percentile_disc, not interpolation)`,
    sql: `select approx_quantiles(x, 2) as q from unnest([100, 90, 80, 70, 60, 50, 40, 30, 20, 10]) as x`,
    expect: [{ q: [10, 50, 100] }],
  },
  {
    name: "APPROX_QUANTILES of ten values at 0.3 is the third",
    rule: `${APPROX}: ceil(0.3·10) = 3`,
    sql: `select approx_quantiles(x, 10)[offset(3)] as p30, approx_quantiles(x, 10)[offset(1)] as p10 from unnest([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) as x`,
    expect: [{ p30: 30, p10: 10 }],
  },
  {
    name: "APPROX_QUANTILES inside an arithmetic expression",
    rule: `${APPROX}; BigQuery APPROX_QUANTILES(x, n)[OFFSET(k)] is an expression`,
    sql: `select approx_quantiles(r.origin_time, 100)[offset(50)] * 2 + 1 as x from ${RESP}`,
    expect: [{ x: 19 }],
  },
  {
    name: "APPROX_QUANTILES median per group",
    rule: APPROX,
    sql: `select project, approx_quantiles(r.origin_time, 2)[offset(1)] as median from ${RESP} group by project`,
    expect: [
      { project: "alpha", median: 12 },
      { project: "beta", median: 3 },
      { project: "gamma", median: 9 },
    ],
  },
  {
    name: "APPROX_QUANTILES median of statuses",
    rule: `${APPROX}: ceil(0.5·11) = 6`,
    sql: `select approx_quantiles(r.status_code, 2)[offset(1)] as median from ${RESP}`,
    expect: [{ median: 204 }],
  },

  // ---------------------------------------------------------------- GROUP BY, HAVING
  {
    name: "GROUP BY a column",
    rule: "BigQuery GROUP BY clause",
    sql: `select project, count(*) as n from ${EDGE} group by project`,
    expect: [
      { project: "alpha", n: 6 },
      { project: "beta", n: 3 },
      { project: "gamma", n: 3 },
    ],
  },
  {
    name: "GROUP BY an ordinal",
    rule: "BigQuery GROUP BY clause: ordinal references to the SELECT list",
    sql: `select project, count(*) as n from ${EDGE} group by 1`,
    expect: [
      { project: "alpha", n: 6 },
      { project: "beta", n: 3 },
      { project: "gamma", n: 3 },
    ],
  },
  {
    name: "GROUP BY two ordinals",
    rule: "BigQuery GROUP BY clause: ordinal references to the SELECT list",
    sql: `select project, q.method, count(*) as n from ${EDGE}, unnest(metadata) m, unnest(m.request) q group by 1, 2`,
    expect: [
      { project: "alpha", method: "GET", n: 3 },
      { project: "alpha", method: "POST", n: 2 },
      { project: "beta", method: "GET", n: 2 },
      { project: "beta", method: "DELETE", n: 1 },
      { project: "gamma", method: "GET", n: 2 },
      { project: "gamma", method: "POST", n: 1 },
    ],
  },
  {
    name: "GROUP BY an alias of an expression",
    rule: "BigQuery GROUP BY clause: may refer to SELECT list aliases",
    sql: `select upper(project) as p, count(*) as n from ${EDGE} group by p`,
    expect: [
      { p: "ALPHA", n: 6 },
      { p: "BETA", n: 3 },
      { p: "GAMMA", n: 3 },
    ],
  },
  {
    name: "a SELECT alias overrides a FROM column of the same name in GROUP BY",
    rule: "BigQuery GROUP BY clause: SELECT aliases override names in the corresponding FROM clause",
    sql: `select timestamp_trunc(timestamp, hour) as timestamp, count(*) as n from ${EDGE} group by timestamp order by timestamp`,
    expect: [
      { timestamp: us("2025-01-14T23:00:00Z"), n: 1 },
      { timestamp: us("2025-01-15T00:00:00Z"), n: 1 },
      { timestamp: us("2025-01-15T09:00:00Z"), n: 1 },
      { timestamp: us("2025-01-15T10:00:00Z"), n: 4 },
      { timestamp: us("2025-01-15T11:00:00Z"), n: 5 },
    ],
  },
  {
    name: "usage-style buckets: DATETIME(TIMESTAMP_TRUNC(…), 'UTC') grouped by its alias",
    rule: "BigQuery GROUP BY alias override; DESIGN.md §4 DATETIME wire value",
    sql: `select datetime(timestamp_trunc(timestamp, hour), 'UTC') as timestamp, count(*) as n from ${EDGE} where project = 'alpha' group by timestamp order by timestamp`,
    expect: [
      { timestamp: "2025-01-15T10:00:00", n: 4 },
      { timestamp: "2025-01-15T11:00:00", n: 2 },
    ],
  },
  {
    name: "GROUP BY a column that is not selected",
    rule: "BigQuery GROUP BY clause",
    sql: `select count(*) as n from ${EDGE} group by project`,
    expect: col("n", 6, 3, 3),
  },
  {
    name: "GROUP BY an expression repeated in the SELECT list",
    rule: "BigQuery GROUP BY clause: grouping expressions may be selected",
    sql: `select lower(m.level) as l, count(*) as n from ${AUTH}, unnest(metadata) m group by lower(m.level)`,
    expect: [
      { l: "info", n: 5 },
      { l: "warning", n: 1 },
      { l: "error", n: 2 },
      { l: "fatal", n: 1 },
    ],
  },
  {
    name: "NULLs form one group",
    rule: "BigQuery GROUP BY clause: NULL values are grouped together",
    sql: `select c.country, count(*) as n from ${CF} group by c.country`,
    expect: [
      { country: "US", n: 4 },
      { country: "DE", n: 1 },
      { country: "FR", n: 2 },
      { country: "BR", n: 1 },
      { country: null, n: 1 },
    ],
  },
  {
    name: "GROUP BY a field of a shadowing unnest alias",
    rule: "BigQuery alias shadowing with GROUP BY on a path",
    sql: `select metadata.level, count(*) as n from ${AUTH} cross join unnest(metadata) as metadata group by metadata.level`,
    expect: [
      { level: "info", n: 5 },
      { level: "warning", n: 1 },
      { level: "error", n: 2 },
      { level: "fatal", n: 1 },
    ],
  },
  {
    name: "GROUP BY a CASE bucket alias",
    rule: "BigQuery GROUP BY alias; CASE expression",
    sql: `select case when r.status_code >= 500 then '5xx' when r.status_code >= 400 then '4xx' else 'ok' end as class, count(*) as n from ${RESP} group by class`,
    expect: [
      { class: "5xx", n: 2 },
      { class: "4xx", n: 3 },
      { class: "ok", n: 6 },
    ],
  },
  {
    name: "HAVING filters groups",
    rule: "BigQuery HAVING clause",
    sql: `select project, count(*) as n from ${EDGE} group by project having count(*) > 3`,
    expect: [{ project: "alpha", n: 6 }],
  },
  {
    name: "HAVING refers to a SELECT alias",
    rule: "BigQuery HAVING clause: may reference SELECT list aliases",
    sql: `select project, count(*) as n from ${EDGE} group by project having n >= 3 and project != 'gamma'`,
    expect: [
      { project: "alpha", n: 6 },
      { project: "beta", n: 3 },
    ],
  },
  {
    name: "ORDER BY an aggregate alias, then a key",
    rule: "BigQuery ORDER BY aliases in an aggregate query",
    sql: `select project, count(*) as n from ${EDGE} group by project order by n desc, project`,
    expect: [
      { project: "alpha", n: 6 },
      { project: "beta", n: 3 },
      { project: "gamma", n: 3 },
    ],
  },
  {
    name: "an ungrouped column is an error",
    rule: "BigQuery GROUP BY: SELECT list expression references a column neither grouped nor aggregated",
    sql: `select id, count(*) as n from ${REST} group by project`,
    expect: { error: "sql_invalid" },
  },
  {
    name: "an aggregate in WHERE is an error",
    rule: "BigQuery: aggregate function not allowed in WHERE clause",
    sql: `select id from ${REST} where count(*) > 1`,
    expect: { error: "sql_invalid" },
  },

  // ---------------------------------------------------------------- window functions, QUALIFY
  {
    name: "ROW_NUMBER per partition",
    rule: "BigQuery numbering functions: ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)",
    sql: `select id, row_number() over (partition by project order by timestamp) as rn from ${REST}`,
    ordered: false,
    expect: [
      { id: "t01", rn: 1 },
      { id: "t02", rn: 2 },
      { id: "t03", rn: 1 },
    ],
  },
  {
    name: "RANK and DENSE_RANK with ties",
    rule: "BigQuery numbering functions: RANK, DENSE_RANK",
    sql: `select id, rank() over (order by r.status_code) as rk, dense_rank() over (order by r.status_code) as drk from ${RESP} where project = 'gamma'`,
    ordered: false,
    expect: [
      { id: "e10", rk: 1, drk: 1 },
      { id: "e12", rk: 1, drk: 1 },
      { id: "e11", rk: 3, drk: 2 },
    ],
  },
  {
    name: "a running SUM with a ROWS frame",
    rule: "BigQuery window frame: ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
    sql: `select id, sum(r.origin_time) over (order by timestamp rows between unbounded preceding and current row) as run from ${RESP} where project = 'alpha'`,
    ordered: false,
    expect: [
      { id: "e01", run: 12 },
      { id: "e02", run: 52 },
      { id: "e03", run: 57 },
      { id: "e04", run: 64 },
      { id: "e05", run: 2564 },
    ],
  },
  {
    name: "the default window frame includes ORDER BY peers",
    rule: "BigQuery window frame: default RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
    sql: `select id, sum(r.status_code) over (order by r.status_code) as s from ${RESP} where project = 'gamma'`,
    ordered: false,
    expect: [
      { id: "e10", s: 400 },
      { id: "e12", s: 400 },
      { id: "e11", s: 800 },
    ],
  },
  {
    name: "COUNT(*) over a partition",
    rule: "BigQuery aggregate window function with PARTITION BY",
    sql: `select id, count(*) over (partition by project) as n from ${EDGE} where project != 'alpha'`,
    expect: ["e06", "e07", "e08", "e10", "e11", "e12"].map((id) => ({ id, n: 3 })),
  },
  {
    name: "COUNT(*) OVER ()",
    rule: "BigQuery aggregate window function over the whole input",
    sql: `select id, count(*) over () as total from ${REST}`,
    expect: ["t01", "t02", "t03"].map((id) => ({ id, total: 3 })),
  },
  {
    name: "LAG and LEAD",
    rule: "BigQuery navigation functions: LAG, LEAD",
    sql: `select id, lag(id) over (order by timestamp) as prev, lead(id) over (order by timestamp) as next from ${REST}`,
    ordered: false,
    expect: [
      { id: "t01", prev: null, next: "t02" },
      { id: "t02", prev: "t01", next: "t03" },
      { id: "t03", prev: "t02", next: null },
    ],
  },
  {
    name: "LAG with an offset and a default",
    rule: "BigQuery navigation functions: LAG(value, offset, default)",
    sql: `select id, lag(id, 2, 'none') over (order by timestamp) as back2 from ${REST}`,
    ordered: false,
    expect: [
      { id: "t01", back2: "none" },
      { id: "t02", back2: "none" },
      { id: "t03", back2: "t01" },
    ],
  },
  {
    name: "LAG and LEAD with a FLOAT64 default over INT64 values are FLOAT64",
    rule: "BigQuery LAG / LEAD: the value and the default meet in their supertype (INT64 with FLOAT64 is FLOAT64; DuckDB and PostgreSQL cast 0.5 to INT64, ClickHouse refused)",
    sql: "select x, lead(x, 1, 0.5) over (order by x) as ld, lag(x, 1, 2.5) over (order by x) as lg from unnest([1, 2]) as x order by x",
    expect: [
      { x: 1, ld: 2, lg: 2.5 },
      { x: 2, ld: 0.5, lg: 1 },
    ],
  },
  {
    name: "FIRST_VALUE and LAST_VALUE with a full frame",
    rule: "BigQuery navigation functions: FIRST_VALUE, LAST_VALUE; window frames",
    sql: `select id, first_value(id) over (partition by project order by timestamp) as first, last_value(id) over (partition by project order by timestamp rows between unbounded preceding and unbounded following) as last from ${EDGE} where project = 'beta'`,
    ordered: false,
    expect: ["e06", "e07", "e08"].map((id) => ({ id, first: "e06", last: "e08" })),
  },
  {
    name: "a window over an aggregate",
    rule: "BigQuery window function calls over grouped results",
    sql: `select project, count(*) as n, sum(count(*)) over () as total from ${EDGE} group by project`,
    expect: [
      { project: "alpha", n: 6, total: 12 },
      { project: "beta", n: 3, total: 12 },
      { project: "gamma", n: 3, total: 12 },
    ],
  },
  {
    name: "the gap between consecutive events",
    rule: "BigQuery LAG with TIMESTAMP_DIFF",
    sql: `select id, timestamp_diff(timestamp, lag(timestamp) over (order by timestamp), second) as gap from ${REST}`,
    ordered: false,
    expect: [
      { id: "t01", gap: null },
      { id: "t02", gap: 1 },
      { id: "t03", gap: 1 },
    ],
  },
  {
    name: "a named WINDOW",
    rule: "BigQuery WINDOW clause",
    sql: `select id, row_number() over w as rn from ${REST} window w as (order by timestamp desc)`,
    ordered: false,
    expect: [
      { id: "t03", rn: 1 },
      { id: "t02", rn: 2 },
      { id: "t01", rn: 3 },
    ],
  },
  {
    name: "ROWS n PRECEDING alone frames up to the current row",
    rule: "BigQuery window frame: frame_start alone (n PRECEDING, UNBOUNDED PRECEDING) ends at CURRENT ROW (it was refused as not BETWEEN … AND …)",
    sql: "select x, sum(x) over (order by x rows 1 preceding) as a, sum(x) over (order by x rows unbounded preceding) as b from unnest([1, 2, 3, 4]) as x order by x",
    expect: [
      { x: 1, a: 1, b: 1 },
      { x: 2, a: 3, b: 3 },
      { x: 3, a: 5, b: 6 },
      { x: 4, a: 7, b: 10 },
    ],
  },
  {
    name: "a moving AVG over a ROWS frame",
    rule: "BigQuery window frame: ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
    sql: `select x, avg(x) over (order by x rows between 1 preceding and 1 following) as a from unnest([1, 2, 3, 4]) as x`,
    ordered: false,
    expect: [
      { x: 1, a: 1.5 },
      { x: 2, a: 2 },
      { x: 3, a: 3 },
      { x: 4, a: 3.5 },
    ],
  },
  {
    name: "QUALIFY keeps the newest event per project",
    rule: "BigQuery QUALIFY clause",
    sql: `select project, id from ${EDGE} where true qualify row_number() over (partition by project order by timestamp desc) = 1`,
    ordered: false,
    expect: [
      { project: "alpha", id: "e09" },
      { project: "beta", id: "e08" },
      { project: "gamma", id: "e12" },
    ],
  },
  {
    name: "QUALIFY on a window alias",
    rule: "BigQuery QUALIFY clause: may refer to SELECT list aliases",
    sql: `select id, row_number() over (partition by project order by timestamp) as rn from ${EDGE} where project is not null qualify rn <= 2`,
    ordered: false,
    expect: [
      { id: "e01", rn: 1 },
      { id: "e02", rn: 2 },
      { id: "e06", rn: 1 },
      { id: "e07", rn: 2 },
      { id: "e10", rn: 1 },
      { id: "e11", rn: 2 },
    ],
  },
  {
    name: "QUALIFY without WHERE",
    rule: "BigQuery QUALIFY clause",
    sql: `select id from ${PG} qualify rank() over (order by timestamp desc) <= 2`,
    ordered: false,
    expect: col("id", "p10", "p09"),
  },
  {
    name: "QUALIFY over a grouped query",
    rule: "BigQuery QUALIFY clause after GROUP BY",
    sql: `select project, count(*) as n from ${EDGE} group by project qualify rank() over (order by count(*) desc) = 1`,
    ordered: false,
    expect: [{ project: "alpha", n: 6 }],
  },
];
