import type { SqlCase } from "./case.ts";

// Gaps between qes and BigQuery's documented behaviour found by cross-engine comparison: each
// case is a query some or all backends answered otherwise than BigQuery documents (or refused
// where BigQuery answers); the expected rows are BigQuery's.

/** five rows ordered by `o`, `x` NULL at 1 and 3 */
const GAPPY = `unnest([struct(1 as o, cast(null as int64) as x), struct(2 as o, 10 as x), struct(3 as o, cast(null as int64) as x), struct(4 as o, 20 as x), struct(5 as o, 30 as x)]) as r`;

export const documentedGapCases: SqlCase[] = [
  // ---------------------------------------------------------------- navigation functions
  {
    name: "FIRST_VALUE / LAST_VALUE / NTH_VALUE with IGNORE NULLS skip NULL values of the frame",
    rule: "BigQuery navigation functions: FIRST_VALUE(x [{RESPECT | IGNORE} NULLS]), LAST_VALUE, NTH_VALUE(x, n …); IGNORE NULLS leaves NULL values out of the frame (every backend refused the syntax)",
    sql: `select o, first_value(x ignore nulls) over (order by o) as f, last_value(x ignore nulls) over (order by o) as l, nth_value(x, 2 ignore nulls) over (order by o) as n2, first_value(x respect nulls) over (order by o) as fr from ${GAPPY} order by o`,
    expect: [
      { o: 1, f: null, l: null, n2: null, fr: null },
      { o: 2, f: 10, l: 10, n2: null, fr: null },
      { o: 3, f: 10, l: 10, n2: null, fr: null },
      { o: 4, f: 10, l: 20, n2: 20, fr: null },
      { o: 5, f: 10, l: 30, n2: 20, fr: null },
    ],
  },
  {
    name: "FIRST_VALUE / LAST_VALUE IGNORE NULLS within ROWS frames that hold only NULLs are NULL",
    rule: "BigQuery navigation functions: the value of the frame's first (last) non-NULL row, NULL when it has none",
    sql: `select o, first_value(x ignore nulls) over (order by o rows between 1 following and unbounded following) as f, last_value(x ignore nulls) over (order by o rows between unbounded preceding and 1 preceding) as l, nth_value(x, 3 ignore nulls) over (order by o rows between unbounded preceding and unbounded following) as n3 from ${GAPPY} order by o`,
    expect: [
      { o: 1, f: 10, l: null, n3: 30 },
      { o: 2, f: 20, l: null, n3: 30 },
      { o: 3, f: 20, l: 10, n3: 30 },
      { o: 4, f: 30, l: 10, n3: 30 },
      { o: 5, f: null, l: 20, n3: 30 },
    ],
  },
  {
    name: "NTH_VALUE respects NULLs by default and is NULL past the frame",
    rule: "BigQuery NTH_VALUE: the value at the n-th row of the frame (NULL there too), NULL when the frame has fewer rows",
    sql: `select o, nth_value(x, 2) over (order by o) as n2, nth_value(x, 3) over (order by o) as n3, nth_value(x, 9223372036854775807) over (order by o) as far from ${GAPPY} order by o`,
    expect: [
      { o: 1, n2: null, n3: null, far: null },
      { o: 2, n2: 10, n3: null, far: null },
      { o: 3, n2: 10, n3: null, far: null },
      { o: 4, n2: 10, n3: null, far: null },
      { o: 5, n2: 10, n3: null, far: null },
    ],
  },
  {
    name: "NTH_VALUE refuses a row number below 1",
    rule: "BigQuery NTH_VALUE: constant_integer_expression must be at least 1",
    sql: `select nth_value(x, 0) over (order by o) as n from ${GAPPY}`,
    expect: { error: "sql_invalid", message: /row number must be positive/ },
  },
];
