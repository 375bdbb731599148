import { type DesugaredFormName, isDesugaredForm } from "../catalogue/internal-functions.ts";
import type { AstNode } from "../parse/parse-sql.ts";
import {
  analyzeExpr,
  analyzeValue,
  checkIntervalRange,
  checkZoneArg,
  DATE_PARTS,
  type ExprEnv,
  expr,
  fail,
  recordAsExpr,
} from "./analyze-expr.ts";
import {
  analyzeAggregate,
  analyzeExtractPart,
  analyzeIgnoringNulls,
  analyzeOrderedAggregate,
  functionName,
} from "./analyze-functions.ts";
import { analyzeStruct, analyzeSubquery, arrayLiteral, parseElementType } from "./analyze-literals.ts";
import { coerceForComparison, coerceLiteralTo } from "./coerce.ts";
import type { Expr } from "./ir.ts";
import { elementRoot } from "./record-value.ts";
import { step_ } from "./resolve-names.ts";
import type { Value } from "./scope.ts";
import { approxQuantileAt } from "./special-forms.ts";
import { BOOL, FLOAT64, INT64, typeName } from "./sql-type.ts";

export const SUBSCRIPT_MODE_NAMES = ["offset", "ordinal", "safe_offset", "safe_ordinal"] as const;

export function stringArg(node: AstNode | undefined, what: string): string {
  if (node?.type !== "string") return fail("sql_invalid", `Expected ${what}.`, node);
  return String(node.value);
}

/** Reads one desugared form back as the construct the user wrote. */
type FormReader = (node: AstNode, env: ExprEnv, args: AstNode[]) => Expr;

function isDistinct(op: "IS DISTINCT FROM" | "IS NOT DISTINCT FROM"): FormReader {
  return (node, env, args) => {
    const [l, r] = coerceForComparison(analyzeExpr(args[0]!, env), analyzeExpr(args[1]!, env), node);
    return { k: "op", op, args: [l, r], type: BOOL };
  };
}

function arrayLiteralForm(typed: boolean): FormReader {
  return (node, env, args) => {
    const declared = typed ? parseElementType(stringArg(args[0], "an element type"), node) : undefined;
    // `[STRUCT(1 AS a, 'x' AS b), (2, 'y')]`: BigQuery reads a later element's tuple as a STRUCT,
    // coerced to the first element's type (it was refused as a list outside IN)
    const items = (typed ? args.slice(1) : args).map((a, i) =>
      i > 0 && a?.type === "expr_list" && Array.isArray(a.value) && a.value.length > 1
        ? analyzeStruct({ type: "struct", expr_list: a.value.map((expr: AstNode) => ({ expr })) }, env)
        : analyzeValue(a, env),
    );
    return arrayLiteral(items, declared, node);
  };
}

const outsideAggregate =
  (what: string): FormReader =>
  (node) =>
    fail("sql_invalid", `${what} is allowed only inside ARRAY_AGG or STRING_AGG.`, node);

/** One reader per desugared form (catalogue/internal-functions.ts): a new form needs one here. */
const FORM_READERS: { readonly [N in DesugaredFormName]: FormReader } = {
  __qes_subscript: (node, env) => {
    const v = analyzeValue(node, env);
    return v.kind === "expr" ? v.expr : recordAsExpr(v.rec);
  },
  __qes_path: (node, env) => FORM_READERS.__qes_subscript(node, env, []),
  __qes_is_distinct: isDistinct("IS DISTINCT FROM"),
  __qes_is_not_distinct: isDistinct("IS NOT DISTINCT FROM"),
  __qes_at_time_zone: (_node, env, args) => {
    const ts = coerceLiteralTo(analyzeExpr(args[0]!, env), "TIMESTAMP", args[0]);
    const zone = analyzeExpr(args[1]!, env);
    checkZoneArg(zone, args[1]!, env);
    return { k: "call", fn: "DATETIME", args: [ts, zone], type: { t: "scalar", s: "DATETIME" } };
  },
  __qes_array_agg: (node, env) => analyzeOrderedAggregate("ARRAY_AGG", node, env),
  __qes_string_agg: (node, env) => analyzeOrderedAggregate("STRING_AGG", node, env),
  // the aggregate node node-sql-parser writes for COUNT(DISTINCT x), OVER and position kept
  __qes_distinct: (node, env, args) => {
    const name = stringArg(args[0], "an aggregate");
    if (args.length !== 2) fail("sql_invalid", `${name}(DISTINCT …) takes one argument.`, node);
    return analyzeAggregate(
      { ...node, type: "aggr_func", name, args: { distinct: "DISTINCT", expr: args[1] } },
      env,
    );
  },
  __qes_ignore_nulls: (node, env, args) =>
    analyzeIgnoringNulls(stringArg(args[0], "a window function"), node, args.slice(1), env),
  __qes_order: outsideAggregate("ORDER BY inside a call"),
  __qes_limit: outsideAggregate("LIMIT inside a call"),
  __qes_float: (_node, _env, args) => ({
    k: "lit",
    value: Number(stringArg(args[0], "a number")),
    type: FLOAT64,
  }),
  __qes_interval: (node, env, args) => {
    const unit = stringArg(args[1], "an interval unit").toUpperCase();
    if (!DATE_PARTS.has(unit) || unit === "DATE") fail("sql_invalid", `Unknown interval unit ${unit}.`, node);
    const value = analyzeExpr(args[0]!, env);
    if (value.type.t !== "null" && !(value.type.t === "scalar" && value.type.s === "INT64")) {
      fail("sql_invalid", `INTERVAL needs an INT64 amount, got ${typeName(value.type)}.`, node);
    }
    checkIntervalRange(value, unit, node);
    return { k: "interval", value, unit, type: { t: "interval" } };
  },
  __qes_extract: (node, env, args) =>
    analyzeExtractPart(stringArg(args[0], "a date part").toUpperCase(), args[1]!, env, node),
  __qes_array: arrayLiteralForm(false),
  __qes_array_typed: arrayLiteralForm(true),
  __qes_array_subquery: (node, env, args) => {
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
  },
  __qes_nulls_first: (node) =>
    fail("sql_invalid", "NULLS FIRST / NULLS LAST is allowed only in ORDER BY.", node),
  __qes_nulls_last: (node) =>
    fail("sql_invalid", "NULLS FIRST / NULLS LAST is allowed only in ORDER BY.", node),
};

