import { lookupFunction } from "../catalogue/functions.ts";
import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import { checkRegexPattern } from "../sandbox/regex-subset.ts";
import type { FieldNode, ScalarType } from "../schema/schema-model.ts";
import { analyzeQuery } from "./analyze-query.ts";
import { coerceForComparison, coerceLiteralTo, literalOfNumber } from "./coerce.ts";
import type { CompileContext, CteInfo } from "./compile-context.ts";
import type { AggregateOptions, Expr, OrderItem } from "./ir.ts";
import { elementRoot, guarded, leafType, type RecordValue } from "./record-value.ts";
import type { Scope, Value } from "./scope.ts";
import { Scope as ScopeClass } from "./scope.ts";
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

const expr = (e: Expr): Value => ({ kind: "expr", expr: e });

function analyzeValueInner(node: AstNode, env: ExprEnv): Value {
  if (node.ast && !node.type) return expr(analyzeSubquery(node.ast, env, "scalar"));
  switch (node.type) {
    case "extract":
      return expr(analyzeExtract(node, env));
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
      if (!current && !next) {
        const found = env.scope.findColumn(first.name);
        current = found && !("ambiguous" in found) ? found : undefined;
      }
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
    const found = env.scope.findColumn(first.name);
    if (found && "ambiguous" in found) {
      return fail(
        "sql_invalid",
        `Column name ${first.name} is ambiguous: it is in ${found.ambiguous.join(" and ")}; qualify it.`,
        node,
      );
    }
    current = found;
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
    return { k: "op", op, args: [l, r], type: BOOL };
  }
  const leftRaw = analyzeExpr(node.left, env);
  const rightRaw = analyzeExpr(node.right, env);
  if (COMPARISON.has(op)) {
    const [l, r] = coerceForComparison(leftRaw, rightRaw, node);
    return { k: "op", op: op === "<>" ? "!=" : op, args: [l, r], type: BOOL };
  }
  if (op === "||") return { k: "call", fn: "CONCAT", args: [leftRaw, rightRaw], type: STRING };
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

function analyzeUnary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === "NOT") return { k: "op", op: "NOT", args: [analyzeCondition(node.expr, env)], type: BOOL };
  if (op === "NOT EXISTS" || op === "EXISTS") {
    if (!node.expr?.ast) fail("sql_invalid", "EXISTS needs a subquery.", node);
    const sub = analyzeSubquery(node.expr.ast, env, "exists");
    return op === "EXISTS" ? sub : { k: "op", op: "NOT", args: [sub], type: BOOL };
  }
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
  const internal = analyzeInternal(name.toLowerCase(), node, env);
  if (internal) return internal;
  if (name.toUpperCase() === "NOT" && (node.args?.value ?? []).length === 1) {
    return { k: "op", op: "NOT", args: [analyzeCondition(node.args.value[0], env)], type: BOOL };
  }
  if (name.toUpperCase() === "APPROX_QUANTILES") return approxQuantilesArray(node, env);
  if (name.toUpperCase() === "EXISTS") {
    const sub = (node.args?.value ?? [])[0] as AstNode | undefined;
    if (!sub?.ast) fail("sql_invalid", "EXISTS needs a subquery.", node);
    return analyzeSubquery(sub!.ast, env, "exists");
  }
  const spec = lookupFunction(name);
  if (!spec) {
    return fail(
      "function_not_allowed",
      `Function ${name.toUpperCase()} is not allowed: it is not in the catalogue of BigQuery functions qes supports.`,
      node,
    );
  }
  if (spec.kind === "window" && !node.over) fail("sql_invalid", `${spec.name} needs an OVER clause.`, node);
  const rawArgs = (node.args?.value ?? []) as AstNode[];
  if (rawArgs.length < spec.minArgs || rawArgs.length > spec.maxArgs) {
    fail(
      "sql_invalid",
      `${spec.name} takes ${spec.minArgs === spec.maxArgs ? spec.minArgs : `${spec.minArgs} to ${spec.maxArgs}`} arguments, got ${rawArgs.length}.`,
      node,
    );
  }
  if (spec.kind === "aggregate" || node.over) checkAggregateAllowed(spec.name, env, node);
  const args = rawArgs.map((a, i) => {
    if (spec.datePartArgs?.includes(i)) return datePart(a);
    const e = analyzeExpr(a, env.clause === "select" || !spec.kind.startsWith("agg") ? env : env);
    const target = spec.literalAs?.[i];
    return target ? coerceLiteralTo(e, target, a) : e;
  });
  for (const i of spec.patternArgs ?? []) checkPatternArg(args[i]!, rawArgs[i]!, env);
  if (spec.name === "CURRENT_TIMESTAMP" || spec.name === "CURRENT_DATE" || spec.name === "CURRENT_DATETIME") {
    // One instant per request, bound by the service (DESIGN.md §5).
    const now = env.ctx.now();
    const param: Expr = { k: "param", index: now.index, type: now.type };
    if (spec.name === "CURRENT_TIMESTAMP") return param;
    const zone = args[0] ? [args[0]] : [];
    return spec.name === "CURRENT_DATE"
      ? { k: "call", fn: "DATE", args: [param, ...zone], type: { t: "scalar", s: "DATE" } }
      : { k: "call", fn: "DATETIME", args: [param, ...zone], type: { t: "scalar", s: "DATETIME" } };
  }
  const type = withPosition(
    () =>
      spec.returns(
        args.map((a) => a.type),
        spec.name,
      ),
    node,
  );
  const call: Expr = {
    k: "call",
    fn: spec.name,
    args,
    type,
    ...(spec.kind === "aggregate" ? { agg: {} } : {}),
  };
  if (node.over) return withWindow(call, node.over, env);
  return call;
}

