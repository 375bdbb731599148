/**
 * Differential testing of the compiler with generated aggregate and window queries — the sibling
 * of expr-fuzz.ts. A seeded generator writes GROUP BY / HAVING / aggregate / window / QUALIFY /
 * DISTINCT / ORDER BY … LIMIT / UNNEST-join queries over one small inline table (NULLs, duplicate
 * values, ties, NaN and ±inf, -0.0, empty strings), runs each on DuckDB, PostgreSQL and ClickHouse
 * (test/support/backends.ts) and compares the answers: in order where every output column is
 * ordered, else as multisets. Classes as in expr-fuzz.ts: `internal` (a 5xx-class error: always a
 * bug), `valueDiff`, `errorVsAnswer`.
 *
 *   node --import tsx bench/agg-fuzz.ts [--seed 1] [--count 200] [--sql 'select …']
 *
 * Two FLOAT64 answers agree at 12 significant digits.
 */
import { parseArgs } from "node:util";
import { mulberry32 } from "../test/support/prng.ts";
import {
  classify,
  diffCounters,
  normalised,
  openEngines,
  runEverywhere,
  summary as summaryOf,
} from "./lib/engine-diff.ts";

const { values: opts } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    count: { type: "string", default: "200" },
    sql: { type: "string" },
    quiet: { type: "boolean", default: false },
    /** print the queries every backend refused too */
    refused: { type: "boolean", default: false },
  },
});
const COUNT = Number(opts.count);
const rnd = mulberry32(Number(opts.seed));
const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rnd() * xs.length)]!;
const chance = (p: number) => rnd() < p;

// id: unique; g: group key with NULL; i: INT64 with duplicates and NULL; x: FLOAT64 with NaN, ±inf,
// -0.0, NULL, ties; s: STRING with '', NULL, duplicates; b: BOOL with NULL; t: TIMESTAMP with ties.
const NI = "CAST(NULL AS INT64)";
const NF = "CAST(NULL AS FLOAT64)";
const NS = "CAST(NULL AS STRING)";
const NB = "CAST(NULL AS BOOL)";
const NT = "CAST(NULL AS TIMESTAMP)";
const ROWS: [string, string, string, string, string, string, string][] = [
  ["1", "1", "3", "2.5", "'a'", "TRUE", "TIMESTAMP '2024-01-01 00:00:00 UTC'"],
  ["2", "1", "3", "-0.0", "'b'", "FALSE", "TIMESTAMP '2024-01-01 00:00:00 UTC'"],
  ["3", "2", NI, "CAST('nan' AS FLOAT64)", "''", NB, "TIMESTAMP '2024-01-02 12:00:00 UTC'"],
  ["4", "2", "-7", "CAST('inf' AS FLOAT64)", "'a'", "TRUE", NT],
  ["5", NI, "0", NF, NS, "TRUE", "TIMESTAMP '2023-12-31 23:59:59.5 UTC'"],
  ["6", "3", "10", "2.5", "'c,d'", "FALSE", "TIMESTAMP '2024-01-02 12:00:00 UTC'"],
  ["7", "3", "-7", "CAST('-inf' AS FLOAT64)", "'b'", NB, "TIMESTAMP '2024-03-01 00:00:00 UTC'"],
  ["8", NI, "5", "0.0", "'a'", "TRUE", "TIMESTAMP '2024-01-01 00:00:00 UTC'"],
  ["9", "1", NI, "1e-3", "''", "FALSE", NT],
];
const COLS = ["id", "g", "i", "x", "s", "b", "t"];
const TABLE = `UNNEST([${ROWS.map((r) => `STRUCT(${r.map((v, k) => `${v} AS ${COLS[k]}`).join(", ")})`).join(", ")}])`;

type T = "INT64" | "FLOAT64" | "STRING" | "BOOL" | "TIMESTAMP";
const COL: Record<T, string[]> = {
  INT64: ["i", "g", "id", "i * 2", "ABS(i)", "IFNULL(i, g)"],
  FLOAT64: ["x", "x * 2", "x + i", "CAST(i AS FLOAT64)", "IF(i > 1, x, -x)"],
  STRING: ["s", "UPPER(s)", "CONCAT(s, 'z')", "CAST(g AS STRING)"],
  // no comparison of x: `<`/`>` with NaN keep each engine's answer (see the report of the first run)
  BOOL: ["b", "i > 0", "i < 3", "s = 'a'", "b IS NULL"],
  TIMESTAMP: ["t", "TIMESTAMP_TRUNC(t, DAY)"],
};
const ORDERABLE: T[] = ["INT64", "FLOAT64", "STRING", "BOOL", "TIMESTAMP"];
const col = (t: T) => pick(COL[t]);
const dir = () => pick(["", " DESC", " ASC", " DESC NULLS LAST", " ASC NULLS LAST", " NULLS FIRST"]);