export function analyzeInternal(name: string, node: AstNode, env: ExprEnv): Expr | undefined {
  if (!name.startsWith("__qes_")) return undefined;
  if (!isDesugaredForm(name)) return fail("sql_invalid", `Unknown internal construct ${name}.`, node);
  return FORM_READERS[name](node, env, (node.args?.value ?? []) as AstNode[]);
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
  // APPROX_QUANTILES(x, n)[OFFSET(k)]: the k-th of n quantiles alone (special-forms.ts).
  if (target.type === "function" && functionName(target).toUpperCase() === "APPROX_QUANTILES") {
    const k = indexLiteral(indexNode) - (mode.endsWith("ordinal") ? 1 : 0);
    return expr(approxQuantileAt(target, env, k, mode.startsWith("safe"), indexNode));
  }
  const base = analyzeValue(target, env);
  if (base.kind === "record") {
    return step_(base, { index: indexLiteral(indexNode), mode }, node);
  }
  const t = base.expr.type;
  if (t.t === "null") return base;
  let index = analyzeExpr(indexNode, env);
  // ORDINAL(i) is OFFSET(i - 1); i = -2^63 is out of bounds as -2^63 + 1 is, where i - 1 overflowed
  // (SAFE_ORDINAL raised "INT64 overflow" instead of answering NULL)
  if (mode.endsWith("ordinal")) {
    const lowest: Expr = { k: "lit", value: -(2n ** 63n) + 1n, type: INT64 };
    const inRange: Expr = { k: "call", fn: "GREATEST", args: [index, lowest], type: INT64 };
    index = { k: "op", op: "-", args: [inRange, { k: "lit", value: 1, type: INT64 }], type: INT64 };
  }
  if (t.t === "array") {
    return expr(
      inBounds(
        { k: "call", fn: "__ARRAY_AT", args: [base.expr, index], type: { t: "scalar", s: t.element } },
        mode,
      ),
    );
  }
  if (t.t === "records") {
    const element = inBounds(
      { k: "call", fn: "__ARRAY_AT", args: [base.expr, index], type: { t: "scalar", s: "STRING" } },
      mode,
    );
    return { kind: "record", rec: { root: elementRoot(element), path: [], node: t.node, repeated: false } };
  }
  return fail("sql_invalid", `Cannot subscript a value of type ${typeName(t)}.`, node);
}

/**
 * An element read by OFFSET or ORDINAL (not SAFE_): an index outside a non-NULL array is
 * BigQuery's error "Array index … is out of bounds", raised by `__CHECK_INDEX`; __ARRAY_AT alone
 * answers NULL there (SAFE_OFFSET's answer). A REPEATED RECORD read from an event (`metadata`) is
 * a record reference, not an array (record-value.ts), and keeps NULL (docs/compiler.md).
 */
function inBounds(at: Extract<Expr, { k: "call" }>, mode: (typeof SUBSCRIPT_MODE_NAMES)[number]): Expr {
  if (mode.startsWith("safe")) return at;
  const [array, index] = at.args as [Expr, Expr];
  const length: Expr = { k: "call", fn: "ARRAY_LENGTH", args: [array], type: INT64 };
  return { k: "call", fn: "__CHECK_INDEX", args: [at, index, length], type: at.type };
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
