import type { CallExpr, OrderItem, SqlEmitter } from "@qes/core";

/** Types whose order a negated number keeps: DESC keys of these sort as `-key`. */
const NUMERIC_ORDER = new Set(["INT64", "FLOAT64", "BOOL"]);

/**
 * One sort key of an array sorted in SQL order: a NULL flag first (BigQuery: NULLs first
 * ascending, last descending, unless said), then the value `v`. ClickHouse sorts arrays ascending
 * only, so a descending key is negated, or for other types replaced by minus its rank among
 * `all`, the array of every key value.
 */
export function sortKey(o: OrderItem, v: string, all: string): string {
  const nullsFirst = (o.nulls ?? (o.desc ? "last" : "first")) === "first";
  const t = o.expr.type;
  const s = t.t === "scalar" ? t.s : "STRING";
  // BigQuery orders NaN before -inf ascending (after it descending), next to NULL
  const nan = s === "FLOAT64" ? `, ${o.desc ? "" : "NOT "}isNaN(ifNull(${v}, 0))` : "";
  const flag = `${nullsFirst ? `isNotNull(${v})` : `isNull(${v})`}${nan}`;
  if (!o.desc) return `${flag}, ${v}`;
  if (NUMERIC_ORDER.has(s)) return `${flag}, -toFloat64(${v})`;
  if (s === "TIMESTAMP" || s === "DATETIME") return `${flag}, -toUnixTimestamp64Micro(${v})`;
  return `${flag}, -indexOf(arraySort(arrayDistinct(${all})), ${v})`;
}

/**
 * ARRAY_AGG's array (also STRING_AGG's before joining): ClickHouse has no ORDER BY inside an
 * aggregate and its groupArray skips NULLs, so the value and its sort keys are collected as
 * tuples (never skipped), sorted, then projected. DISTINCT, IGNORE NULLS and LIMIT apply after.
 */
export function orderedArray(e: SqlEmitter, x: string, call: CallExpr): string {
  const order = call.agg?.orderBy ?? [];
  const keys = order.map((o) => e.expr(o.expr));
  // a comparison is UInt8 in ClickHouse: its array would be numbers, not BOOLs
  const t = call.args[0]?.type;
  const value = t?.t === "scalar" && t.s === "BOOL" ? `CAST(${x} AS Nullable(Bool))` : x;
  const collected = `groupArray(tuple(${[value, ...keys].join(", ")}))${e.overOf(call)}`;
  const tuples = call.agg?.ignoreNulls ? `arrayFilter(t -> isNotNull(t.1), ${collected})` : collected;
  const sortKeys = order.map((o, i) => sortKey(o, `t.${i + 2}`, `arrayMap(t -> t.${i + 2}, ${tuples})`));
  const sorted = sortKeys.length ? `arraySort(t -> tuple(${sortKeys.join(", ")}), ${tuples})` : tuples;
  let list = `arrayMap(t -> t.1, ${sorted})`;
  // arrayDistinct drops NULLs; BigQuery's DISTINCT keeps one: the values are compared as tuples
  if (call.agg?.distinct) list = `arrayMap(t -> t.1, arrayDistinct(arrayMap(v -> tuple(v), ${list})))`;
  if (call.agg?.limit !== undefined) list = `arraySlice(${list}, 1, ${call.agg.limit})`;
  return list;
}
