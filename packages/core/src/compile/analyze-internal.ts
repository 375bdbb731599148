import type { AstNode } from "../parse/parse-sql.ts";
import {
  analyzeExpr,
  analyzeValue,
  DATE_PARTS,
  type ExprEnv,
  expr,
  fail,
  recordAsExpr,
} from "./analyze-expr.ts";
import {
  analyzeExtractPart,
  analyzeOrderedAggregate,
  checkAggregateAllowed,
  functionName,
} from "./analyze-functions.ts";
import { analyzeSubquery, arrayLiteral, parseElementType } from "./analyze-literals.ts";
import { coerceForComparison, coerceLiteralTo } from "./coerce.ts";
import type { Expr } from "./ir.ts";
import { elementRoot } from "./record-value.ts";
import { step_ } from "./resolve-names.ts";
import type { Value } from "./scope.ts";
import { BOOL, FLOAT64, INT64, typeName } from "./sql-type.ts";

export const SUBSCRIPT_MODE_NAMES = ["offset", "ordinal", "safe_offset", "safe_ordinal"] as const;

export function stringArg(node: AstNode | undefined, what: string): string {
  if (node?.type !== "string") return fail("sql_invalid", `Expected ${what}.`, node);
  return String(node.value);
}

export function analyzeInternal(name: string, node: AstNode, env: ExprEnv): Expr | undefined {
  if (!name.startsWith("__qes_")) return undefined;
  const args = (node.args?.value ?? []) as AstNode[];
  switch (name) {
    case "__qes_subscript":
    case "__qes_path": {
      const v = analyzeValue(node, env);
      return v.kind === "expr" ? v.expr : recordAsExpr(v.rec);
    }
    case "__qes_is_distinct":
    case "__qes_is_not_distinct": {
      const [l, r] = coerceForComparison(analyzeExpr(args[0]!, env), analyzeExpr(args[1]!, env), node);
      return {
        k: "op",
        op: name === "__qes_is_distinct" ? "IS DISTINCT FROM" : "IS NOT DISTINCT FROM",
        args: [l, r],
        type: BOOL,
      };
    }
    case "__qes_at_time_zone": {
      const ts = coerceLiteralTo(analyzeExpr(args[0]!, env), "TIMESTAMP", args[0]);
      const zone = analyzeExpr(args[1]!, env);
      return { k: "call", fn: "DATETIME", args: [ts, zone], type: { t: "scalar", s: "DATETIME" } };
    }
    case "__qes_array_agg":
    case "__qes_string_agg":
      return analyzeOrderedAggregate(name === "__qes_array_agg" ? "ARRAY_AGG" : "STRING_AGG", node, env);
    case "__qes_float":
      return { k: "lit", value: Number(stringArg(args[0], "a number")), type: FLOAT64 };
    case "__qes_interval": {
      const unit = stringArg(args[1], "an interval unit").toUpperCase();
      if (!DATE_PARTS.has(unit) || unit === "DATE")
        fail("sql_invalid", `Unknown interval unit ${unit}.`, node);
      const value = analyzeExpr(args[0]!, env);
      if (value.type.t !== "null" && !(value.type.t === "scalar" && value.type.s === "INT64")) {
        fail("sql_invalid", `INTERVAL needs an INT64 amount, got ${typeName(value.type)}.`, node);
      }
      return { k: "interval", value, unit, type: { t: "interval" } };
    }
    case "__qes_extract":
      return analyzeExtractPart(stringArg(args[0], "a date part").toUpperCase(), args[1]!, env, node);
    case "__qes_array":
    case "__qes_array_typed": {
      const typed = name === "__qes_array_typed";
      const declared = typed ? parseElementType(stringArg(args[0], "an element type"), node) : undefined;
      const items = (typed ? args.slice(1) : args).map((a) => analyzeValue(a, env));
      return arrayLiteral(items, declared, node);
    }
    case "__qes_array_subquery": {
      const sub = args[0]!;
      if (!sub.ast) fail("sql_invalid", "ARRAY(…) needs a subquery.", node);
      const q = analyzeSubquery(sub.ast, env, "scalar");
      if (q.type.t !== "scalar" && q.type.t !== "null")
        fail("sql_invalid", "ARRAY(subquery) of records is not supported.", node);
      if (q.k !== "subquery") return q;
      return {
        ...q,
        mode: "array",
        type: { t: "array", element: q.type.t === "scalar" ? q.type.s : "STRING", native: true },
      };
    }
    case "__qes_nulls_first":
    case "__qes_nulls_last":
      return fail("sql_invalid", "NULLS FIRST / NULLS LAST is allowed only in ORDER BY.", node);
    default:
      return fail("sql_invalid", `Unknown internal construct ${name}.`, node);
  }
}

