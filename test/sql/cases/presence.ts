import { col, EDGE, PG, REST, type SqlCase } from "./case.ts";

// CROSS JOIN UNNEST(record) keeps only rows whose record exists (DESIGN.md §3: UNNEST of a
// missing or null field yields no rows). The compiler drops that presence test where the WHERE
// clause already rejects NULL in a field of the record (compile/record-presence.ts); these cases
// hold the rows both where the test is dropped and where it must stay — a wrong drop would let
// p09 (metadata without `parsed`) or e09 (no metadata) through.
//
// postgres.logs: parsed.process_id p01 101, p02 102, p03 55, p04 103, p05 104, p06 201, p10 401
// (p07, p08 have parsed without process_id or backend_type; p09 has no parsed);
// error_severity p01 p03 p04 p08 LOG, p02 p05 ERROR, p06 FATAL, p07 WARNING, p10 null.

const PARSED = `${PG} as t, unnest(t.metadata) as m, unnest(m.parsed) as p`;
const REQUEST = `${EDGE} as t, unnest(t.metadata) as m, unnest(m.request) as r`;
const RULE = "DESIGN.md §3: CROSS JOIN UNNEST of a missing record yields no rows";

export const presenceCases: SqlCase[] = [
  // ---------------------------------------------------------------- implied: the test is dropped
  {
    name: "presence: a comparison on a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id > 100 order by t.id`,
    expect: col("id", "p01", "p02", "p04", "p05", "p06", "p10"),
  },
  {
    name: "presence: regexp_contains on a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${REQUEST} where regexp_contains(r.url, 'alpha') order by t.id`,
    expect: col("id", "e01", "e02", "e03", "e04", "e05"),
  },
  {
    name: "presence: LIKE on a field of a record below the unnested one",
    rule: RULE,
    sql: `select t.id from ${REQUEST} where r.headers.user_agent like 'curl%' order by t.id`,
    expect: col("id", "e01", "e03", "e05"),
  },
  {
    name: "presence: IS NOT NULL of a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.backend_type is not null and t.project = 'alpha' order by t.id`,
    expect: col("id", "p01", "p02", "p03", "p04", "p05"),
  },
  {
    name: "presence: OR of two comparisons on fields of the same record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id > 200 or p.backend_type = 'checkpointer' order by t.id`,
    expect: col("id", "p03", "p06", "p10"),
  },
  {
    name: "presence: IN and NOT IN on a field of the unnested record",
    rule: RULE,
    sql: `select t.id, p.error_severity in ('FATAL', 'WARNING') as rare from ${PARSED} where p.error_severity not in ('LOG') order by t.id`,
    expect: [
      { id: "p02", rare: false },
      { id: "p05", rare: false },
      { id: "p06", rare: true },
      { id: "p07", rare: true },
    ],
  },
  {
    name: "presence: NOT of a function of a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where not starts_with(p.error_severity, 'L') order by t.id`,
    expect: col("id", "p02", "p05", "p06", "p07"),
  },
  // ---------------------------------------------------------------- not implied: the test stays
  {
    name: "presence kept: IS NULL of a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id is null order by t.id`,
    expect: col("id", "p07", "p08"),
  },
  {
    name: "presence kept: IS NULL of a field of the unnested edge request",
    rule: RULE,
    sql: `select t.id from ${REQUEST} where r.url is null order by t.id`,
    expect: col("id", "e10", "e11"),
  },
  {
    name: "presence kept: COALESCE over a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where coalesce(p.error_severity, 'none') = 'none' order by t.id`,
    expect: col("id", "p10"),
  },
  {
    name: "presence kept: IFNULL over a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where ifnull(p.backend_type, '-') = '-' order by t.id`,
    expect: col("id", "p07", "p08"),
  },
  {
    name: "presence kept: CASE over a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where case when p.process_id is null then true else p.process_id > 200 end order by t.id`,
    expect: col("id", "p06", "p07", "p08", "p10"),
  },
  {
    name: "presence kept: IS NOT DISTINCT FROM NULL of a field of the unnested record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id is not distinct from null order by t.id`,
    expect: col("id", "p07", "p08"),
  },
  {
    name: "presence kept: IF over a field, compared",
    rule: RULE,
    sql: `select t.id from ${PARSED} where if(p.process_id is null, 'none', 'some') = 'none' order by t.id`,
    expect: col("id", "p07", "p08"),
  },
  {
    name: "presence kept: a NOT over an OR with IS NULL",
    rule: RULE,
    sql: `select t.id from ${PARSED} where not (p.process_id is not null and p.process_id > 0) order by t.id`,
    expect: col("id", "p07", "p08"),
  },
  {
    name: "presence kept: OR with a condition on another record",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id > 100 or m.host = 'db-default' order by t.id`,
    expect: col("id", "p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p10"),
  },
  {
    name: "presence kept: OR with IS NULL of the same field",
    rule: RULE,
    sql: `select t.id from ${PARSED} where p.process_id > 100 or p.process_id is null order by t.id`,
    expect: col("id", "p01", "p02", "p04", "p05", "p06", "p07", "p08", "p10"),
  },
  {
    name: "presence kept: a condition on the parent record only",
    rule: RULE,
    sql: `select t.id from ${PARSED} where m.host = 'db-default' and t.project = 'beta' order by t.id`,
    expect: col("id", "p06", "p07", "p08"),
  },
  {
    name: "presence kept: the field's condition is inside a correlated subquery",
    rule: RULE,
    sql: `select t.id from ${PARSED} where not exists (select 1 from ${REST} as x where p.process_id > 100) order by t.id`,
    expect: col("id", "p03", "p07", "p08"),
  },
  {
    name: "presence kept: the field's condition is a LEFT JOIN's ON",
    rule: RULE,
    sql: `select t.id, x.id as x from ${PARSED} left join ${REST} as x on x.id = p.error_severity where t.id is not null order by t.id`,
    expect: ["p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p10"].map((id) => ({ id, x: null })),
  },
  {
    name: "presence kept: a self-join whose condition reads the other row's record",
    rule: RULE,
    sql: `select count(*) as n from ${PARSED} cross join ${PG} as u, unnest(u.metadata) as um, unnest(um.parsed) as up where up.process_id > 100`,
    expect: [{ n: 54 }],
  },
  {
    name: "presence: LEFT JOIN UNNEST keeps rows without the record",
    rule: "DESIGN.md §3: LEFT JOIN UNNEST(…) ON TRUE keeps the row with NULLs",
    sql: `select t.id from ${PG} as t, unnest(t.metadata) as m left join unnest(m.parsed) as p on true where p.process_id is null order by t.id`,
    expect: col("id", "p07", "p08", "p09"),
  },
  {
    name: "presence kept: the record comes through a CTE",
    rule: RULE,
    sql: `with s as (select t.id, t.metadata from ${PG} as t) select s.id from s, unnest(s.metadata) as m, unnest(m.parsed) as p where p.process_id is null or p.process_id < 100 order by s.id`,
    expect: col("id", "p03", "p07", "p08"),
  },
];