/** an aggregate call (no window) */
function agg(): string {
  const t = pick(ORDERABLE);
  const c = col(t);
  return pick<() => string>([
    () => "COUNT(*)",
    () => `COUNT(${c})`,
    () => `COUNT(DISTINCT ${c})`,
    () => `COUNTIF(${col("BOOL")})`,
    () => `SUM(${col(pick(["INT64", "FLOAT64"] as T[]))})`,
    () => `SUM(DISTINCT ${col(pick(["INT64", "FLOAT64"] as T[]))})`,
    () => `AVG(${col(pick(["INT64", "FLOAT64"] as T[]))})`,
    () => `AVG(DISTINCT ${col("INT64")})`,
    () => `MIN(${c})`,
    () => `MAX(${c})`,
    () => `MAX(DISTINCT ${c})`,
    () => `ANY_VALUE(${c})`,
    () => `LOGICAL_AND(${col("BOOL")})`,
    () => `LOGICAL_OR(${col("BOOL")})`,
    () => `APPROX_COUNT_DISTINCT(${c})`,
    () =>
      `APPROX_QUANTILES(${col(pick(["INT64", "FLOAT64", "STRING"] as T[]))}, ${pick(["2", "4", "1"])})[OFFSET(${pick(["0", "1"])})]`,
    () => `ARRAY_LENGTH(APPROX_QUANTILES(${col("INT64")}, 3))`,
    () => `ARRAY_AGG(${c} IGNORE NULLS)`,
    () => `ARRAY_AGG(${c} IGNORE NULLS ORDER BY id${dir()})`,
    () => `ARRAY_AGG(${c} IGNORE NULLS ORDER BY ${c}${dir()}, id LIMIT ${pick(["1", "2", "3"])})`,
    () => `ARRAY_AGG(DISTINCT ${c} IGNORE NULLS)`,
    () => `ARRAY_AGG(IFNULL(${col("INT64")}, -1) ORDER BY id)`,
    () => `ARRAY_AGG(${c})`,
    () => `STRING_AGG(${col("STRING")})`,
    () => `STRING_AGG(${col("STRING")}, ${pick(["'|'", "''", "', '"])} ORDER BY id${dir()})`,
    () => `STRING_AGG(DISTINCT ${col("STRING")}, '|')`,
    () => `STRING_AGG(${col("STRING")}, '-' ORDER BY ${col("STRING")}${dir()}, id LIMIT 2)`,
    () => `ARRAY_TO_STRING(ARRAY_AGG(${col("STRING")} IGNORE NULLS ORDER BY id), ',')`,
  ])();
}

const PART = () => (chance(0.6) ? `PARTITION BY ${pick(["g", "b", "s = 'a'", "g, b"])} ` : "");
const WORD = () => `ORDER BY ${col(pick(ORDERABLE))}${dir()}`;
function frame(numeric: boolean): string {
  const b = pick([
    "UNBOUNDED PRECEDING",
    "1 PRECEDING",
    "2 PRECEDING",
    "CURRENT ROW",
    "1 FOLLOWING",
    "UNBOUNDED FOLLOWING",
  ]);
  const kind = numeric && chance(0.4) ? "RANGE" : "ROWS";
  const lo = pick(["UNBOUNDED PRECEDING", "1 PRECEDING", "CURRENT ROW", "2 PRECEDING"]);
  const ends: Record<string, number> = {
    "UNBOUNDED PRECEDING": 0,
    "2 PRECEDING": 1,
    "1 PRECEDING": 2,
    "CURRENT ROW": 3,
    "1 FOLLOWING": 4,
    "UNBOUNDED FOLLOWING": 5,
  };
  const hi = ends[b]! >= ends[lo]! && b !== "UNBOUNDED PRECEDING" ? b : "CURRENT ROW";
  return chance(0.2) ? ` ${kind} ${lo}` : ` ${kind} BETWEEN ${lo} AND ${hi}`;
}

