import type { Expr, OrderItem, SqlEmitter, SqlType } from "@qes/core";
import { sortKey } from "./clickhouse-ordered-aggregates.ts";

/** The dialect members this rewrite uses. */
export interface ArraySubqueryEmitter extends SqlEmitter {
  unnestTuples(array: string, arrayType: SqlType, elementType: SqlType, withOffset: boolean): string;
}

type SubqueryExpr = Extract<Expr, { k: "subquery" }>;

/** Aggregates over an array's elements: arrayReduce with `OrNull` (NULL over no elements, as SQL). */
const ARRAY_AGGREGATE: Record<string, string> = {
  SUM: "sumOrNull",
  MIN: "minOrNull",
  MAX: "maxOrNull",
  AVG: "avgOrNull",
  ANY_VALUE: "minOrNull",
  LOGICAL_OR: "maxOrNull",
  LOGICAL_AND: "minOrNull",
};

/**
 * A subquery over the UNNEST of an array (`(SELECT count(*) FROM UNNEST(b.ids))`,
 * `EXISTS (SELECT 1 FROM UNNEST(x) AS d WHERE d > 3)`, `ARRAY(SELECT d FROM UNNEST(x) AS d
 * ORDER BY d)`) written with array functions over the row's own array: ClickHouse cannot read an
 * outer row's columns inside a subquery's FROM. The unnest alias is the lambda parameter, so the
 * subquery's expressions read `alias.value` unchanged. Undefined when the subquery has another shape.
 */
export function arraySubquery(e: ArraySubqueryEmitter, sub: SubqueryExpr): string | undefined {
  const q = sub.query;
  if (q.ctes.length || q.body.k !== "select") return undefined;
  const s = q.body;
  const f = s.from;
  if (f?.k !== "unnest" || s.joins.length || s.groupBy.length || s.having || s.qualify || s.distinct)
    return undefined;
  if (s.offset || s.items.length !== 1) return undefined;
  const item = s.items[0]!.expr;
  const alias = e.quoteIdent(f.alias);
  const lambda = (body: string) => `${alias} -> ${body}`;
  let list = e.unnestTuples(e.expr(f.array), f.array.type, f.elementType, f.withOffset);
  if (s.where.length) list = `arrayFilter(${lambda(s.where.map((w) => e.wrap(w)).join(" AND "))}, ${list})`;
  if (s.orderBy.length) list = sorted(e, list, lambda, s.orderBy);
  if (s.limit) list = `arraySlice(${list}, 1, ${e.expr(s.limit)})`;
  const aggregate = item.k === "call" && !item.over ? item : undefined;
  if (sub.mode === "exists") return `notEmpty(${list})`;
  if (aggregate?.fn === "COUNT" || aggregate?.fn === "COUNTIF") {
    const [x] = aggregate.args;
    if (x && aggregate.agg?.distinct) return undefined;
    const test = aggregate.fn === "COUNTIF" ? e.expr(x!) : x ? `isNotNull(${e.expr(x)})` : undefined;
    return `toInt64(length(${test ? `arrayFilter(${lambda(test)}, ${list})` : list}))`;
  }
  if (aggregate && aggregate.fn in ARRAY_AGGREGATE) {
    if (aggregate.agg?.distinct) return undefined;
    return `arrayReduce('${ARRAY_AGGREGATE[aggregate.fn]}', arrayMap(${lambda(e.expr(aggregate.args[0]!))}, ${list}))`;
  }
  // STRING_AGG(x [, delimiter] [ORDER BY …]) over the elements: the non-NULL values in order,
  // joined; NULL over none (a correlated subquery ClickHouse cannot run otherwise)
  if (aggregate?.fn === "STRING_AGG" && !aggregate.agg?.distinct && aggregate.agg?.limit === undefined) {
    const [x, d] = aggregate.args;
    const order = aggregate.agg?.orderBy ?? [];
    const inOrder = order.length ? sorted(e, list, lambda, order) : list;
    const texts = `arrayMap(v -> assumeNotNull(v), arrayFilter(v -> isNotNull(v), arrayMap(${lambda(e.expr(x!))}, ${inOrder})))`;
    return `if(empty(${texts}), NULL, arrayStringConcat(${texts}, ${d ? e.expr(d) : "','"}))`;
  }
  if (containsAggregate(item)) return undefined;
  const values = `arrayMap(${lambda(e.expr(item))}, ${list})`;
  switch (sub.mode) {
    case "array":
      return values;
    case "in":
      return `${sub.not ? "NOT " : ""}has(${values}, ${e.expr(sub.expr!)})`;
    default:
      return `arrayElementOrNull(${values}, 1)`;
  }
}

/** Sorted by the subquery's ORDER BY keys, each computed from the element (the lambda's alias). */
function sorted(e: SqlEmitter, list: string, lambda: (body: string) => string, order: OrderItem[]): string {
  const keys = order.map((o) => {
    const key = e.expr(o.expr);
    return sortKey(o, key, `arrayMap(${lambda(key)}, ${list})`);
  });
  return `arraySort(${lambda(`tuple(${keys.join(", ")})`)}, ${list})`;
}

const AGGREGATES = new Set([
  "COUNT",
  "COUNTIF",
  "ARRAY_AGG",
  "STRING_AGG",
  "__QUANTILE",
  "APPROX_COUNT_DISTINCT",
  ...Object.keys(ARRAY_AGGREGATE),
]);

function containsAggregate(x: Expr): boolean {
  switch (x.k) {
    case "call":
      return (AGGREGATES.has(x.fn) && !x.over) || x.args.some(containsAggregate);
    case "op":
      return x.args.some(containsAggregate);
    case "case":
      return [x.operand, ...x.whens.flat(), x.else].some((y) => y !== undefined && containsAggregate(y));
    case "cast":
      return containsAggregate(x.expr);
    case "in":
      return containsAggregate(x.expr) || x.list.some(containsAggregate);
    default:
      return false;
  }
}
