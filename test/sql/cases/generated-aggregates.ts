import type { SqlCase } from "./case.ts";

// Divergences between the backends that generated aggregate and window queries found
// (bench/agg-fuzz.ts: GROUP BY / HAVING / aggregates / windows / QUALIFY / DISTINCT / ordered
// LIMIT / UNNEST joins over an inline table of NULLs, ties, NaN, ±inf, -0.0 and empty strings, each
// run on every backend). Expected rows follow BigQuery's documentation, named in each case's rule.

export const generatedAggregateCases: SqlCase[] = [
  {
    name: "UNNEST of STRUCTs: a NULL BOOL member and a TIMESTAMP member read back",
    rule: "BigQuery Query syntax, UNNEST of an array of STRUCTs: one row per element, its fields as columns with their values (a NULL BOOL stays NULL)",
    sql: "select id, b, t, b is null as nb from unnest([struct(1 as id, true as b, timestamp '2024-01-01 00:00:00.5 UTC' as t), struct(2 as id, cast(null as bool) as b, cast(null as timestamp) as t), struct(3 as id, false as b, timestamp '1969-12-31 23:59:59 UTC' as t)]) order by id",
    expect: [
      { id: 1, b: true, t: 1704067200500000, nb: false },
      { id: 2, b: null, t: null, nb: true },
      { id: 3, b: false, t: -1000000, nb: false },
    ],
  },
  {
    name: "PARTITION BY and GROUP BY a BOOL field of an inline table with NULLs",
    rule: "BigQuery Window function calls, PARTITION BY / Query syntax, GROUP BY: NULL is a group of its own",
    sql: "select b, count(*) as n, min(t) as t from unnest([struct(1 as id, true as b, timestamp '2024-01-02 00:00:00 UTC' as t), struct(2 as id, cast(null as bool) as b, timestamp '2024-01-01 00:00:00 UTC' as t), struct(3 as id, cast(null as bool) as b, timestamp '2024-01-03 00:00:00 UTC' as t)]) group by b order by b",
    expect: [
      { b: null, n: 2, t: 1704067200000000 },
      { b: true, n: 1, t: 1704153600000000 },
    ],
  },
  {
    name: "ARRAY_AGG and array literals of FLOAT64 holding NaN and infinities",
    rule: 'BigQuery Aggregate functions, ARRAY_AGG: every non-NULL value is an element, NaN and ±inf included; in a result they are written "NaN", "Infinity", "-Infinity" as a FLOAT64 is (DESIGN.md §4)',
    sql: "select array_agg(x ignore nulls order by x desc) as a, array_agg(x ignore nulls order by x) as b, [cast('nan' as float64), cast('-inf' as float64), 2.5] as c from unnest([1.5, cast('nan' as float64), cast('-inf' as float64), null, cast('inf' as float64), 0.0]) x",
    expect: [
      {
        a: ["Infinity", 1.5, 0, "-Infinity", "NaN"],
        b: ["NaN", "-Infinity", 0, 1.5, "Infinity"],
        c: ["NaN", "-Infinity", 2.5],
      },
    ],
  },
  {
    name: "ARRAY_AGG of a comparison, with DISTINCT, IGNORE NULLS and ORDER BY",
    rule: "BigQuery Aggregate functions, ARRAY_AGG: an ARRAY<BOOL> of the values of a BOOL expression",
    sql: "select array_agg(s = 'a' ignore nulls) as a, array_agg(distinct s is null) as b, array_agg(s like 'a%' ignore nulls order by s desc) as c from unnest(['a', 'b', cast(null as string), 'a']) s",
    expect: [{ a: [false, true, true], b: [false, true], c: [false, true, true] }],
  },
  {
    name: "ARRAY_AGG(DISTINCT …) of FLOAT64 with NaN, ordered and limited",
    rule: "BigQuery Aggregate functions, ARRAY_AGG: DISTINCT with an ORDER BY of the value itself; FLOAT64 order puts NaN before -inf ascending, after it descending (BigQuery Data types, Floating point semantics)",
    sql: "select array_agg(distinct x ignore nulls) as a, array_agg(distinct x * 2 ignore nulls order by x * 2 desc) as b, array_agg(distinct x ignore nulls order by x desc limit 2) as c, array_agg(distinct x ignore nulls order by x limit 2) as d from unnest([1.5, cast('nan' as float64), cast('-inf' as float64), null, cast('inf' as float64), 0.0, 1.5, cast('nan' as float64)]) x",
    expect: [
      {
        a: ["NaN", "-Infinity", 0, 1.5, "Infinity"],
        b: ["Infinity", 3, 0, "-Infinity", "NaN"],
        c: ["Infinity", 1.5],
        d: ["NaN", "-Infinity"],
      },
    ],
  },
  {
    name: "UNNEST of STRUCTs whose later elements are unnamed or NULL",
    rule: "BigQuery Data types, Array type / STRUCT: the elements of an array literal are coerced to one STRUCT type by position, its field names from the first element; a NULL field takes the other elements' type",
    sql: "select g, g + 1 as h, x, s from unnest([struct(1 as g, 2.5 as x, 'a' as s), struct(2, 3.5, 'b'), struct(null as g, null as x, null as s), struct(cast(null as int64), 1.0, '')]) order by g, s",
    expect: [
      { g: null, h: null, x: null, s: null },
      { g: null, h: null, x: 1, s: "" },
      { g: 1, h: 2, x: 2.5, s: "a" },
      { g: 2, h: 3, x: 3.5, s: "b" },
    ],
  },
  {
    name: "a RANGE frame with offsets over a FLOAT64 key",
    rule: "BigQuery Window function calls, RANGE frames: one numeric ORDER BY key, FLOAT64 included; the frame holds the rows whose key is within the offsets",
    sql: "select x, sum(x) over (order by x range between 1 preceding and current row) as s, count(*) over (order by x desc range between 1 preceding and 1 following) as c from unnest([1.0, 1.5, 3.0, cast('inf' as float64), null, 3.5]) x order by x",
    expect: [
      { x: null, s: null, c: 1 },
      { x: 1, s: 1, c: 2 },
      { x: 1.5, s: 2.5, c: 2 },
      { x: 3, s: 3, c: 2 },
      { x: 3.5, s: 6.5, c: 2 },
      { x: "Infinity", s: "Infinity", c: 1 },
    ],
  },
  {
    name: "a STRUCT's TIMESTAMP and DATETIME members go out in their types' wire formats",
    rule: "DESIGN.md §4: the format follows the value's type (TIMESTAMP: unix µs; DATETIME: YYYY-MM-DDTHH:MM:SS[.ffffff]), inside a STRUCT too (DuckDB wrote '2024-01-01 00:00:00.5', PostgreSQL '…T00:00:00.5+00:00', ClickHouse µs)",
    sql: "select r from unnest([struct(timestamp '2024-01-01 00:00:00.5 UTC' as t, datetime '2024-01-03 04:05:06' as dt, datetime '0001-01-01 00:00:00.000001' as dm, date '2024-01-02' as d, cast(null as timestamp) as n)]) r",
    expect: [
      {
        r: {
          t: 1704067200500000,
          dt: "2024-01-03T04:05:06",
          dm: "0001-01-01T00:00:00.000001",
          d: "2024-01-02",
          n: null,
        },
      },
    ],
  },
  {
    name: "ROWS CURRENT ROW alone frames the current row only",
    rule: "BigQuery Window function calls, frame_clause: a frame_start alone means BETWEEN frame_start AND CURRENT ROW",
    sql: "select x, sum(x) over (order by x rows current row) as a from unnest([1, 2, 2, 4]) as x order by x",
    expect: [
      { x: 1, a: 1 },
      { x: 2, a: 2 },
      { x: 2, a: 2 },
      { x: 4, a: 4 },
    ],
  },
  {
    name: "RANGE n PRECEDING alone frames the keys from n below up to the current row's",
    rule: "BigQuery Window function calls, frame_clause: a frame_start alone means BETWEEN frame_start AND CURRENT ROW; RANGE offsets are distances from the ORDER BY key",
    sql: "select x, sum(x) over (order by x range 1 preceding) as a from unnest([1, 2, 2, 4]) as x order by x",
    expect: [
      { x: 1, a: 1 },
      { x: 2, a: 5 },
      { x: 2, a: 5 },
      { x: 4, a: 4 },
    ],
  },
  {
    name: "RANGE UNBOUNDED PRECEDING alone frames up to the current row's last peer",
    rule: "BigQuery Window function calls, frame_clause: a frame_start alone means BETWEEN frame_start AND CURRENT ROW; a RANGE frame's CURRENT ROW takes in the row's peers",
    sql: "select x, sum(x) over (order by x range unbounded preceding) as a from unnest([1, 2, 2, 4]) as x order by x",
    expect: [
      { x: 1, a: 1 },
      { x: 2, a: 5 },
      { x: 2, a: 5 },
      { x: 4, a: 9 },
    ],
  },
  {
    name: "RANGE CURRENT ROW alone frames the current row's peers",
    rule: "BigQuery Window function calls, frame_clause: a frame_start alone means BETWEEN frame_start AND CURRENT ROW; a RANGE frame's CURRENT ROW takes in the row's peers",
    sql: "select x, sum(x) over (order by x range current row) as a from unnest([1, 2, 2, 4]) as x order by x",
    expect: [
      { x: 1, a: 1 },
      { x: 2, a: 4 },
      { x: 2, a: 4 },
      { x: 4, a: 4 },
    ],
  },
  {
    name: "ROWS BETWEEN CURRENT ROW AND CURRENT ROW frames the current row only",
    rule: "BigQuery Window function calls, frame_clause: frame_between with CURRENT ROW at both ends",
    sql: "select x, count(*) over (order by x rows between current row and current row) as n, sum(x) over (partition by x order by x rows between current row and current row) as a from unnest([1, 2, 2, 4]) as x order by x",
    expect: [
      { x: 1, n: 1, a: 1 },
      { x: 2, n: 1, a: 2 },
      { x: 2, n: 1, a: 2 },
      { x: 4, n: 1, a: 4 },
    ],
  },
  {
    name: "an array literal of STRUCTs whose later elements are tuples",
    rule: "BigQuery Data types, Constructing a STRUCT: tuple syntax (expr1, expr2) is a STRUCT; in an array literal it is coerced to the element type by position, its field names from the first element",
    sql: "select a, b, a + 1 as c from unnest([struct(1 as a, 'x' as b), (2, 'y'), (null, cast(null as string))]) order by a",
    expect: [
      { a: null, b: null, c: null },
      { a: 1, b: "x", c: 2 },
      { a: 2, b: "y", c: 3 },
    ],
  },
];
