/**
 * A parenthesised join group on the right of an outer join (`a LEFT JOIN (b CROSS JOIN
 * UNNEST(b.x) AS y) ON a.k = y.k`), read back from the subquery desugaring made of it
 * (`JOIN (SELECT __qes_join_group FROM …)`, parse/desugar-passes.ts). The group is analysed as a
 * FROM clause of its own and emitted as a subquery; its range variables stay visible outside by
 * their names, each column or record field read outside becoming a column of the subquery on
 * demand (as for CTEs), so an unmatched row of the outer join reads NULLs.
 */
import { JOIN_GROUP_MARKER } from "../parse/desugar-passes.ts";
import type { AstNode } from "../parse/parse-sql.ts";
import { fail } from "./analyze-expr.ts";
import { analyzeFrom } from "./analyze-from.ts";
import type { QueryOptions } from "./analyze-query.ts";
import type { CompileContext } from "./compile-context.ts";
import type { Expr, FromItem, Select } from "./ir.ts";
import { DerivedRelation, derivedRoot, type RangeVar, Scope, type Value } from "./scope.ts";

export function isJoinGroup(ast: AstNode | undefined): boolean {
  const cols = ast?.columns;
  if (!Array.isArray(cols) || cols.length !== 1) return false;
  const e = cols[0]?.expr;
  const name = typeof e?.column === "string" ? e.column : e?.column?.expr?.value;
  return e?.type === "column_ref" && !e.table && String(name).toLowerCase() === JOIN_GROUP_MARKER;
}

export function bindJoinGroup(ast: AstNode, scope: Scope, ctx: CompileContext, opts: QueryOptions): FromItem {
  if (ast.where || ast.groupby || ast.having || ast.orderby || ast.limit)
    fail("sql_invalid", "A parenthesised join group holds only FROM items and joins.", ast);
  const select: Select = {
    k: "select",
    distinct: false,
    items: [],
    joins: [],
    where: [],
    groupBy: [],
    orderBy: [],
  };
  // the group sees enclosing queries (correlation), not the left side of its join
  const inner = new Scope(opts.outer);
  analyzeFrom((ast.from ?? []) as AstNode[], select, inner, ctx, opts, {});
  const alias = ctx.alias("g");
  const values: Value[] = [];
  const derived = new DerivedRelation([], [{ select, values }], alias);
  const exported = (value: Value): Value => {
    const index = values.length;
    values.push(value);
    if (value.kind === "record") {
      const rec = value.rec;
      return {
        kind: "record",
        rec: { root: derivedRoot(alias, derived, index), path: [], node: rec.node, repeated: rec.repeated },
      };
    }
    const col = derived.demand(index, "E", (v) => (v as Extract<Value, { kind: "expr" }>).expr);
    const e: Expr = { k: "col", rel: alias, col, type: value.expr.type };
    if ("fromJson" in value.expr && value.expr.fromJson) e.fromJson = true;
    return { kind: "expr", expr: e };
  };
  for (const v of inner.vars) scope.vars.push(exportedVar(v, exported));
  for (const [name, value] of inner.merged) scope.merged.set(name, exported(value));
  return { k: "subquery", query: { ctes: [], body: select }, alias };
}

function exportedVar(v: RangeVar, exported: (value: Value) => Value): RangeVar {
  const memo = new Map<string, Value | undefined>();
  const once = (key: string, make: () => Value | undefined) => {
    if (!memo.has(key)) {
      const value = make();
      memo.set(key, value && exported(value));
    }
    return memo.get(key);
  };
  return {
    name: v.name,
    column: (n) => once(`c:${n}`, () => v.column(n)),
    columnNames: () => v.columnNames(),
    ...(v.star ? { star: (n: string) => once(`s:${n.toLowerCase()}`, () => v.star?.(n)) } : {}),
    ...(v.self ? { self: once("self", () => v.self) } : {}),
    ...(v.starExclude ? { starExclude: v.starExclude } : {}),
    schemaless: v.schemaless,
  };
}
