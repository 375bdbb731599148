import { describe, expect, it } from "vitest";
import { DESUGARED_FORMS, DESUGARED_MARKERS } from "../src/catalogue/internal-functions.ts";
import { desugarSql, STATEMENT_PASSES } from "../src/parse/desugar.ts";
import { CONSTRUCT_RULES } from "../src/parse/desugar-constructs.ts";
import { lexSql } from "../src/parse/lex-sql.ts";

// Each named desugaring pass and construct rule: BigQuery text in, what the parser reads out.

/** statement pass → [input, tokens out joined by spaces] */
const PASS_CASES: Record<string, Array<[string, string]>> = {
  "qualify-without-where": [
    [
      "select x from t qualify row_number() over (order by x) = 1",
      "select x from t WHERE TRUE qualify row_number ( ) over ( order by x ) = 1",
    ],
    ["select x from t where y qualify z", "select x from t where y qualify z"],
  ],
  "parenthesised-joins": [
    [
      "select a.x from (t a join u b on a.id = b.id) join v c on c.id = a.id",
      "select a . x from t a join u b on a . id = b . id join v c on c . id = a . id",
    ],
  ],
  "join-groups": [
    [
      "select 1 from t a left join (u b cross join unnest(b.m) as m) on a.id = m.id",
      "select 1 from t a left join ( SELECT __qes_join_group FROM u b cross join unnest ( b . m ) as m ) on a . id = m . id",
    ],
  ],
  "star-except-replace": [
    [
      "select * except (a) replace (b + 1 as b) from t",
      "select * REPLACE ( b + 1 as b , __qes_except AS a ) from t",
    ],
  ],
  "parenthesised-last-operand": [
    [
      "(select a from t limit 2) union all (select a from u) order by a",
      "( select a from t limit 2 ) union all SELECT * FROM ( select a from u ) order by a",
    ],
    ["(select a from t) union all (select a from u)", "( select a from t ) union all ( select a from u )"],
    [
      "select a from t union distinct (select a from u) limit 1",
      "select a from t union distinct SELECT * FROM ( select a from u ) limit 1",
    ],
    ["(select a from t) order by a limit 1", "SELECT * FROM ( select a from t ) order by a limit 1"],
    [
      "with x as ((select a from t) limit 1) select * from x",
      "with x as ( SELECT * FROM ( select a from t ) limit 1 ) select * from x",
    ],
    [
      "select * from ((select a from t) order by a limit 1)",
      "select * from ( SELECT * FROM ( select a from t ) order by a limit 1 )",
    ],
    ["select * from (select a from t) limit 1", "select * from ( select a from t ) limit 1"],
    ["select array_agg((select 1) order by a) from t", "select array_agg ( ( select 1 ) order by a ) from t"],
  ],
  "frame-start-alone": [
    [
      "select sum(x) over (order by x rows current row) from t",
      "select sum ( x ) over ( order by x rows BETWEEN current row AND CURRENT ROW ) from t",
    ],
    [
      "select sum(x) over (order by x range 2 preceding), sum(x) over (order by x RANGE UNBOUNDED PRECEDING) from t",
      "select sum ( x ) over ( order by x range BETWEEN 2 preceding AND CURRENT ROW ) , sum ( x ) over ( order by x RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW ) from t",
    ],
    [
      "select sum(x) over (order by x rows between current row and 1 following) from t",
      "select sum ( x ) over ( order by x rows between current row and 1 following ) from t",
    ],
    [
      "select sum(x) over (order by x rows 1 following) from t",
      "select sum ( x ) over ( order by x rows 1 following ) from t",
    ],
  ],
  "window-after-order": [
    [
      "select rank() over w from t window w as (order by x) order by y limit 2",
      "select rank ( ) over w from t order by y limit 2 window w as ( order by x )",
    ],
    [
      "select * from (select a from t window w as (order by x) order by a) union all select 1 order by 1",
      "select * from ( select a from t order by a window w as ( order by x ) ) union all select 1 order by 1",
    ],
    [
      "select rank() over w from t window w as (order by x)",
      "select rank ( ) over w from t window w as ( order by x )",
    ],
  ],
};