/** a window call; `unique` orders by id last so the numbering is defined */
function win(): string {
  const p = PART();
  const o = () => `${WORD()}, id`;
  // a ROWS frame over tied rows is not defined: id completes the order; RANGE needs one key
  const ordNum = () => {
    const f = chance(0.7) ? frame(true) : "";
    const key = `ORDER BY ${pick(["i", "x", "g", "id"])}${pick(["", " DESC"])}`;
    return `${key}${f.startsWith(" ROWS") ? ", id" : ""}${f}`;
  };
  return pick<() => string>([
    () => `ROW_NUMBER() OVER (${p}${o()})`,
    () => `RANK() OVER (${p}${WORD()})`,
    () => `DENSE_RANK() OVER (${p}${WORD()})`,
    () => `PERCENT_RANK() OVER (${p}${WORD()})`,
    () => `CUME_DIST() OVER (${p}${WORD()})`,
    () => `NTILE(${pick(["1", "2", "3", "4", "20"])}) OVER (${p}${o()})`,
    () => `LAG(${col(pick(ORDERABLE))}) OVER (${p}${o()})`,
    () =>
      `LAG(${col("INT64")}, ${pick(["0", "1", "2", "5"])}, ${pick(["-1", "NULL", "100"])}) OVER (${p}${o()})`,
    () => `LEAD(${col(pick(ORDERABLE))}, ${pick(["1", "2"])}) OVER (${p}${o()})`,
    () => `FIRST_VALUE(${col(pick(ORDERABLE))}) OVER (${p}${o()}${chance(0.5) ? frame(false) : ""})`,
    () => `LAST_VALUE(${col(pick(ORDERABLE))}) OVER (${p}${o()}${chance(0.7) ? frame(false) : ""})`,
    () =>
      `NTH_VALUE(${col(pick(ORDERABLE))}, ${pick(["1", "2", "3"])}) OVER (${p}${o()}${chance(0.7) ? frame(false) : ""})`,
    () => `FIRST_VALUE(${col(pick(ORDERABLE))} IGNORE NULLS) OVER (${p}${o()}${frame(false)})`,
    () => `LAST_VALUE(${col(pick(ORDERABLE))} IGNORE NULLS) OVER (${p}${o()}${frame(false)})`,
    () => `COUNT(*) OVER (${p})`,
    () => `COUNT(${col(pick(ORDERABLE))}) OVER (${p}${ordNum()})`,
    () => `SUM(${col(pick(["INT64", "FLOAT64"] as T[]))}) OVER (${p}${ordNum()})`,
    () => `SUM(i) OVER (${p}${o()}${frame(false)})`,
    () => `AVG(${col(pick(["INT64", "FLOAT64"] as T[]))}) OVER (${p}${ordNum()})`,
    () => `MIN(${col(pick(ORDERABLE))}) OVER (${p}${ordNum()})`,
    () => `MAX(${col(pick(ORDERABLE))}) OVER (${p})`,
    () => `COUNTIF(${col("BOOL")}) OVER (${p}${o()}${frame(false)})`,
    () => `LOGICAL_OR(${col("BOOL")}) OVER (${p})`,
    () => `ARRAY_AGG(${col("INT64")} IGNORE NULLS) OVER (${p}${o()}${frame(false)})`,
    () => `STRING_AGG(${col("STRING")}, ',') OVER (${p}${o()}${frame(false)})`,
  ])();
}

const pred = (a: string) => `${a} ${pick([">", ">=", "<", "=", "!="])} ${pick(["0", "1", "2", "3"])}`;

