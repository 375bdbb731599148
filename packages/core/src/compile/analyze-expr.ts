import { lookupFunction } from "../catalogue/functions.ts";
import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import { analyzeAggregate, analyzeExtract, analyzeFunction } from "./analyze-functions.ts";
import { internalValue } from "./analyze-internal.ts";
import { analyzeStruct, analyzeSubquery } from "./analyze-literals.ts";
import {
  coerceForComparison,
  coerceLiteralTo,
  INT64_MIN_DIGITS,
  literalOfNumber,
  typedNull,
} from "./coerce.ts";
import type { CompileContext, CteInfo } from "./compile-context.ts";
import { foldConstantCase } from "./constant-case.ts";
import type { Expr } from "./ir.ts";
import { guarded, type RecordValue } from "./record-value.ts";
import { resolveColumnRef } from "./resolve-names.ts";
import type { Scope, Value } from "./scope.ts";
import {
  BOOL,
  commonType,
  FLOAT64,
  INT64,
  isNumeric,
  NULL_TYPE,
  type SqlType,
  STRING,
  typeName,
} from "./sql-type.ts";

/** Clause an expression appears in: aggregates are allowed only where grouping applies. */
export type Clause = "select" | "where" | "group" | "having" | "order" | "qualify" | "on" | "from" | "limit";

export interface ExprEnv {
  scope: Scope;
  ctx: CompileContext;
  clause: Clause;
  /** CTEs visible to subqueries */
  ctes?: Map<string, CteInfo>;
  /** named windows of the SELECT (WINDOW w AS (…)) */
  windows?: Map<string, AstNode>;
  /** resolves SELECT-list aliases (GROUP BY, ORDER BY, HAVING, QUALIFY) */
  alias?: (name: string) => Expr | undefined;
}

export const DATE_PARTS = new Set([
  "MICROSECOND",
  "MILLISECOND",
  "SECOND",
  "MINUTE",
  "HOUR",
  "DAY",
  "WEEK",
  "ISOWEEK",
  "MONTH",
  "QUARTER",
  "YEAR",
  "ISOYEAR",
  "DAYOFWEEK",
  "DAYOFYEAR",
  "DATE",
]);

export function fail(
  code: "sql_invalid" | "function_not_allowed" | "sql_not_allowed",
  message: string,
  node?: AstNode,
): never {
  throw new QesError(code, message, locationOf(node));
}

/** An expression that must be a value (records become their JSON text). */
export function analyzeExpr(node: AstNode, env: ExprEnv): Expr {
  const v = analyzeValue(node, env);
  return v.kind === "expr" ? v.expr : recordAsExpr(v.rec);
}

export function recordAsExpr(rec: RecordValue): Expr {
  const type: SqlType = { t: "record", node: rec.node, repeated: rec.repeated };
  return guarded(rec.root.json(rec.path, type), rec.guard);
}

export function analyzeCondition(node: AstNode, env: ExprEnv): Expr {
  const e = analyzeExpr(node, env);
  if (e.type.t === "null") return e;
  if (e.type.t !== "scalar" || e.type.s !== "BOOL") {
    fail("sql_invalid", `Expected a BOOL condition, got ${typeName(e.type)}.`, node);
  }
  return e;
}

export function analyzeValue(node: AstNode, env: ExprEnv): Value {
  env.ctx.enter(node);
  try {
    return analyzeValueInner(node, env);
  } finally {
    env.ctx.leave();
  }
}

export const expr = (e: Expr): Value => ({ kind: "expr", expr: e });