/** construct rule → [input, desugared text, string literal values kept aside] */
const RULE_CASES: Record<string, Array<[string, string, string[]]>> = {
  "string-literals": [
    ["select 'it\\'s', \"a\\tb\" as c", "select '__qes_s0', '__qes_s1' as c", ["it's", "a\tb"]],
  ],
  "float-literals": [
    [
      "select .25 + 1.5e3 + 0x1F",
      "select __qes_float('__qes_s0') + __qes_float('__qes_s1') + 0x1F",
      [".25", "1.5e3"],
    ],
  ],
  intervals: [
    [
      "select interval 1 hour, interval -(2) day",
      "select __qes_interval(1, '__qes_s0'), __qes_interval(- (2), '__qes_s1')",
      ["HOUR", "DAY"],
    ],
  ],
  extracts: [
    [
      "select extract(hour from ts), extract(week(monday) from ts)",
      "select __qes_extract('__qes_s0', ts), __qes_extract('__qes_s1', ts)",
      ["HOUR", "WEEK(MONDAY)"],
    ],
  ],
  "array-subqueries": [
    ["select array(select x from t)", "select __qes_array_subquery((select x from t))", []],
  ],
  "typed-array-literals": [
    ["select array<int64>[1, 2]", "select __qes_array_typed('__qes_s0', 1, 2)", ["int64"]],
  ],
  "array-literals": [["select [1, 2], []", "select __qes_array(1, 2), __qes_array()", []]],
  "distinct-aggregates": [
    ["select sum(distinct x) from t", "select __qes_distinct('__qes_s0', x) from t", ["SUM"]],
    [
      "select avg( DISTINCT a + 1 ) over () from t",
      "select __qes_distinct('__qes_s0', a + 1) over () from t",
      ["AVG"],
    ],
    // a qualified name is no aggregate: left to the parser (and the sandbox)
    ["select t.max(distinct x) from t", "select t.max (distinct x) from t", []],
  ],
  "null-treatment-windows": [
    [
      "select first_value(x ignore nulls) over (order by t), nth_value(a.b, 2 IGNORE NULLS) over w from t",
      "select __qes_ignore_nulls('__qes_s0', x) over (order by t), __qes_ignore_nulls('__qes_s1', a.b, 2) over w from t",
      ["FIRST_VALUE", "NTH_VALUE"],
    ],
    // RESPECT NULLS is the default: dropped
    ["select last_value(x respect nulls) over () from t", "select last_value (x) over () from t", []],
    // without a null treatment, or a qualified name: left alone
    [
      "select first_value(x) over (), t.first_value(x ignore nulls) from t",
      "select first_value (x) over (), t.first_value (x ignore nulls) from t",
      [],
    ],
  ],
  "ordered-aggregates": [
    [
      "select array_agg(distinct x ignore nulls order by x desc limit 2)",
      "select __qes_array_agg('__qes_s0', x, __qes_order(x, '__qes_s1', '__qes_s2'), __qes_limit(2))",
      ["DISTINCT,IGNORE_NULLS", "DESC", ""],
    ],
    ["select string_agg(s, ',')", "select __qes_string_agg('__qes_s0', s,'__qes_s1')", ["", ","]],
  ],
  subscripts: [
    [
      "select a[offset(1)], a[2].f.g, a[safe_ordinal(3)]",
      "select __qes_subscript(a, 0, 1), __qes_path(__qes_subscript(a, 0, 2), '__qes_s0', '__qes_s1'), __qes_subscript(a, 3, 3)",
      ["f", "g"],
    ],
  ],
  "nulls-order": [
    [
      "select x from t order by x desc nulls last, y nulls first",
      "select x from t order by __qes_nulls_last(x) desc, __qes_nulls_first(y)",
      [],
    ],
  ],
  "is-distinct": [
    [
      "select a is distinct from b, a is not distinct from b + 1",
      "select __qes_is_distinct(a, b), __qes_is_not_distinct(a, b + 1)",
      [],
    ],
  ],
  "at-time-zone": [["select ts at time zone 'UTC'", "select __qes_at_time_zone(ts, '__qes_s0')", ["UTC"]]],
  "pg-casts": [
    [
      "select t.event_message::text like '%cron job%', f(x)::int::text",
      "select CAST(t.event_message AS STRING) like '__qes_s0', CAST(CAST(f (x) AS INT64) AS STRING)",
      ["%cron job%"],
    ],
    [
      "select '5'::int, 2::text, x::interval",
      "select CAST('__qes_s0' AS INT64), CAST(2 AS STRING), x :: interval",
      ["5"],
    ],
  ],
};

describe("statement passes", () => {
  it("each has input→output cases", () => {
    expect(Object.keys(PASS_CASES).sort()).toEqual(STATEMENT_PASSES.map((p) => p.name).sort());
  });

  for (const pass of STATEMENT_PASSES) {
    it.each(PASS_CASES[pass.name] ?? [])(`${pass.name}: %s`, (input, output) => {
      const tokens = lexSql(input).slice(0, -1);
      expect(
        pass
          .run(tokens)
          .map((t) => t.text)
          .join(" "),
      ).toBe(output);
    });
  }
});

describe("construct rules", () => {
  it("each has input→output cases", () => {
    expect(Object.keys(RULE_CASES).sort()).toEqual(CONSTRUCT_RULES.map((r) => r.name).sort());
  });

  for (const { name } of CONSTRUCT_RULES) {
    it.each(RULE_CASES[name] ?? [])(`${name}: %s`, (input, text, strings) => {
      const d = desugarSql(input);
      expect(d.text).toBe(text);
      expect(d.strings).toEqual(strings);
    });
  }

  it("writes only forms the catalogue registers", () => {
    const all = [...Object.values(PASS_CASES), ...Object.values(RULE_CASES)].flat().map((c) => c[1]);
    const written = new Set(all.flatMap((text) => text.match(/__qes_[a-z_]+/g) ?? []));
    const registered = new Set([...Object.keys(DESUGARED_FORMS), ...Object.keys(DESUGARED_MARKERS)]);
    expect([...written].filter((n) => !registered.has(n))).toEqual([]);
  });
});
