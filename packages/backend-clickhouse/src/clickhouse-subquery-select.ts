import { forEachIrNode, type Select, type SqlType } from "@qes/core";

/**
 * A select of one table or CTE with a WHERE and a subquery among its columns, its WHERE moved into
 * a derived table of the columns it reads: ClickHouse's decorrelation of a correlated subquery
 * lost the correlated column once the WHERE filtered on another ("can't find correlated column
 * '__table3.project' in current header: …id", a 422 for SQL the other backends answer). The
 * derived table keeps the alias, so every expression reads it unchanged.
 */
export function filteredBelowSubqueries(s: Select): Select {
  const from = s.from;
  if (!from || (from.k !== "table" && from.k !== "cte") || s.joins.length || !s.where.length) return s;
  if (!s.items.some((i) => holdsSubquery(i.expr))) return s;
  const cols = new Map<string, SqlType>();
  forEachIrNode(s, (o) => {
    if (o.k === "col" && o.rel === from.alias && typeof o.col === "string")
      cols.set(o.col, o.type as SqlType);
  });
  const inner: Select = {
    k: "select",
    distinct: false,
    items: [...cols].map(([col, type]) => ({ expr: { k: "col", rel: from.alias, col, type }, name: col })),
    from,
    joins: [],
    where: s.where,
    groupBy: [],
    orderBy: [],
  };
  return { ...s, from: { k: "subquery", query: { ctes: [], body: inner }, alias: from.alias }, where: [] };
}

/** Whether a subquery is somewhere in `e`. */
export function holdsSubquery(e: unknown): boolean {
  let found = false;
  forEachIrNode(e, (o) => {
    found = o.k === "subquery";
    return found;
  });
  return found;
}