/** Values of `__qes_subscript(...)` and `__qes_path(...)` (subscripts and the fields after them). */
export function internalValue(node: AstNode, env: ExprEnv): Value | undefined {
  if (node.type !== "function") return undefined;
  const name = functionName(node).toLowerCase();
  const args = (node.args?.value ?? []) as AstNode[];
  if (name === "__qes_path") {
    let v = analyzeValue(args[0]!, env);
    for (const f of args.slice(1)) v = step_(v, { name: stringArg(f, "a field name") }, node);
    return v;
  }
  if (name !== "__qes_subscript") return undefined;
  const mode = SUBSCRIPT_MODE_NAMES[Number(args[1]?.value)] ?? "offset";
  const target = args[0]!;
  const indexNode = args[2]!;
  // APPROX_QUANTILES(x, n)[OFFSET(k)]: the k-th of n quantiles, exactly (DESIGN.md §3).
  if (target.type === "function" && functionName(target).toUpperCase() === "APPROX_QUANTILES") {
    checkAggregateAllowed("APPROX_QUANTILES", env, target);
    const [xNode, nNode] = (target.args?.value ?? []) as AstNode[];
    if (!xNode || nNode?.type !== "number")
      fail("sql_invalid", "APPROX_QUANTILES needs a value and an integer number of quantiles.", target);
    const x = analyzeExpr(xNode!, { ...env, clause: "select" });
    const n = Number(nNode!.value);
    let k = indexLiteral(indexNode);
    if (mode.endsWith("ordinal")) k -= 1;
    if (!Number.isInteger(n) || n < 1)
      fail("sql_invalid", "APPROX_QUANTILES needs at least 1 quantile.", nNode);
    if (k < 0 || k > n) {
      if (mode.startsWith("safe")) return expr({ k: "lit", value: null, type: x.type });
      fail(
        "sql_invalid",
        `Quantile index ${k} is out of range: APPROX_QUANTILES(…, ${n}) has ${n + 1} values.`,
        indexNode,
      );
    }
    return expr({
      k: "call",
      fn: "__QUANTILE",
      args: [x, { k: "lit", value: k, type: INT64 }, { k: "lit", value: n, type: INT64 }],
      type: x.type,
      agg: {},
    });
  }
  const base = analyzeValue(target, env);
  if (base.kind === "record") {
    return step_(base, { index: indexLiteral(indexNode), mode }, node);
  }
  const t = base.expr.type;
  if (t.t === "null") return base;
  let index = analyzeExpr(indexNode, env);
  if (mode.endsWith("ordinal"))
    index = { k: "op", op: "-", args: [index, { k: "lit", value: 1, type: INT64 }], type: INT64 };
  if (t.t === "array") {
    return expr({
      k: "call",
      fn: "__ARRAY_AT",
      args: [base.expr, index],
      type: { t: "scalar", s: t.element },
    });
  }
  if (t.t === "records") {
    const element: Expr = {
      k: "call",
      fn: "__ARRAY_AT",
      args: [base.expr, index],
      type: { t: "scalar", s: "STRING" },
    };
    return { kind: "record", rec: { root: elementRoot(element), path: [], node: t.node, repeated: false } };
  }
  return fail("sql_invalid", `Cannot subscript a value of type ${typeName(t)}.`, node);
}

export function indexLiteral(node: AstNode): number {
  const n =
    node.type === "number"
      ? Number(node.value)
      : node.type === "unary_expr" && node.operator === "-" && node.expr?.type === "number"
        ? -Number(node.expr.value)
        : Number.NaN;
  if (!Number.isInteger(n)) fail("sql_invalid", "This subscript must be an integer literal.", node);
  return n;
}
