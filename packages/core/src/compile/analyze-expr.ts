import { lookupFunction } from "../catalogue/functions.ts";
import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import { checkRegexPattern } from "../sandbox/regex-subset.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import { coerceForComparison, coerceLiteralTo, literalOfNumber } from "./coerce.ts";
import type { CompileContext } from "./compile-context.ts";
import type { Expr } from "./ir.ts";
import { guarded, leafType, type RecordValue } from "./record-value.ts";
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

const expr = (e: Expr): Value => ({ kind: "expr", expr: e });

function analyzeValueInner(node: AstNode, env: ExprEnv): Value {
  switch (node.type) {
    case "column_ref":
      return resolveColumnRef(node, env);
    case "number":
      return expr(literalOfNumber(node.value));
    case "single_quote_string":
    case "double_quote_string":
    case "string":
    case "r":
    case "natural_string":
      return expr({ k: "lit", value: String(node.value), type: STRING });
    case "bool":
    case "boolean":
      return expr({ k: "lit", value: Boolean(node.value), type: BOOL });
    case "null":
      return expr({ k: "lit", value: null, type: NULL_TYPE });
    case "param": {
      if (node.prefix !== "@")
        fail("sql_invalid", `Unsupported parameter syntax ${node.prefix}${node.value}.`, node);
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
      return expr(analyzeFunction(node, env));
    case "aggr_func":
      return expr(analyzeAggregate(node, env));
    case "cast":
      return expr(analyzeCast(node, env));
    case "interval": {
      const unit = String(node.unit ?? "").toUpperCase();
      if (!DATE_PARTS.has(unit)) fail("sql_invalid", `Unknown interval unit ${node.unit}.`, node);
      const value = analyzeExpr(node.expr, env);
      if (value.type.t !== "null" && !(value.type.t === "scalar" && value.type.s === "INT64")) {
        fail("sql_invalid", `INTERVAL needs an INT64 amount, got ${typeName(value.type)}.`, node);
      }
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

/** Identifier path of a column reference, with subscripts (`a[OFFSET(0)].b`) as numbers. */
type PathStep =
  | { name: string }
  | { index: number; mode: "offset" | "ordinal" | "safe_offset" | "safe_ordinal" };

function columnRefPath(node: AstNode): PathStep[] {
  const steps: PathStep[] = [];
  if (node.table)
    steps.push(
      ...String(node.table)
        .split(".")
        .map((name) => ({ name })),
    );
  const col = node.column;
  if (typeof col === "string") {
    steps.push({ name: col });
  } else if (col && typeof col === "object") {
    const inner = col.expr;
    if (inner?.type === "column_ref") steps.push(...columnRefPath(inner));
    else if (inner && "value" in inner) steps.push({ name: String(inner.value) });
    for (const off of col.offset ?? []) {
      const v = off.value;
      if (v?.type !== "number") fail("sql_invalid", "Array subscripts must be integer literals.", node);
      const mode = String(off.name ?? "offset").toLowerCase() as
        | "offset"
        | "ordinal"
        | "safe_offset"
        | "safe_ordinal";
      steps.push({ index: Number(v.value), mode });
    }
    if (typeof col.suffix === "string" && col.suffix) {
      for (const part of col.suffix.split(".").filter(Boolean)) steps.push({ name: part });
    }
  }
  for (const f of node.subFields ?? []) steps.push({ name: String(f) });
  return steps;
}

function resolveColumnRef(node: AstNode, env: ExprEnv): Value {
  const steps = columnRefPath(node);
  const first = steps[0];
  if (!first || !("name" in first)) return fail("sql_invalid", "Invalid column reference.", node);
  let current: Value | undefined;
  let rest = steps.slice(1);
  if (steps.length === 1 && env.alias) {
    const aliased = env.alias(first.name);
    if (aliased) return expr(aliased);
  }
  // Range variables (FROM aliases) take precedence over column names, as in BigQuery.
  const rangeVar = env.scope.findVar(first.name);
  if (rangeVar) {
    const next = rest[0];
    if (!next || !("name" in next)) {
      current = rangeVar.self;
      if (!current && !next) current = env.scope.findColumn(first.name);
      if (!current)
        fail("sql_invalid", `${first.name} is a table alias, not a value; name one of its columns.`, node);
    } else {
      current = rangeVar.column(next.name);
      if (!current) {
        if (!rangeVar.schemaless)
          fail("sql_invalid", `Name ${next.name} not found inside ${first.name}.`, node);
        return expr({ k: "lit", value: null, type: NULL_TYPE });
      }
      rest = rest.slice(1);
    }
  }
  if (!current) {
    current = env.scope.findColumn(first.name);
    if (!current) {
      if (env.scope.anySchemaless() && !env.alias?.(first.name))
        return expr({ k: "lit", value: null, type: NULL_TYPE });
      return fail("sql_invalid", `Unrecognized name: ${first.name}.`, node);
    }
    rest = steps.slice(1);
  }
  for (const step of rest) current = step_(current, step, node);
  return current;
}

function step_(value: Value, step: PathStep, node: AstNode): Value {
  if ("index" in step) {
    const zeroBased = step.mode.endsWith("ordinal") ? step.index - 1 : step.index;
    if (value.kind === "record" && value.rec.repeated) {
      // A JSON object is an array of exactly one element: [0] is the element, any other index is
      // out of range (NULL; BigQuery raises unless SAFE_ — a deliberate departure, DESIGN.md §3).
      if (zeroBased !== 0) return expr({ k: "lit", value: null, type: NULL_TYPE });
      return { kind: "record", rec: { ...value.rec, repeated: false } };
    }
    const t = value.kind === "expr" ? value.expr.type : undefined;
    if (t?.t === "null") return value;
    return fail(
      "sql_invalid",
      `Subscript on a value of type ${t ? typeName(t) : "STRUCT"} is not supported here.`,
      node,
    );
  }
  if (value.kind === "record") return fieldOf(value.rec, step.name);
  const t = value.expr.type;
  if (t.t === "null") return value;
  return fail("sql_invalid", `Cannot access field ${step.name} on a value of type ${typeName(t)}.`, node);
}

/** Field `name` of a record (through the one-element array of a repeated record). */
export function fieldOf(rec: RecordValue, name: string): Value {
  const child = rec.node.fields?.[name] ?? findCaseInsensitive(rec.node.fields, name);
  if (!child) return expr({ k: "lit", value: null, type: NULL_TYPE });
  const path = [...rec.path, child.name];
  if (child.kind === "record")
    return {
      kind: "record",
      rec: { root: rec.root, path, node: child, repeated: true, ...(rec.guard ? { guard: rec.guard } : {}) },
    };
  const e =
    child.kind === "scalar" || child.kind === "array" || child.kind === "records"
      ? rec.root.leaf(path, child)
      : rec.root.json(path, leafType(child));
  return expr(guarded(e, rec.guard));
}

function findCaseInsensitive<T>(fields: Record<string, T> | undefined, name: string): T | undefined {
  if (!fields) return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(fields)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// operators

const COMPARISON = new Set(["=", "!=", "<>", "<", ">", "<=", ">="]);

function analyzeBinary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === "AND" || op === "OR") {
    return {
      k: "op",
      op,
      args: [analyzeCondition(node.left, env), analyzeCondition(node.right, env)],
      type: BOOL,
    };
  }
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
    if (right?.type !== "expr_list")
      return fail("sql_invalid", "IN (subquery) and IN UNNEST are not supported yet.", node);
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
    return { k: "op", op, args: [l, r], type: BOOL };
  }
  const leftRaw = analyzeExpr(node.left, env);
  const rightRaw = analyzeExpr(node.right, env);
  if (COMPARISON.has(op)) {
    const [l, r] = coerceForComparison(leftRaw, rightRaw, node);
    return { k: "op", op: op === "<>" ? "!=" : op, args: [l, r], type: BOOL };
  }
  if (op === "||") return { k: "call", fn: "CONCAT", args: [leftRaw, rightRaw], type: STRING };
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

function analyzeUnary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === "NOT") return { k: "op", op: "NOT", args: [analyzeCondition(node.expr, env)], type: BOOL };
  if (op === "-") {
    const e = analyzeExpr(node.expr, env);
    if (e.k === "lit" && (typeof e.value === "number" || typeof e.value === "bigint")) {
      return { ...e, value: typeof e.value === "number" ? -e.value : -e.value };
    }
    if (e.type.t !== "null" && !isNumeric(e.type))
      fail("sql_invalid", `Cannot negate ${typeName(e.type)}.`, node);
    return { k: "op", op: "NEG", args: [e], type: e.type };
  }
  return fail("sql_invalid", `Unsupported operator ${op}.`, node);
}

function analyzeCase(node: AstNode, env: ExprEnv): Expr {
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
  return { k: "case", ...(operand ? { operand } : {}), whens, ...(elseExpr ? { else: elseExpr } : {}), type };
}

// ---------------------------------------------------------------------------------------------
// functions

function functionName(node: AstNode): string {
  const parts: string[] = [];
  if (node.name?.schema?.value) parts.push(String(node.name.schema.value));
  for (const p of node.name?.name ?? []) parts.push(String(p.value));
  return parts.join(".");
}

function analyzeFunction(node: AstNode, env: ExprEnv): Expr {
  const name = functionName(node);
  const spec = lookupFunction(name);
  if (!spec) {
    return fail(
      "function_not_allowed",
      `Function ${name.toUpperCase()} is not allowed: it is not in the catalogue of BigQuery functions qes supports.`,
      node,
    );
  }
  if (node.over) return fail("sql_invalid", `Window functions are not supported yet (${spec.name}).`, node);
  const rawArgs = (node.args?.value ?? []) as AstNode[];
  if (rawArgs.length < spec.minArgs || rawArgs.length > spec.maxArgs) {
    fail(
      "sql_invalid",
      `${spec.name} takes ${spec.minArgs === spec.maxArgs ? spec.minArgs : `${spec.minArgs} to ${spec.maxArgs}`} arguments, got ${rawArgs.length}.`,
      node,
    );
  }
  if (spec.kind === "aggregate") checkAggregateAllowed(spec.name, env, node);
  const args = rawArgs.map((a, i) => {
    if (spec.datePartArgs?.includes(i)) return datePart(a);
    const e = analyzeExpr(a, env.clause === "select" || !spec.kind.startsWith("agg") ? env : env);
    const target = spec.literalAs?.[i];
    return target ? coerceLiteralTo(e, target, a) : e;
  });
  for (const i of spec.patternArgs ?? []) checkPatternArg(args[i]!, rawArgs[i]!, env);
  if (spec.name === "CURRENT_TIMESTAMP") {
    const now = env.ctx.now();
    return { k: "param", index: now.index, type: now.type };
  }
  const type = withPosition(
    () =>
      spec.returns(
        args.map((a) => a.type),
        spec.name,
      ),
    node,
  );
  return { k: "call", fn: spec.name, args, type };
}

function analyzeAggregate(node: AstNode, env: ExprEnv): Expr {
  const name = String(node.name).toUpperCase();
  const spec = lookupFunction(name);
  if (!spec) return fail("function_not_allowed", `Function ${name} is not allowed.`, node);
  if (node.over) return fail("sql_invalid", `Window functions are not supported yet (${name}).`, node);
  checkAggregateAllowed(name, env, node);
  const argNode = node.args?.expr as AstNode | undefined;
  const args = argNode && argNode.type !== "star" ? [analyzeExpr(argNode, { ...env, clause: "select" })] : [];
  const distinct = String(node.args?.distinct ?? "").toUpperCase() === "DISTINCT";
  const type = withPosition(
    () =>
      spec.returns(
        args.map((a) => a.type),
        name,
      ),
    node,
  );
  return { k: "call", fn: name, args, type, agg: { distinct } };
}

function checkAggregateAllowed(name: string, env: ExprEnv, node: AstNode): void {
  if (env.clause === "where" || env.clause === "group" || env.clause === "on" || env.clause === "from") {
    fail("sql_invalid", `Aggregate function ${name} is not allowed in ${env.clause.toUpperCase()}.`, node);
  }
}

function datePart(node: AstNode): Expr {
  const steps = node.type === "column_ref" ? columnRefPath(node) : [];
  const step = steps.length === 1 ? steps[0] : undefined;
  const part = step && "name" in step ? step.name.toUpperCase() : undefined;
  if (!part || !DATE_PARTS.has(part))
    return fail("sql_invalid", "Expected a date part such as HOUR or DAY.", node);
  return { k: "datepart", part, type: { t: "datepart", part } };
}

function checkPatternArg(arg: Expr, node: AstNode, env: ExprEnv): void {
  if (arg.k === "lit" && typeof arg.value === "string") {
    const problem = checkRegexPattern(arg.value);
    if (problem) fail("sql_invalid", `Invalid regular expression '${arg.value}': ${problem}.`, node);
  } else if (arg.k === "param") {
    const p = env.ctx.params[arg.index - 1];
    if (p?.kind === "endpoint") env.ctx.patternParams.add(p.name);
  }
}

function analyzeCast(node: AstNode, env: ExprEnv): Expr {
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

const CAST_TARGETS: Record<string, ScalarType> = {
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

function withPosition<T>(fn: () => T, node: AstNode): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof QesError && e.line === undefined)
      throw new QesError(e.code, e.message, locationOf(node));
    throw e;
  }
}
