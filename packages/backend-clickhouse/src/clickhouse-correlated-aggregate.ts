import { type Expr, forEachIrNode, lookupFunction, type Query, type SqlEmitter } from "@qes/core";

type SubqueryExpr = Extract<Expr, { k: "subquery" }>;

/** Aggregates that are 0 over no rows; every other aggregate is NULL there (BigQuery). */
const ZERO_OVER_NO_ROWS = new Set(["COUNT", "COUNTIF", "APPROX_COUNT_DISTINCT"]);

/**
 * A correlated scalar subquery whose one value aggregates without GROUP BY (`(SELECT count(*) FROM
 * p WHERE p.k = t.k)`), written so that an outer row no inner row matches gets the aggregate over
 * no rows — 0 for COUNT — as in BigQuery, DuckDB and PostgreSQL. ClickHouse decorrelates such a
 * subquery into an aggregation joined on the correlated columns, and an outer row without a
 * group got NULL. The value is selected as a one-element array (`[count()]`): a row without a
 * group gets the array's default, `[]`, which no group gives, and then the value over no rows is
 * computed from the item with its aggregates replaced by their empty values. Undefined when the
 * subquery has another shape (a GROUP BY or HAVING may give no row, which is NULL), is not
 * correlated, or aggregates into an array.
 */
export function correlatedAggregateSubquery(
  e: SqlEmitter,
  sub: SubqueryExpr,
  emitQuery: (q: Query) => string,
): string | undefined {
  if (sub.mode !== "scalar") return undefined;
  const q = sub.query;
  if (q.body.k !== "select") return undefined;
  const s = q.body;
  if (!s.from || s.groupBy.length || s.having || s.qualify || s.distinct || s.offset || s.items.length !== 1)
    return undefined;
  if (s.limit && !(s.limit.k === "lit" && Number(s.limit.value) >= 1)) return undefined;
  const item = s.items[0]!;
  if (item.expr.type.t !== "scalar") return undefined;
  const empty = overNoRows(item.expr);
  if (empty === undefined || empty === item.expr || !isCorrelated(q)) return undefined;
  const listed: Expr = {
    k: "call",
    fn: "__ARRAY",
    args: [item.expr],
    type: { t: "array", element: item.expr.type.s, native: true },
  };
  const values = `(${emitQuery({ ...q, body: { ...s, items: [{ ...item, expr: listed }] } })})`;
  return `if(empty(${values}), ${e.expr(empty)}, arrayElement(${values}, 1))`;
}

/**
 * `x` as it is over no rows: each aggregate replaced by its value there. `x` itself when it holds
 * no aggregate; undefined when an aggregate there is not a scalar (ARRAY_AGG, APPROX_QUANTILES).
 */
function overNoRows(x: Expr): Expr | undefined {
  if (x.k === "call" && !x.over && lookupFunction(x.fn)?.kind === "aggregate") {
    if (x.type.t !== "scalar") return undefined;
    return ZERO_OVER_NO_ROWS.has(x.fn)
      ? { k: "lit", value: 0, type: x.type }
      : { k: "lit", value: null, type: x.type };
  }
  if (x.k === "call" && x.fn === "__QUANTILE") return undefined;
  const parts = (xs: Expr[]) => {
    const out = xs.map(overNoRows);
    return out.some((y) => y === undefined) ? undefined : (out as Expr[]);
  };
  switch (x.k) {
    case "call":
    case "op": {
      const args = parts(x.args);
      if (!args) return undefined;
      return args.every((a, i) => a === x.args[i]) ? x : { ...x, args };
    }
    case "cast": {
      const inner = overNoRows(x.expr);
      if (!inner) return undefined;
      return inner === x.expr ? x : { ...x, expr: inner };
    }
    case "case": {
      const operand = x.operand ? overNoRows(x.operand) : undefined;
      if (x.operand && !operand) return undefined;
      const whens = x.whens.map(([w, t]) => [overNoRows(w), overNoRows(t)] as const);
      if (whens.some(([w, t]) => !w || !t)) return undefined;
      const otherwise = x.else ? overNoRows(x.else) : undefined;
      if (x.else && !otherwise) return undefined;
      const same =
        operand === x.operand &&
        otherwise === x.else &&
        whens.every(([w, t], i) => w === x.whens[i]![0] && t === x.whens[i]![1]);
      if (same) return x;
      return {
        ...x,
        ...(operand ? { operand } : {}),
        whens: whens.map(([w, t]) => [w!, t!] as [Expr, Expr]),
        ...(otherwise ? { else: otherwise } : {}),
      };
    }
    case "in": {
      const expr = overNoRows(x.expr);
      const list = parts(x.list);
      if (!expr || !list) return undefined;
      return expr === x.expr && list.every((a, i) => a === x.list[i]) ? x : { ...x, expr, list };
    }
    // a nested subquery is its own query: what it reads of this one is not an aggregate here
    default:
      return x;
  }
}

/** Whether the query reads a column of a relation it does not define itself (an outer one). */
function isCorrelated(q: Query): boolean {
  const defined = new Set<string>();
  const read = new Set<string>();
  forEachIrNode(q, (o) => {
    if (o.k === "col" && typeof o.rel === "string") read.add(o.rel);
    if (
      (o.k === "table" || o.k === "cte" || o.k === "subquery" || o.k === "unnest") &&
      typeof o.alias === "string"
    )
      defined.add(o.alias);
  });
  for (const rel of read) if (!defined.has(rel)) return true;
  return false;
}