export function analyzeValueInner(node: AstNode, env: ExprEnv): Value {
  if (node.ast && !node.type) return expr(analyzeSubquery(node.ast, env, "scalar"));
  switch (node.type) {
    case "extract":
      return expr(analyzeExtract(node, env));
    case "column_ref":
      return resolveColumnRef(node, env);
    case "number":
    case "bigint": // integers beyond 2^53, as text
      return expr(literalOfNumber(node.value));
    case "single_quote_string":
    case "double_quote_string":
    case "string":
    case "r":
    case "natural_string":
      return expr({ k: "lit", value: String(node.value), type: STRING });
    case "timestamp":
    case "datetime":
    case "date": {
      const target = String(node.type).toUpperCase() as "TIMESTAMP" | "DATETIME" | "DATE";
      return expr(coerceLiteralTo({ k: "lit", value: String(node.value), type: STRING }, target, node));
    }
    case "bool":
    case "boolean":
      return expr({ k: "lit", value: Boolean(node.value), type: BOOL });
    case "null":
      return expr({ k: "lit", value: null, type: NULL_TYPE });
    case "param": {
      if (node.prefix !== "@")
        fail("sql_invalid", `Unsupported parameter syntax ${node.prefix}${node.value}.`, node);
      const chosen = env.ctx.fixed.get(String(node.value));
      if (chosen !== undefined) return expr({ k: "lit", value: chosen, type: STRING });
      const p = env.ctx.param(String(node.value), node);
      return expr({ k: "param", index: p.index, type: p.type });
    }
    case "binary_expr":
      return expr(analyzeBinary(node, env));
    case "unary_expr":
      return expr(analyzeUnary(node, env));
    case "case":
      return expr(analyzeCase(node, env));
    case "function":
      return internalValue(node, env) ?? expr(analyzeFunction(node, env));
    case "aggr_func":
      return expr(analyzeAggregate(node, env));
    case "any_value":
      return expr(analyzeAggregate({ ...node, name: "ANY_VALUE" }, env));
    case "struct":
      return analyzeStruct(node, env);
    case "cast":
      return expr(analyzeCast(node, env));
    case "interval": {
      const unit = String(node.unit ?? "").toUpperCase();
      if (!DATE_PARTS.has(unit)) fail("sql_invalid", `Unknown interval unit ${node.unit}.`, node);
      const value = analyzeExpr(node.expr, env);
      if (value.type.t !== "null" && !(value.type.t === "scalar" && value.type.s === "INT64")) {
        fail("sql_invalid", `INTERVAL needs an INT64 amount, got ${typeName(value.type)}.`, node);
      }
      checkIntervalRange(value, unit, node);
      return expr({ k: "interval", value, unit, type: { t: "interval" } });
    }
    case "expr_list":
      if (Array.isArray(node.value) && node.value.length === 1) return analyzeValue(node.value[0], env);
      return fail("sql_invalid", "A parenthesised list is only allowed after IN.", node);
    case "star":
      return expr({ k: "star", type: NULL_TYPE });
    default:
      return fail("sql_invalid", `Unsupported expression (${String(node.type)}).`, node);
  }
}

// ---------------------------------------------------------------------------------------------
// names

export const COMPARISON = new Set(["=", "!=", "<>", "<", ">", "<=", ">="]);

/**
 * `a AND b AND c …` (or OR): the parser nests a chain one level per operand, so a filter of 70
 * conditions would count as 70 levels of nesting (sql_too_complex) and recurse as deep. The chain
 * is read as a list instead, each operand one level below it, and rebuilt as a balanced tree
 * (AND and OR are associative), which the emitter walks log₂(n) deep.
 */
function analyzeLogicalChain(op: "AND" | "OR", node: AstNode, env: ExprEnv): Expr {
  const operands: AstNode[] = [];
  const stack: AstNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === "binary_expr" && String(n.operator).toUpperCase() === op) stack.push(n.right, n.left);
    else operands.push(n);
  }
  const args = operands.map((o) => analyzeCondition(o, env));
  const build = (from: number, to: number): Expr =>
    to - from === 1
      ? args[from]!
      : { k: "op", op, args: [build(from, (from + to) >> 1), build((from + to) >> 1, to)], type: BOOL };
  return build(0, args.length);
}

/**
 * `a || b || c …`: one CONCAT of every operand (BigQuery's `||` is CONCAT, which is NULL when any
 * argument is, so the grouping never matters), read as a list like a logical chain instead of one
 * nesting level per operand. `+` chains keep their left-to-right grouping: INT64 overflow and
 * FLOAT64 rounding depend on it.
 */
function analyzeConcatChain(node: AstNode, env: ExprEnv): Expr {
  const operands: AstNode[] = [];
  const stack: AstNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === "binary_expr" && n.operator === "||") stack.push(n.right, n.left);
    else operands.push(n);
  }
  const args = operands.map((o) => analyzeExpr(o, env));
  // CONCAT's typing: scalars only (catalogue/functions.ts)
  const concat = lookupFunction("CONCAT")!;
  const type = withPosition(
    () =>
      concat.returns(
        args.map((a) => a.type),
        "CONCAT",
      ),
    node,
  );
  return { k: "call", fn: "CONCAT", args, type };
}