/** one query and whether its rows come in a defined order */
function query(): { sql: string; ordered: boolean } {
  const shape = pick([
    "group",
    "group",
    "whole",
    "window",
    "window",
    "qualify",
    "distinct",
    "limit",
    "unnest",
    "cte",
  ]);
  if (shape === "group") {
    const keys = pick([["g"], ["b"], ["s"], ["g", "b"], ["IFNULL(s, 'n')"], ["TIMESTAMP_TRUNC(t, DAY)"]]);
    const names = keys.map((_k, j) => `k${j}`);
    const aggs = Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, j) => `${agg()} AS a${j}`);
    const having = chance(0.3)
      ? ` HAVING ${pred(pick(["COUNT(*)", "SUM(i)", "COUNT(DISTINCT s)", "MAX(id)"]))}`
      : "";
    return {
      sql: `SELECT ${keys.map((k, j) => `${k} AS ${names[j]}`).join(", ")}, ${aggs.join(", ")} FROM ${TABLE} GROUP BY ${names.join(", ")}${having} ORDER BY ${names.join(", ")}`,
      ordered: true,
    };
  }
  if (shape === "whole") {
    const aggs = Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, j) => `${agg()} AS a${j}`);
    const where = chance(0.3) ? ` WHERE ${pick(["FALSE", "g IS NULL", "i > 0", "s = ''", "id > 100"])}` : "";
    return { sql: `SELECT ${aggs.join(", ")} FROM ${TABLE}${where}`, ordered: false };
  }
  if (shape === "window" || shape === "qualify") {
    const ws = Array.from({ length: 1 + Math.floor(rnd() * 2) }, (_, j) => `${win()} AS w${j}`);
    const q = shape === "qualify" ? ` QUALIFY ${pred(win())}` : "";
    return { sql: `SELECT id, ${ws.join(", ")} FROM ${TABLE}${q} ORDER BY id`, ordered: true };
  }
  if (shape === "distinct") {
    const cs = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => col(pick(ORDERABLE)));
    const named = cs.map((c, j) => `${c} AS c${j}`);
    const lim = chance(0.4) ? ` LIMIT ${pick(["1", "2", "3"])}` : "";
    const order = chance(0.7) || lim ? ` ORDER BY ${cs.map((_, j) => `c${j}${dir()}`).join(", ")}` : "";
    return { sql: `SELECT DISTINCT ${named.join(", ")} FROM ${TABLE}${order}${lim}`, ordered: order !== "" };
  }
  if (shape === "limit") {
    const k = col(pick(ORDERABLE));
    return {
      sql: `SELECT id, ${k} AS k FROM ${TABLE} ORDER BY ${k}${dir()}${chance(0.5) ? ", id" : ""} LIMIT ${pick(["1", "2", "3", "5"])}${chance(0.3) ? " OFFSET 1" : ""}`,
      ordered: true,
    };
  }
  if (shape === "unnest") {
    const e = pick(["SPLIT(s, ',')", "[i, g]", "[x]", "SPLIT(IFNULL(s, ''), '')"]);
    const a = pick([
      "COUNT(*)",
      "COUNT(p)",
      "COUNT(DISTINCT p)",
      "MAX(p)",
      "ARRAY_AGG(p IGNORE NULLS ORDER BY id, off)",
      "STRING_AGG(CAST(p AS STRING), '|' ORDER BY id DESC, off)",
      "MIN(off)",
    ]);
    const join = pick(["CROSS JOIN", "LEFT JOIN", ","]);
    const on = join === "LEFT JOIN" ? " ON TRUE" : "";
    return {
      sql: `SELECT g, ${a} AS a FROM ${TABLE} ${join} UNNEST(${e}) AS p WITH OFFSET AS off${on} GROUP BY g ORDER BY g`,
      ordered: true,
    };
  }
  // cte: aggregate over a windowed CTE, or a window over an aggregated one
  if (chance(0.5))
    return {
      sql: `WITH w AS (SELECT id, g, ${win()} AS w FROM ${TABLE}) SELECT g, ${pick(["SUM(w)", "MAX(w)", "COUNT(DISTINCT w)", "MIN(w)"])} AS a FROM w GROUP BY g ORDER BY g`,
      ordered: true,
    };
  return {
    sql: `WITH a AS (SELECT g, ${agg()} AS a, COUNT(*) AS n FROM ${TABLE} GROUP BY g) SELECT g, n, ${pick(["RANK() OVER (ORDER BY n DESC)", "SUM(n) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)", "LAG(n) OVER (ORDER BY g)", "ROW_NUMBER() OVER (ORDER BY n, g)", "CUME_DIST() OVER (ORDER BY n)"])} AS r FROM a ORDER BY g`,
    ordered: true,
  };
}

const { backends, names, dispose } = await openEngines();
const stats = diffCounters();
const allErrors: Record<string, number> = {};
for (let i = 0; i < COUNT; i++) {
  const q = opts.sql ? { sql: opts.sql, ordered: /order by/i.test(opts.sql) } : query();
  stats.run!++;
  const res = await runEverywhere(backends, q.sql, (rows) => {
    const texts = rows.map((r) => JSON.stringify(normalised(r)));
    if (!q.ordered) texts.sort();
    return `[${texts.join(",")}]`;
  });
  const summary = summaryOf(names, res);
  const cls = classify(res);
  stats[cls]!++;
  if (cls === "allError") {
    const r = res[0] as { code: string; msg: string };
    const key = `${r.code}: ${r.msg.slice(0, 80)}`;
    allErrors[key] = (allErrors[key] ?? 0) + 1;
  }
  if (cls !== "agree" && (cls !== "allError" || opts.refused) && !opts.quiet)
    console.log(`[${cls}] #${i} ${q.sql.replace(TABLE, "T")}\n   ${summary}`);
  else if (opts.sql) console.log(`[${cls}]\n   ${summary}`);
}
console.log(JSON.stringify(stats));
console.log(JSON.stringify(allErrors, null, 1));
await dispose();
process.exit(0);
