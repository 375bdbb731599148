/**
 * Special forms: calls the analyser rewrites into other calls before any dialect sees them, each
 * in one place with one validation. Catalogue functions among them are listed in
 * SPECIAL_FORM_NAMES (catalogue/functions.ts); this table must have a rewrite for each.
 */
import { lookupFunction, type SpecialFormName } from "../catalogue/functions.ts";
import type { AstNode } from "../parse/parse-sql.ts";
import { analyzeCondition, analyzeExpr, checkZoneArg, type ExprEnv, fail } from "./analyze-expr.ts";
import { analyzeSubquery } from "./analyze-literals.ts";
import { isNullLiteral, typedNull } from "./coerce.ts";
import type { Expr } from "./ir.ts";
import { BOOL, INT64, type SqlType, typeName } from "./sql-type.ts";

/** Rewrites one call node; `node.args.value` holds its arguments. */
export type SpecialForm = (node: AstNode, env: ExprEnv) => Expr;

/** Most quantiles APPROX_QUANTILES may ask for: each is one aggregate over the group. */
export const MAX_QUANTILES = 1000;

/**
 * APPROX_QUANTILES(x, n): n+1 exact quantiles (DESIGN.md §3), the k-th being the value at rank
 * ceil(k·count/n) among the non-NULL values (rank 1 for k = 0). n is an integer literal from 1 to
 * MAX_QUANTILES. The one validation both `APPROX_QUANTILES(x, n)` and
 * `APPROX_QUANTILES(x, n)[OFFSET(k)]` go through.
 */
export function approxQuantiles(node: AstNode, env: ExprEnv): { x: Expr; n: number } {
  checkAggregateClause("APPROX_QUANTILES", env, node);
  const [xNode, nNode] = (node.args?.value ?? []) as AstNode[];
  if (!xNode || nNode?.type !== "number" || (node.args?.value ?? []).length !== 2) {
    return fail("sql_invalid", "APPROX_QUANTILES needs a value and an integer number of quantiles.", node);
  }
  const n = Number(nNode.value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_QUANTILES)
    fail("sql_invalid", `APPROX_QUANTILES needs 1 to ${MAX_QUANTILES} quantiles, got ${nNode.value}.`, nNode);
  const x = analyzeExpr(xNode, { ...env, clause: "select" });
  if (x.type.t !== "scalar" && x.type.t !== "null")
    fail("sql_invalid", `APPROX_QUANTILES of ${typeName(x.type)} is not supported.`, node);
  return { x, n };
}

/** The k-th of n quantiles of x: one `__QUANTILE` aggregate. */
export function quantileCall(x: Expr, k: number, n: number): Expr {
  return {
    k: "call",
    fn: "__QUANTILE",
    args: [x, { k: "lit", value: k, type: INT64 }, { k: "lit", value: n, type: INT64 }],
    type: x.type,
    agg: {},
  };
}

/** `APPROX_QUANTILES(x, n)[OFFSET(k)]`: the k-th quantile alone, or NULL for SAFE_ out of range. */
export function approxQuantileAt(
  node: AstNode,
  env: ExprEnv,
  k: number,
  safe: boolean,
  indexNode: AstNode,
): Expr {
  const { x, n } = approxQuantiles(node, env);
  if (k < 0 || k > n) {
    if (safe) return { k: "lit", value: null, type: x.type };
    fail(
      "sql_invalid",
      `Quantile index ${k} is out of range: APPROX_QUANTILES(…, ${n}) has ${n + 1} values.`,
      indexNode,
    );
  }
  return quantileCall(x, k, n);
}

/** Aggregates are refused in WHERE, GROUP BY, ON and FROM. */
export function checkAggregateClause(name: string, env: ExprEnv, node: AstNode): void {
  if (env.clause === "where" || env.clause === "group" || env.clause === "on" || env.clause === "from") {
    fail("sql_invalid", `Aggregate function ${name} is not allowed in ${env.clause.toUpperCase()}.`, node);
  }
}

function args(node: AstNode): AstNode[] {
  return (node.args?.value ?? []) as AstNode[];
}

/** CURRENT_DATE([zone]) / CURRENT_DATETIME([zone]): the request's one instant, in a zone. */
function currentIn(fn: "DATE" | "DATETIME"): SpecialForm {
  return (node, env) => {
    const zone = args(node).map((a) => analyzeExpr(a, env));
    for (const [i, z] of zone.entries()) checkZoneArg(z, args(node)[i]!, env);
    const spec = lookupFunction(`CURRENT_${fn}`)!;
    if (zone.length > spec.maxArgs)
      fail("sql_invalid", `CURRENT_${fn} takes 0 to ${spec.maxArgs} arguments, got ${zone.length}.`, node);
    const type: SqlType = { t: "scalar", s: fn };
    // in a zone that is NULL: NULL, as BigQuery's (the engines raised)
    if (zone.some(isNullLiteral)) return typedNull({ k: "lit", value: null, type: { t: "null" } }, fn);
    const now = env.ctx.now();
    return { k: "call", fn, args: [{ k: "param", index: now.index, type: now.type }, ...zone], type };
  };
}

const CATALOGUE_FORMS: { readonly [N in SpecialFormName]: SpecialForm } = {
  APPROX_QUANTILES: (node, env) => {
    const { x, n } = approxQuantiles(node, env);
    const element = x.type.t === "scalar" ? x.type.s : "INT64";
    const quantiles: Expr[] = [];
    for (let k = 0; k <= n; k++) quantiles.push(quantileCall(x, k, n));
    return { k: "call", fn: "__ARRAY", args: quantiles, type: { t: "array", element, native: true } };
  },
  // One instant per request, bound by the service (DESIGN.md §5).
  CURRENT_TIMESTAMP: (node, env) => {
    if (args(node).length > 0)
      fail("sql_invalid", `CURRENT_TIMESTAMP takes 0 arguments, got ${args(node).length}.`, node);
    const now = env.ctx.now();
    return { k: "param", index: now.index, type: now.type };
  },
  CURRENT_DATE: currentIn("DATE"),
  CURRENT_DATETIME: currentIn("DATETIME"),
};

/** Keywords node-sql-parser reads as calls: `NOT(x)`, `EXISTS(subquery)`. */
const SYNTAX_FORMS: Readonly<Record<string, SpecialForm>> = {
  NOT: (node, env) => {
    if (args(node).length !== 1) fail("sql_invalid", "NOT takes one operand.", node);
    return { k: "op", op: "NOT", args: [analyzeCondition(args(node)[0]!, env)], type: BOOL };
  },
  EXISTS: (node, env) => {
    const sub = args(node)[0];
    if (!sub?.ast) fail("sql_invalid", "EXISTS needs a subquery.", node);
    return analyzeSubquery(sub!.ast, env, "exists");
  },
};

export function specialForm(name: string): SpecialForm | undefined {
  const upper = name.toUpperCase();
  if (Object.hasOwn(CATALOGUE_FORMS, upper)) return CATALOGUE_FORMS[upper as SpecialFormName];
  return Object.hasOwn(SYNTAX_FORMS, upper) ? SYNTAX_FORMS[upper] : undefined;
}