export function analyzeBinary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === "AND" || op === "OR") return analyzeLogicalChain(op, node, env);
  if (op === "||") return analyzeConcatChain(node, env);
  if (op === "IS" || op === "IS NOT") {
    const left = analyzeExpr(node.left, env);
    const r = node.right;
    if (r?.type === "null")
      return { k: "op", op: op === "IS" ? "IS NULL" : "IS NOT NULL", args: [left], type: BOOL };
    if (r?.type === "bool" || r?.type === "boolean") {
      const which = r.value ? "TRUE" : "FALSE";
      return { k: "op", op: `${op} ${which}`, args: [left], type: BOOL };
    }
    return fail("sql_invalid", `IS must be followed by NULL, TRUE or FALSE.`, node);
  }
  if (op === "IN" || op === "NOT IN") {
    const left = analyzeExpr(node.left, env);
    const right = node.right;
    if (right?.type === "unnest") {
      const arr = analyzeExpr(right.expr, env);
      if (arr.type.t === "null") return { k: "lit", value: null, type: BOOL };
      if (arr.type.t !== "array")
        fail("sql_invalid", `IN UNNEST needs an array, got ${typeName(arr.type)}.`, right);
      const element: SqlType = { t: "scalar", s: (arr.type as { element: ScalarType }).element };
      const [l] = coerceForComparison(left, { k: "lit", value: null, type: element }, node);
      const test: Expr = { k: "call", fn: "__ARRAY_CONTAINS", args: [arr, l], type: BOOL };
      // BigQuery: a NULL value is never IN an array (NULL), and NOT IN an empty array is TRUE.
      return op === "NOT IN" ? { k: "op", op: "NOT", args: [test], type: BOOL } : test;
    }
    const only = right?.type === "expr_list" && right.value?.length === 1 ? right.value[0] : undefined;
    if (only?.ast) {
      const sub = analyzeSubquery(only.ast, env, "in");
      return sub.k === "subquery" ? { ...sub, expr: left, not: op === "NOT IN" } : sub;
    }
    if (right?.type !== "expr_list")
      return fail("sql_invalid", "IN needs a list, a subquery or UNNEST(array).", node);
    const list = (right.value as AstNode[]).map(
      (v) => coerceForComparison(left, analyzeExpr(v, env), node)[1],
    );
    return { k: "in", expr: left, list, not: op === "NOT IN", type: BOOL };
  }
  if (op === "BETWEEN" || op === "NOT BETWEEN") {
    const left = analyzeExpr(node.left, env);
    const [lo, hi] = (node.right?.value ?? []) as AstNode[];
    if (!lo || !hi) return fail("sql_invalid", "BETWEEN needs two bounds.", node);
    const [l1, low] = coerceForComparison(left, analyzeExpr(lo, env), node);
    const [, high] = coerceForComparison(l1, analyzeExpr(hi, env), node);
    return { k: "op", op, args: [l1, low, high], type: BOOL };
  }
  if (op === "LIKE" || op === "NOT LIKE") {
    const left = analyzeExpr(node.left, env);
    const right = analyzeExpr(node.right, env);
    const [l, r] = coerceForComparison(left, right, node);
    // BigQuery refuses a pattern ending in its escape character; so do the engines, but only
    // ClickHouse where no row reaches the LIKE (it evaluates constants first): refuse it here
    if (r.k === "lit" && typeof r.value === "string" && /(?:^|[^\\])(?:\\\\)*\\$/.test(r.value))
      fail(
        "sql_invalid",
        "A LIKE pattern must not end with a lone backslash (write \\\\ for one).",
        node.right,
      );
    return { k: "op", op, args: [l, r], type: BOOL };
  }
  const leftRaw = analyzeExpr(node.left, env);
  const rightRaw = analyzeExpr(node.right, env);
  if (COMPARISON.has(op)) {
    const [l, r] = coerceForComparison(leftRaw, rightRaw, node);
    return { k: "op", op: op === "<>" ? "!=" : op, args: [l, r], type: BOOL };
  }
  if ((op === "+" || op === "-") && rightRaw.type.t === "interval") {
    const ts = coerceLiteralTo(leftRaw, "TIMESTAMP", node.left);
    if (
      ts.type.t === "scalar" &&
      (ts.type.s === "TIMESTAMP" || ts.type.s === "DATETIME" || ts.type.s === "DATE")
    ) {
      const fn = op === "+" ? "TIMESTAMP_ADD" : "TIMESTAMP_SUB";
      return {
        k: "call",
        fn,
        args: [ts, rightRaw],
        type: ts.type.s === "DATE" ? { t: "scalar", s: "DATETIME" } : ts.type,
      };
    }
  }
  if (op === "+" || op === "-" || op === "*" || op === "/") {
    for (const side of [leftRaw, rightRaw]) {
      if (side.type.t !== "null" && !isNumeric(side.type)) {
        fail("sql_invalid", `Operator ${op} needs numbers, got ${typeName(side.type)}.`, node);
      }
    }
    const type: SqlType = op === "/" ? FLOAT64 : (commonType(leftRaw.type, rightRaw.type) ?? FLOAT64);
    return { k: "op", op, args: [leftRaw, rightRaw], type: type.t === "null" ? INT64 : type };
  }
  return fail("sql_invalid", `Unsupported operator ${op}.`, node);
}

