import type { Expr, FromItem, Query, Select } from "./ir.ts";

/**
 * Calls `visit` for every SELECT of `query`: its CTEs, set-operation branches, subqueries in FROM
 * and in expressions, at any depth. Walks with an explicit stack: a chain of set operations or a
 * long expression costs no stack frames.
 */
export function forEachSelect(query: Query, visit: (select: Select) => void): void {
  const queries: Query[] = [query];
  const exprs: Expr[] = [];
  const fromItem = (f: FromItem | undefined) => {
    if (f?.k === "subquery") queries.push(f.query);
    if (f?.k === "unnest") exprs.push(f.array);
  };
  while (queries.length || exprs.length) {
    const e = exprs.pop();
    if (e) {
      exprs.push(...childExprs(e));
      if (e.k === "subquery") queries.push(e.query);
      continue;
    }
    const q = queries.pop()!;
    for (const c of q.ctes) queries.push(c.query);
    const b = q.body;
    if (b.k === "setop") {
      queries.push(b.left, b.right);
      exprs.push(...b.orderBy.map((o) => o.expr), ...optional(b.limit, b.offset));
      continue;
    }
    visit(b);
    fromItem(b.from);
    for (const j of b.joins) {
      fromItem(j.item);
      if (j.on) exprs.push(j.on);
    }
    exprs.push(
      ...b.items.map((i) => i.expr),
      ...b.where,
      ...b.groupBy,
      ...b.orderBy.map((o) => o.expr),
      ...optional(b.having, b.qualify, b.limit, b.offset),
    );
  }
}

function optional(...xs: Array<Expr | undefined>): Expr[] {
  return xs.filter((x): x is Expr => x !== undefined);
}

function childExprs(e: Expr): Expr[] {
  switch (e.k) {
    case "call":
      return [
        ...e.args,
        ...(e.agg?.orderBy ?? []).map((o) => o.expr),
        ...(e.over?.partitionBy ?? []),
        ...(e.over?.orderBy ?? []).map((o) => o.expr),
      ];
    case "op":
      return e.args;
    case "case":
      return [...optional(e.operand, e.else), ...e.whens.flat()];
    case "cast":
      return [e.expr];
    case "in":
      return [e.expr, ...e.list];
    case "json":
      return [e.base];
    case "interval":
      return [e.value];
    case "subquery":
      return optional(e.expr);
    default:
      return [];
  }
}

/** Whether an expression calls a window function (OVER), outside any subquery it holds. */
export function hasWindowCall(expr: Expr): boolean {
  const stack: Expr[] = [expr];
  while (stack.length) {
    const e = stack.pop()!;
    if (e.k === "call" && e.over) return true;
    stack.push(...childExprs(e));
  }
  return false;
}

/**
 * Calls `visit` for every object at any depth of an IR value (a query, a select, an expression),
 * parents before children, with an explicit stack (a long expression costs no stack frames). A
 * backend's rewrite that needs every node of a kind, columns or subqueries wherever they sit, uses
 * this instead of a recursion of its own; `visit` returning `true` ends the walk.
 */
export function forEachIrNode(
  root: unknown,
  visit: (node: Readonly<Record<string, unknown>>) => unknown,
): void {
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    const node = value as Record<string, unknown>;
    if (visit(node) === true) return;
    const children = Object.values(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
}
