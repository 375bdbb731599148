import type { AstNode } from "../parse/parse-sql.ts";
import { fail } from "./analyze-expr.ts";
import type { Expr, Select } from "./ir.ts";
import type { DerivedOutput, Value } from "./scope.ts";

/**
 * In an aggregating SELECT every output, HAVING, QUALIFY and ORDER BY expression must be built
 * from grouped expressions and aggregates (BigQuery refuses the rest; so do we, before any engine).
 */
export function checkGrouping(select: Select, values: Value[], outputs: DerivedOutput[], ast: AstNode): void {
  const groups = new Set(select.groupBy.map(exprKey));
  values.forEach((v, i) => {
    if (v.kind === "record") {
      fail(
        "sql_invalid",
        `Column ${outputs[i]!.name} is a record; it can be neither grouped nor aggregated.`,
        ast,
      );
    }
  });
  const check = (e: Expr, where: string) => {
    // Physical names (f7, c0) mean nothing to the author: name the clause and the output instead.
    if (ungrouped(e, groups)) {
      fail("sql_invalid", `${where} reads a column that is neither grouped nor aggregated.`, ast);
    }
  };
  for (const [i, item] of select.items.entries()) {
    const name = outputs[Number(item.name.slice(1))]?.name;
    check(item.expr, `SELECT list item ${i + 1}${name ? ` (${name})` : ""}`);
  }
  if (select.having) check(select.having, "HAVING");
  if (select.qualify) check(select.qualify, "QUALIFY");
  for (const o of select.orderBy) check(o.expr, "ORDER BY");
}

export function exprKey(e: Expr): string {
  // where a call is written (`at`) does not make it another expression
  return JSON.stringify(e, (k, v) => (k === "at" ? undefined : typeof v === "bigint" ? `${v}n` : v));
}

/** The first column reference of `e` outside aggregates and grouped expressions, if any. */
export function ungrouped(e: Expr, groups: Set<string>): Expr | undefined {
  if (groups.has(exprKey(e))) return undefined;
  switch (e.k) {
    case "col":
      return e;
    case "json":
      return ungrouped(e.base, groups);
    case "call":
      if (e.agg && !e.over) return undefined;
      for (const a of e.args) {
        const bad = ungrouped(a, groups);
        if (bad) return bad;
      }
      for (const p of [...(e.over?.partitionBy ?? []), ...(e.over?.orderBy ?? []).map((o) => o.expr)]) {
        const bad = ungrouped(p, groups);
        if (bad) return bad;
      }
      return undefined;
    case "op":
      for (const a of e.args) {
        const bad = ungrouped(a, groups);
        if (bad) return bad;
      }
      return undefined;
    case "case":
      for (const x of [e.operand, ...e.whens.flat(), e.else]) {
        const bad = x ? ungrouped(x, groups) : undefined;
        if (bad) return bad;
      }
      return undefined;
    case "cast":
      return ungrouped(e.expr, groups);
    case "in":
      for (const x of [e.expr, ...e.list]) {
        const bad = ungrouped(x, groups);
        if (bad) return bad;
      }
      return undefined;
    case "interval":
      return ungrouped(e.value, groups);
    case "subquery":
      return e.expr ? ungrouped(e.expr, groups) : undefined;
    default:
      return undefined;
  }
}

export function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case "call":
      return (!!e.agg && !e.over) || e.args.some(hasAggregate);
    case "op":
      return e.args.some(hasAggregate);
    case "case":
      return (
        (!!e.operand && hasAggregate(e.operand)) ||
        e.whens.some(([a, b]) => hasAggregate(a) || hasAggregate(b)) ||
        (!!e.else && hasAggregate(e.else))
      );
    case "cast":
      return hasAggregate(e.expr);
    case "in":
      return hasAggregate(e.expr) || e.list.some(hasAggregate);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// FROM