export function analyzeUnary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === "NOT") return { k: "op", op: "NOT", args: [analyzeCondition(node.expr, env)], type: BOOL };
  if (op === "NOT EXISTS" || op === "EXISTS") {
    if (!node.expr?.ast) fail("sql_invalid", "EXISTS needs a subquery.", node);
    const sub = analyzeSubquery(node.expr.ast, env, "exists");
    return op === "EXISTS" ? sub : { k: "op", op: "NOT", args: [sub], type: BOOL };
  }
  if (op === "-") {
    // `-9223372036854775808` is INT64's least value (BigQuery reads the sign with the digits): its
    // digits alone are past INT64's greatest, which the literal without its sign would be FLOAT64
    const operand = node.expr as AstNode | undefined;
    if (
      (operand?.type === "number" || operand?.type === "bigint") &&
      String(operand.value) === INT64_MIN_DIGITS
    )
      return literalOfNumber(`-${INT64_MIN_DIGITS}`);
    const e = typedNull(analyzeExpr(node.expr, env), "INT64");
    if (e.k === "lit" && (typeof e.value === "number" || typeof e.value === "bigint")) {
      // -(-9223372036854775808) is past INT64's greatest: BigQuery's overflow error, not a value
      // an engine would wrap (ClickHouse) or raise in its own words
      if (e.type.t === "scalar" && e.type.s === "INT64" && BigInt(e.value) === -(2n ** 63n))
        fail("sql_invalid", "INT64 overflow: -(-9223372036854775808) is outside -2^63 … 2^63-1.", node);
      return { ...e, value: typeof e.value === "number" ? -e.value : -e.value };
    }
    if (e.type.t !== "null" && !isNumeric(e.type))
      fail("sql_invalid", `Cannot negate ${typeName(e.type)}.`, node);
    return { k: "op", op: "NEG", args: [e], type: e.type };
  }
  return fail("sql_invalid", `Unsupported operator ${op}.`, node);
}

/**
 * A branch of a result (CASE's, IF's, COALESCE's) where the result is FLOAT64: an INT64 one is cast
 * (BigQuery's supertype), so every engine sees one type. ClickHouse finds no common type for
 * `then 1 else 2.5` (NO_COMMON_TYPE) and makes `if`/`coalesce` over Int64 and Float64 a Variant.
 */
export function widened(e: Expr, type: SqlType): Expr {
  return type.t === "scalar" && type.s === "FLOAT64" && e.type.t === "scalar" && e.type.s === "INT64"
    ? { k: "cast", expr: e, to: "FLOAT64", safe: false, type: FLOAT64 }
    : e;
}

/**
 * A time zone is a literal or a parameter (docs/functions.md): ClickHouse's time functions take a
 * constant zone, so a zone read from a column cannot run there, and every backend refuses it
 * alike. A parameter takes a slot of its own, bound through the dialect's `bindZone`.
 */