function analyzeAggregate(node: AstNode, env: ExprEnv): Expr {
  const name = String(node.name).toUpperCase();
  const spec = lookupFunction(name);
  if (!spec) return fail("function_not_allowed", `Function ${name} is not allowed.`, node);
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
  const call: Expr = { k: "call", fn: name, args, type, agg: { distinct } };
  if (node.over) return withWindow(call, node.over, env);
  return call;
}

function checkAggregateAllowed(name: string, env: ExprEnv, node: AstNode): void {
  if (env.clause === "where" || env.clause === "group" || env.clause === "on" || env.clause === "from") {
    fail("sql_invalid", `Aggregate function ${name} is not allowed in ${env.clause.toUpperCase()}.`, node);
  }
}

const WEEKDAYS = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];

function datePart(node: AstNode): Expr {
  // WEEK(<WEEKDAY>): weeks that start on that day
  if (node.type === "function" && functionName(node).toUpperCase() === "WEEK") {
    const day = (node.args?.value ?? [])[0] as AstNode | undefined;
    const daySteps = day?.type === "column_ref" ? columnRefPath(day) : [];
    const name = daySteps.length === 1 && "name" in daySteps[0]! ? daySteps[0].name.toUpperCase() : "";
    if (!WEEKDAYS.includes(name)) return fail("sql_invalid", "WEEK(…) needs a weekday such as MONDAY.", node);
    const part = `WEEK(${name})`;
    return { k: "datepart", part, type: { t: "datepart", part } };
  }
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

// ---------------------------------------------------------------------------------------------
// constructs restored from desugaring (parse/desugar.ts)

const SUBSCRIPT_MODE_NAMES = ["offset", "ordinal", "safe_offset", "safe_ordinal"] as const;

function stringArg(node: AstNode | undefined, what: string): string {
  if (node?.type !== "string") return fail("sql_invalid", `Expected ${what}.`, node);
  return String(node.value);
}

function analyzeInternal(name: string, node: AstNode, env: ExprEnv): Expr | undefined {
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

function indexLiteral(node: AstNode): number {
  const n =
    node.type === "number"
      ? Number(node.value)
      : node.type === "unary_expr" && node.operator === "-" && node.expr?.type === "number"
        ? -Number(node.expr.value)
        : Number.NaN;
  if (!Number.isInteger(n)) fail("sql_invalid", "This subscript must be an integer literal.", node);
  return n;
}

function analyzeOrderedAggregate(fn: "ARRAY_AGG" | "STRING_AGG", node: AstNode, env: ExprEnv): Expr {
  checkAggregateAllowed(fn, env, node);
  const args = (node.args?.value ?? []) as AstNode[];
  const flags = new Set(stringArg(args[0], "aggregate flags").split(",").filter(Boolean));
  const values: Expr[] = [];
  const orderBy: OrderItem[] = [];
  let limit: number | undefined;
  const inner: ExprEnv = { ...env, clause: "select" };
  for (const a of args.slice(1)) {
    const name = a.type === "function" ? functionName(a).toLowerCase() : "";
    if (name === "__qes_order") {
      const [k, dir, nulls] = a.args.value as AstNode[];
      const n = stringArg(nulls, "NULLS order").toLowerCase();
      orderBy.push({
        expr: analyzeExpr(k!, inner),
        desc: stringArg(dir, "direction") === "DESC",
        ...(n ? { nulls: n as "first" | "last" } : {}),
      });
    } else if (name === "__qes_limit") {
      limit = indexLiteral(a.args.value[0]);
      if (limit < 0) fail("sql_invalid", `${fn} LIMIT must not be negative.`, a);
    } else values.push(analyzeExpr(a, inner));
  }
  const x = values[0];
  if (!x) return fail("sql_invalid", `${fn} needs an argument.`, node);
  if (fn === "ARRAY_AGG" && values.length !== 1) fail("sql_invalid", "ARRAY_AGG takes one argument.", node);
  if (fn === "STRING_AGG" && values.length > 2)
    fail("sql_invalid", "STRING_AGG takes a value and an optional delimiter.", node);
  if (x.type.t !== "scalar" && x.type.t !== "null")
    fail("sql_invalid", `${fn} of ${typeName(x.type)} is not supported.`, node);
  if (flags.has("DISTINCT") && orderBy.some((o) => !sameExpr(o.expr, x))) {
    fail("sql_invalid", `${fn}(DISTINCT …) may only be ordered by its argument.`, node);
  }
  // BigQuery leaves the order unspecified without ORDER BY; every backend orders by value.
  if (orderBy.length === 0) orderBy.push({ expr: x, desc: false });
  const element = x.type.t === "scalar" ? x.type.s : "STRING";
  const type: SqlType = fn === "ARRAY_AGG" ? { t: "array", element, native: true } : STRING;
  const agg: AggregateOptions = {
    distinct: flags.has("DISTINCT"),
    orderBy,
    ignoreNulls: flags.has("IGNORE_NULLS"),
  };
  if (limit !== undefined) agg.limit = limit;
  const call: Expr = { k: "call", fn, args: values, type, agg };
  return node.over ? withWindow(call, node.over, env) : call;
}

function sameExpr(a: Expr, b: Expr): boolean {
  return JSON.stringify(a, bigintSafe) === JSON.stringify(b, bigintSafe);
}

function bigintSafe(_k: string, v: unknown): unknown {
  return typeof v === "bigint" ? `${v}n` : v;
}

// ---------------------------------------------------------------------------------------------
// windows, subqueries, EXTRACT

const FRAME_BOUND = /^(UNBOUNDED PRECEDING|UNBOUNDED FOLLOWING|CURRENT ROW|\d+ PRECEDING|\d+ FOLLOWING)$/i;

function withWindow(call: Extract<Expr, { k: "call" }>, over: AstNode, env: ExprEnv): Expr {
  const named = over?.as_window_specification;
  const spec =
    typeof named === "string"
      ? env.windows?.get(named.toLowerCase())?.as_window_specification?.window_specification
      : named?.window_specification;
  if (typeof named === "string" && !spec) return fail("sql_invalid", `Window ${named} is not defined.`, over);
  if (!spec) return fail("sql_invalid", "Invalid OVER clause.", over);
  const inner: ExprEnv = { ...env, clause: "select" };
  const partitionBy = ((spec.partitionby ?? []) as AstNode[]).map((p) => analyzeExpr(p.expr, inner));
  const orderBy: OrderItem[] = ((spec.orderby ?? []) as AstNode[]).map((o) => {
    const { node, nulls } = unwrapNullsNode(o.expr);
    return {
      expr: analyzeExpr(node, inner),
      desc: String(o.type ?? "ASC").toUpperCase() === "DESC",
      ...(nulls ? { nulls } : {}),
    };
  });
  let frame: string | undefined;
  const f = spec.window_frame_clause;
  if (f) {
    const kind = String(f.left?.value ?? f.type ?? "").toUpperCase();
    const bounds = f.operator === "BETWEEN" ? (f.right?.value ?? []) : [];
    const texts = (bounds as AstNode[]).map((b) => String(b.value).toUpperCase());
    if (
      (kind !== "ROWS" && kind !== "RANGE") ||
      texts.length !== 2 ||
      !texts.every((t) => FRAME_BOUND.test(t))
    ) {
      fail("sql_invalid", "Window frames must be ROWS|RANGE BETWEEN <bound> AND <bound>.", over);
    }
    frame = `${kind} BETWEEN ${texts[0]} AND ${texts[1]}`;
  }
  return { ...call, over: { partitionBy, orderBy, ...(frame ? { frame } : {}) } };
}

function unwrapNullsNode(node: AstNode): { node: AstNode; nulls?: "first" | "last" } {
  if (node?.type === "function") {
    const name = functionName(node).toLowerCase();
    if (name === "__qes_nulls_first" || name === "__qes_nulls_last") {
      return { node: node.args.value[0], nulls: name.endsWith("first") ? "first" : "last" };
    }
  }
  return { node };
}

function analyzeSubquery(ast: AstNode, env: ExprEnv, mode: "scalar" | "exists" | "in"): Expr {
  const outer = env.scope;
  const analyzed = analyzeQuery(ast, env.ctx, { final: false, ctes: env.ctes ?? new Map(), outer });
  const values = analyzed.branches[0]!.values;
  if (mode !== "exists" && values.length !== 1) {
    fail(
      "sql_invalid",
      `A ${mode === "in" ? "IN" : "scalar"} subquery must return one column, not ${values.length}.`,
      ast,
    );
  }
  const v = values[0];
  if (mode !== "exists" && v?.kind !== "expr")
    fail("sql_invalid", "A subquery returning a record is not supported here.", ast);
  const type: SqlType = mode === "scalar" && v?.kind === "expr" ? v.expr.type : BOOL;
  void ScopeClass;
  return { k: "subquery", query: analyzed.query, mode, type };
}

function analyzeExtract(node: AstNode, env: ExprEnv): Expr {
  return analyzeExtractPart(String(node.args?.field ?? "").toUpperCase(), node.args.source, env, node);
}

function analyzeExtractPart(part: string, sourceNode: AstNode, env: ExprEnv, node: AstNode): Expr {
  if (!DATE_PARTS.has(part)) fail("sql_invalid", `EXTRACT(${part} …) is not supported.`, node);
  const source = coerceLiteralTo(analyzeExpr(sourceNode, env), "TIMESTAMP", sourceNode);
  if (source.type.t !== "null" && !isTemporalType(source.type)) {
    fail("sql_invalid", `EXTRACT needs a TIMESTAMP, DATETIME or DATE, got ${typeName(source.type)}.`, node);
  }
  const type: SqlType = part === "DATE" ? { t: "scalar", s: "DATE" } : INT64;
  return {
    k: "call",
    fn: "__EXTRACT",
    args: [{ k: "datepart", part, type: { t: "datepart", part } }, source],
    type,
  };
}

function isTemporalType(t: SqlType): boolean {
  return t.t === "scalar" && (t.s === "TIMESTAMP" || t.s === "DATETIME" || t.s === "DATE");
}

// ---------------------------------------------------------------------------------------------
// literals of arrays and structs

const ELEMENT_TYPES: Record<string, ScalarType> = {
  INT64: "INT64",
  INT: "INT64",
  INTEGER: "INT64",
  FLOAT64: "FLOAT64",
  STRING: "STRING",
  BOOL: "BOOL",
  BOOLEAN: "BOOL",
  TIMESTAMP: "TIMESTAMP",
  DATETIME: "DATETIME",
  DATE: "DATE",
};

function parseElementType(text: string, node: AstNode): ScalarType {
  const t = ELEMENT_TYPES[text.trim().toUpperCase()];
  if (!t) return fail("sql_invalid", `ARRAY<${text}> is not supported; use a scalar element type.`, node);
  return t;
}

/** `[a, b]`: an engine list of scalars, or JSON text of an array of structs. */
function arrayLiteral(items: Value[], declared: ScalarType | undefined, node: AstNode): Expr {
  if (items.some((v) => v.kind === "record")) {
    if (!items.every((v) => v.kind === "record"))
      fail("sql_invalid", "An array literal mixes structs and other values.", node);
    const recs = items.map((v) => (v as Extract<Value, { kind: "record" }>).rec);
    const fields: Record<string, FieldNode> = {};
    for (const r of recs) Object.assign(fields, r.node.fields ?? {});
    const recNode: FieldNode = { name: "", kind: "records", fields };
    return {
      k: "call",
      fn: "__JSON_ARRAY",
      args: recs.map((r) => recordAsExpr(r)),
      type: { t: "records", node: recNode },
    };
  }
  const exprs = items.map((v) => (v as Extract<Value, { kind: "expr" }>).expr);
  let type: SqlType = declared ? { t: "scalar", s: declared } : { t: "null" };
  for (const e of exprs) {
    const c = commonType(type, e.type);
    if (!c || (c.t !== "scalar" && c.t !== "null"))
      fail("sql_invalid", "Array elements must share one scalar type.", node);
    type = c!;
  }
  const element: ScalarType = type.t === "scalar" ? type.s : "INT64";
  const args = exprs.map((e) =>
    e.type.t === "scalar" && e.type.s !== element
      ? ({ k: "cast", expr: e, to: element, safe: false, type: { t: "scalar", s: element } } as Expr)
      : e,
  );
  return { k: "call", fn: "__ARRAY", args, type: { t: "array", element, native: true } };
}

/** `STRUCT(1 AS a, 'x' AS b)`: JSON text of an object, read like a record from an event. */
function analyzeStruct(node: AstNode, env: ExprEnv): Value {
  const items = (node.expr_list ?? []) as AstNode[];
  const declared = Array.isArray(node.definition?.definition)
    ? (node.definition.definition as AstNode[])
    : [];
  const fields: Record<string, FieldNode> = {};
  const args: Expr[] = [];
  items.forEach((item, i) => {
    const name = String(item.as ?? declared[i]?.field_name ?? `_field_${i + 1}`);
    const v = analyzeValue(item.expr, env);
    let e: Expr;
    let field: FieldNode;
    if (v.kind === "record") {
      e = recordAsExpr(v.rec);
      field = { ...v.rec.node, name, kind: v.rec.repeated ? "record" : "record" };
    } else {
      e = v.expr;
      const t = e.type;
      field =
        t.t === "array"
          ? { name, kind: "array", type: t.element }
          : t.t === "records"
            ? { ...t.node, name, kind: "records" }
            : { name, kind: "scalar", type: t.t === "scalar" ? t.s : "STRING" };
    }
    fields[name] = field;
    args.push({ k: "lit", value: name, type: STRING }, e);
  });
  const json: Expr = { k: "call", fn: "__JSON_OBJECT", args, type: STRING };
  return {
    kind: "record",
    rec: { root: elementRoot(json), path: [], node: { name: "", kind: "record", fields }, repeated: false },
  };
}

/** APPROX_QUANTILES(x, n) as a whole: n+1 exact quantiles, as an array (DESIGN.md §3). */
function approxQuantilesArray(node: AstNode, env: ExprEnv): Expr {
  checkAggregateAllowed("APPROX_QUANTILES", env, node);
  const [xNode, nNode] = (node.args?.value ?? []) as AstNode[];
  if (!xNode || nNode?.type !== "number") {
    return fail("sql_invalid", "APPROX_QUANTILES needs a value and an integer number of quantiles.", node);
  }
  const n = Number(nNode.value);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    fail("sql_invalid", "APPROX_QUANTILES needs 1 to 1000 quantiles.", nNode);
  const x = analyzeExpr(xNode, { ...env, clause: "select" });
  if (x.type.t !== "scalar" && x.type.t !== "null")
    fail("sql_invalid", `APPROX_QUANTILES of ${typeName(x.type)} is not supported.`, node);
  const element = x.type.t === "scalar" ? x.type.s : "INT64";
  const args: Expr[] = [];
  for (let k = 0; k <= n; k++) {
    args.push({
      k: "call",
      fn: "__QUANTILE",
      args: [x, { k: "lit", value: k, type: INT64 }, { k: "lit", value: n, type: INT64 }],
      type: x.type,
      agg: {},
    });
  }
  return { k: "call", fn: "__ARRAY", args, type: { t: "array", element, native: true } };
}