/** BigQuery's INTERVAL range per unit (10,000 years, 3,660,000 days, 87,840,000 hours …). */
const INTERVAL_LIMIT: Record<string, bigint> = {
  YEAR: 10_000n,
  ISOYEAR: 10_000n,
  QUARTER: 40_000n,
  MONTH: 120_000n,
  WEEK: 522_857n,
  ISOWEEK: 522_857n,
  DAY: 3_660_000n,
  HOUR: 87_840_000n,
  MINUTE: 5_270_400_000n,
  SECOND: 316_224_000_000n,
  MILLISECOND: 316_224_000_000_000n,
  MICROSECOND: 316_224_000_000_000_000n,
};

/**
 * A literal INTERVAL amount beyond BigQuery's range is refused, as BigQuery refuses it: engines
 * otherwise disagree (DuckDB and PostgreSQL overflow, ClickHouse wraps around).
 */
export function checkIntervalRange(value: Expr, unit: string, node: AstNode): void {
  const limit = INTERVAL_LIMIT[unit];
  if (limit === undefined || value.k !== "lit") return;
  if (typeof value.value !== "number" && typeof value.value !== "bigint") return;
  const n = BigInt(value.value);
  if (n > limit || n < -limit)
    fail(
      "sql_invalid",
      `INTERVAL ${String(value.value)} ${unit} is out of range: an interval holds at most ${limit} ${unit.toLowerCase()}s either way.`,
      node,
    );
}

export function checkZoneArg(arg: Expr, node: AstNode, env: ExprEnv): void {
  if (arg.type.t !== "scalar" || arg.type.s !== "STRING") return;
  if (arg.k === "lit") return;
  if (arg.k === "param") {
    arg.index = env.ctx.zoneSlot(arg.index);
    return;
  }
  fail("sql_invalid", "A time zone must be a string literal or a parameter.", node);
}

export function analyzeCase(node: AstNode, env: ExprEnv): Expr {
  const operand = node.expr ? analyzeExpr(node.expr, env) : undefined;
  const whens: Array<[Expr, Expr]> = [];
  let elseExpr: Expr | undefined;
  let type: SqlType = NULL_TYPE;
  for (const arm of node.args as AstNode[]) {
    const result = analyzeExpr(arm.result, env);
    const t = commonType(type, result.type);
    if (!t)
      fail(
        "sql_invalid",
        `CASE branches have different types: ${typeName(type)} and ${typeName(result.type)}.`,
        arm,
      );
    type = t;
    if (arm.type === "else") elseExpr = result;
    else {
      const cond = operand
        ? coerceForComparison(operand, analyzeExpr(arm.cond, env), arm)[1]
        : analyzeCondition(arm.cond, env);
      whens.push([cond, result]);
    }
  }
  return foldConstantCase({
    k: "case",
    ...(operand ? { operand } : {}),
    whens: whens.map(([cond, result]) => [cond, widened(result, type)]),
    ...(elseExpr ? { else: widened(elseExpr, type) } : {}),
    type,
  });
}

// ---------------------------------------------------------------------------------------------
// functions

export function analyzeCast(node: AstNode, env: ExprEnv): Expr {
  const target = String(node.target?.[0]?.dataType ?? "").toUpperCase();
  const to = CAST_TARGETS[target];
  if (!to) return fail("sql_invalid", `CAST to ${target || "this type"} is not supported.`, node);
  const safe = String(node.keyword).toLowerCase() === "safe_cast";
  const e = analyzeExpr(node.expr, env);
  if (e.type.t !== "scalar" && e.type.t !== "null")
    fail("sql_invalid", `Cannot cast ${typeName(e.type)} to ${to}.`, node);
  if (e.type.t === "scalar" && e.type.s === to) return e;
  return { k: "cast", expr: e, to, safe, type: { t: "scalar", s: to } };
}

export const CAST_TARGETS: Record<string, ScalarType> = {
  STRING: "STRING",
  INT64: "INT64",
  INTEGER: "INT64",
  INT: "INT64",
  BIGINT: "INT64",
  FLOAT64: "FLOAT64",
  BOOL: "BOOL",
  BOOLEAN: "BOOL",
  TIMESTAMP: "TIMESTAMP",
  DATETIME: "DATETIME",
  DATE: "DATE",
};

export function withPosition<T>(fn: () => T, node: AstNode): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof QesError && e.line === undefined)
      throw new QesError(e.code, e.message, locationOf(node));
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// constructs restored from desugaring (parse/desugar.ts)
