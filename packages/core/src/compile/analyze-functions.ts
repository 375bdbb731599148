/** Calls: catalogue functions, aggregates (with ORDER BY / LIMIT / IGNORE NULLS), windows, EXTRACT. */
import {
  type EmittedFunctionName,
  type FunctionName,
  type FunctionSpec,
  lookupFunction,
  SPECIAL_FORM_NAMES,
} from "../catalogue/functions.ts";
import { WINDOW_COUNT_ARGS, windowCountRule } from "../catalogue/window-counts.ts";
import type { CallExpr } from "../dialect/function-table.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import { capturingGroups, checkRegexPattern } from "../sandbox/regex-subset.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import {
  analyzeExpr,
  checkZoneArg,
  DATE_PARTS,
  type ExprEnv,
  fail,
  widened,
  withPosition,
} from "./analyze-expr.ts";
import { analyzeInternal, indexLiteral, stringArg } from "./analyze-internal.ts";
import { coerceLiteralTo, isNullLiteral, typedAggregateLiteral, typedNull } from "./coerce.ts";
import { requireGroupable, requireOrderable } from "./groupable.ts";
import type { AggregateOptions, Expr, OrderItem } from "./ir.ts";
import { columnRefPath } from "./resolve-names.ts";
import { checkAggregateClause, specialForm } from "./special-forms.ts";
import { BOOL, INT64, isNumeric, type SqlType, STRING, typeName } from "./sql-type.ts";

export function functionName(node: AstNode): string {
  const parts: string[] = [];
  if (node.name?.schema?.value) parts.push(String(node.name.schema.value));
  for (const p of node.name?.name ?? []) parts.push(String(p.value));
  return parts.join(".");
}

export function analyzeFunction(node: AstNode, env: ExprEnv): Expr {
  const name = functionName(node);
  const safeOf = /^safe\.(.*)$/is.exec(name)?.[1];
  if (safeOf !== undefined) return analyzeSafeCall(safeOf, node, env);
  return analyzeCall(name, node, env);
}

/**
 * `SAFE.fn(…)`: BigQuery's call of a scalar function whose own errors are NULL (its arguments'
 * errors still raise). Only a catalogue scalar function takes the prefix — never an internal call,
 * a special form, an aggregate or a window (BigQuery refuses SAFE. on those too) — so the sandbox's
 * allow-list is the catalogue's, as without it. The dialect writes the call with its raises turned
 * into NULL (SqlEmitter.raiseWhen).
 */
function analyzeSafeCall(name: string, node: AstNode, env: ExprEnv): Expr {
  const spec = name.startsWith("_") ? undefined : lookupFunction(name);
  const shown = `SAFE.${name.toUpperCase()}`;
  if (!spec)
    return fail(
      "function_not_allowed",
      `Function ${shown} is not allowed: ${name.toUpperCase()} is not in the catalogue of BigQuery functions qes supports.`,
      node,
    );
  const refused =
    spec.kind === "aggregate"
      ? "an aggregate function"
      : spec.kind === "window" || node.over
        ? "a window function call"
        : (SPECIAL_FORM_NAMES as readonly string[]).includes(spec.name)
          ? "not a function it can prefix"
          : undefined;
  if (refused)
    return fail(
      "function_not_allowed",
      `Function ${shown} is not allowed: SAFE. prefixes scalar functions only, and ${spec.name} is ${refused}.`,
      node,
    );
  const call = analyzeCall(spec.name, node, env);
  // a call the analyser answered without the function (ARRAY_LENGTH of a record) raises nothing
  return call.k === "call" ? { ...call, safe: true } : call;
}

/**
 * `FIRST_VALUE(x IGNORE NULLS) OVER (…)` (LAST_VALUE, NTH_VALUE), desugared to
 * `__qes_ignore_nulls('FIRST_VALUE', x) OVER (…)`: the window call, marked to skip NULL values.
 */
export function analyzeIgnoringNulls(name: string, node: AstNode, args: AstNode[], env: ExprEnv): Expr {
  if (!node.over) fail("sql_invalid", `${name} needs an OVER clause.`, node);
  const call = analyzeCall(name, { ...node, args: { ...node.args, value: args } }, env);
  return call.k === "call" ? { ...call, ignoreNulls: true } : call;
}

function analyzeCall(name: string, node: AstNode, env: ExprEnv): Expr {
  const internal = analyzeInternal(name.toLowerCase(), node, env);
  if (internal) return internal;
  const special = specialForm(name);
  if (special) return special(node, env);
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
    const coerced = target ? coerceLiteralTo(e, target, a) : e;
    // a bare NULL where the signature names a type is that type; result arguments (IF's
    // branches, COALESCE's alternatives) meet in the result's type below
    const declared = spec.resultArgs && isResultArg(spec.resultArgs, i) ? undefined : acceptedAt(spec, i);
    // a window's value (FIRST_VALUE('x') OVER …) is typed as an aggregate's is
    if (i === 0 && spec.kind === "window" && !declared) return typedAggregateLiteral(coerced, "INT64");
    return declared ? typedNull(coerced, declared) : coerced;
  });
  const recordLength = arrayLengthOfRecord(spec.name, args[0], node);
  if (recordLength) return recordLength;
  for (const i of spec.patternArgs ?? []) {
    checkPatternArg(args[i]!, rawArgs[i]!, env);
    if (spec.maxCapturingGroups !== undefined)
      checkCapturingGroups(spec.name, spec.maxCapturingGroups, args[i]!, rawArgs[i]!);
  }
  checkCountArg(spec.name, args, rawArgs);
  checkTimestampStep(spec.name, args, rawArgs);
  checkRewriteGroups(spec.name, args, rawArgs);
  for (const i of spec.constantArgs ?? []) if (args[i]) checkConstantArg(spec.name, args[i]!, rawArgs[i]!);
  const type = withPosition(
    () =>
      spec.returns(
        args.map((a) => a.type),
        spec.name,
      ),
    node,
  );
  // before the zone's check, which refuses a NULL typed as STRING
  const nulled = nullTextArg(spec, args, type);
  if (nulled) return nulled;
  if (spec.zoneArg !== undefined && args[spec.zoneArg])
    checkZoneArg(args[spec.zoneArg]!, rawArgs[spec.zoneArg]!, env);
  const at = locationOf(node);
  const call: CallExpr = {
    k: "call",
    fn: emittedName(spec.name, node),
    args: spec.resultArgs
      ? args.map((a, i) => (isResultArg(spec.resultArgs!, i) ? widened(a, type) : a))
      : (spec.rewriteArgs?.(args) ?? args),
    type,
    ...(spec.kind === "aggregate" ? { agg: {} } : {}),
    ...(at.line !== undefined && at.column !== undefined ? { at: { line: at.line, column: at.column } } : {}),
  };
  if (node.over) return withWindow(call, node.over, env);
  return call;
}

/**
 * A scalar call whose format, JSONPath or zone is a NULL literal: NULL of the call's type, as in
 * BigQuery (a function of a NULL argument is NULL). The dialects read those arguments' text when
 * they compile, and refused a NULL as "needs its format as a string literal"; a NULL zone reached
 * the engines, which raised.
 */
function nullTextArg(spec: FunctionSpec, args: Expr[], type: SqlType): Expr | undefined {
  if (spec.kind !== "scalar" || type.t !== "scalar") return undefined;
  const at = [...(spec.literalArgs ?? []), ...(spec.zoneArg !== undefined ? [spec.zoneArg] : [])];
  if (!at.some((i) => isNullLiteral(args[i]))) return undefined;
  return typedNull({ k: "lit", value: null, type: { t: "null" } }, type.s);
}

export function analyzeAggregate(node: AstNode, env: ExprEnv): Expr {
  const name = String(node.name).toUpperCase();
  const spec = lookupFunction(name);
  if (!spec) return fail("function_not_allowed", `Function ${name} is not allowed.`, node);
  checkAggregateAllowed(name, env, node);
  const argNode = node.args?.expr as AstNode | undefined;
  // a bare NULL aggregated is BigQuery's default INT64 (or the type the signature names)
  const args =
    argNode && argNode.type !== "star"
      ? [
          typedAggregateLiteral(
            analyzeExpr(argNode, { ...env, clause: "select" }),
            acceptedAt(spec, 0) ?? "INT64",
          ),
        ]
      : [];
  const distinct = String(node.args?.distinct ?? "").toUpperCase() === "DISTINCT";
  if (distinct && args[0]) requireGroupable(args[0].type, `${name}(DISTINCT …)`, argNode);
  const type = withPosition(
    () =>
      spec.returns(
        args.map((a) => a.type),
        name,
      ),
    node,
  );
  const call: CallExpr = { k: "call", fn: emittedName(spec.name, node), args, type, agg: { distinct } };
  if (node.over) return withWindow(call, node.over, env);
  return call;
}

export const checkAggregateAllowed = checkAggregateClause;

/**
 * A delimiter or a set of characters to trim: a literal or a parameter (FunctionSpec.constantArgs);
 * an expression of literals (`concat(',', ' ')`) is not one.
 */
function checkConstantArg(name: string, arg: Expr, node: AstNode): void {
  const inner = arg.k === "cast" ? arg.expr : arg;
  if (inner.k === "lit" || inner.k === "param") return;
  if (name === "NTH_VALUE")
    fail("sql_invalid", "The row number of NTH_VALUE must be an integer literal or a parameter.", node);
  fail(
    "sql_invalid",
    `The ${name === "LTRIM" || name === "RTRIM" || name === "TRIM" ? "characters to trim" : "delimiter"} of ${name} must be a string literal or a parameter.`,
    node,
  );
}

/**
 * ARRAY_LENGTH of a JSON object read as a REPEATED RECORD of one element (`metadata`,
 * `m.request`): 1 where it is present, NULL where it is not — engines each read the object
 * otherwise (DuckDB 0, ClickHouse its number of keys, PostgreSQL refused it). An array of
 * objects (`records`) is an engine array and keeps its own length. A STRUCT is no array.
 */
function arrayLengthOfRecord(name: string, arg: Expr | undefined, node: AstNode): Expr | undefined {
  if (name !== "ARRAY_LENGTH" || arg?.type.t !== "record") return undefined;
  if (!arg.type.repeated) fail("sql_invalid", "ARRAY_LENGTH needs an array, got a STRUCT.", node);
  return {
    k: "case",
    whens: [
      [
        { k: "op", op: "IS NULL", args: [arg], type: BOOL },
        { k: "lit", value: null, type: INT64 },
      ],
    ],
    else: { k: "lit", value: 1, type: INT64 },
    type: INT64,
  };
}

/** The first type a function's signature accepts at argument `i`, when it names one. */
function acceptedAt(spec: { accepts?: ReadonlyArray<readonly [number, ...ScalarType[]]> }, i: number) {
  return spec.accepts?.find(([at]) => at === i)?.[1];
}

function isResultArg(resultArgs: "all" | number[], i: number): boolean {
  return resultArgs === "all" || resultArgs.includes(i);
}

/** A catalogue name that reaches a dialect: special forms were rewritten before this point. */
function emittedName(name: FunctionName, node: AstNode): EmittedFunctionName {
  if ((SPECIAL_FORM_NAMES as readonly string[]).includes(name))
    return fail("sql_invalid", `${name} cannot be used here.`, node);
  return name as EmittedFunctionName;
}

export const WEEKDAYS = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];

export function datePart(node: AstNode): Expr {
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
  // node-sql-parser knows DATE_TRUNC and gives its part as an `origin` keyword, not a name
  const keyword = node.type === "origin" && typeof node.value === "string" ? node.value : undefined;
  const part = step && "name" in step ? step.name.toUpperCase() : keyword?.toUpperCase();
  if (!part || !DATE_PARTS.has(part))
    return fail("sql_invalid", "Expected a date part such as HOUR or DAY.", node);
  return { k: "datepart", part, type: { t: "datepart", part } };
}

/**
 * LAG's and LEAD's offset must not be negative, NTILE's bucket count and NTH_VALUE's row number
 * must be positive, none NULL (BigQuery): a literal that is not is refused here, where the engines
 * read a negative offset the other way (DuckDB, PostgreSQL) or refused it in their own words
 * (ClickHouse).
 */
function checkCountArg(name: string, args: Expr[], raw: AstNode[]): void {
  const count = WINDOW_COUNT_ARGS[name];
  if (!count) return;
  const a = args[count.at];
  // a NULL one is BigQuery's error too; DuckDB and PostgreSQL answered NULL, ClickHouse refused
  if (isNullLiteral(a)) fail("sql_invalid", `${name}'s ${count.what} must not be NULL.`, raw[count.at]);
  if (a?.k !== "lit" || (typeof a.value !== "number" && typeof a.value !== "bigint")) return;
  // compared as numbers: BigInt() throws on a fraction (`NTILE(-0.5)` was a 500)
  if (typeof a.value === "bigint" ? a.value < BigInt(count.least) : a.value < count.least)
    fail("sql_invalid", `${windowCountRule(name)}.`, raw[count.at]);
}

/** the parts BigQuery's TIMESTAMP_ADD / TIMESTAMP_SUB step a TIMESTAMP by: units of fixed length */
const TIMESTAMP_STEP_PARTS = new Set(["MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"]);

/**
 * TIMESTAMP_ADD / TIMESTAMP_SUB of a TIMESTAMP by WEEK, MONTH, QUARTER or YEAR is BigQuery's
 * error (an instant has no calendar: DATETIME_ADD / DATE_ADD step by those); every engine
 * answered it.
 */
function checkTimestampStep(name: string, args: Expr[], raw: AstNode[]): void {
  if (name !== "TIMESTAMP_ADD" && name !== "TIMESTAMP_SUB") return;
  const [ts, step] = args;
  if (!(ts?.type.t === "scalar" && ts.type.s === "TIMESTAMP") || step?.k !== "interval") return;
  if (!TIMESTAMP_STEP_PARTS.has(step.unit))
    fail(
      "sql_invalid",
      `${name} does not support the ${step.unit} date part when the argument is TIMESTAMP type.`,
      raw[1],
    );
}

/**
 * REGEXP_REPLACE's replacement may name groups `\1` to `\9` the pattern has: RE2's rewrite (and
 * BigQuery) refuses one past them, where DuckDB and PostgreSQL put nothing there and ClickHouse
 * raised; any other character after a backslash is RE2's error too. Checked when both are
 * literals (the escapes, whenever the replacement is); `\\` is a backslash, not a group.
 */
function checkRewriteGroups(name: string, args: Expr[], raw: AstNode[]): void {
  if (name !== "REGEXP_REPLACE") return;
  const [, pattern, rewrite] = args;
  if (rewrite?.k !== "lit" || typeof rewrite.value !== "string") return;
  let wanted = 0;
  // pairs from the left, so that `\\1` is a backslash and a 1; a lone `\\` at the end pairs with nothing
  for (const m of rewrite.value.matchAll(/\\([\s\S]?)/g)) {
    const next = m[1]!;
    if (/[0-9]/.test(next)) wanted = Math.max(wanted, Number(next));
    else if (next !== "\\")
      // RE2 refuses the rewrite; the engines wrote `\\x`, `x` or dropped the rest
      fail(
        "sql_invalid",
        `REGEXP_REPLACE's replacement has ${next === "" ? "a backslash at its end" : `\\${next}`}: a backslash there is followed by a digit (a group) or another backslash (\\\\ for one backslash).`,
        raw[2],
      );
  }
  if (pattern?.k !== "lit" || typeof pattern.value !== "string") return;
  const groups = capturingGroups(pattern.value);
  if (wanted > groups)
    fail(
      "sql_invalid",
      `REGEXP_REPLACE's replacement names group \\${wanted}, but the regular expression '${pattern.value}' has ${groups} capturing group${groups === 1 ? "" : "s"}.`,
      raw[2],
    );
}

/** BigQuery: "Regular expressions passed into extraction functions must not have more than 1 capturing group" */
function checkCapturingGroups(name: string, max: number, arg: Expr, node: AstNode): void {
  if (arg.k !== "lit" || typeof arg.value !== "string") return;
  const groups = capturingGroups(arg.value);
  if (groups > max)
    fail(
      "sql_invalid",
      `${name} takes a regular expression with at most ${max} capturing group; '${arg.value}' has ${groups} (write (?:…) for a group that only groups).`,
      node,
    );
}

export function checkPatternArg(arg: Expr, node: AstNode, env: ExprEnv): void {
  if (arg.k === "lit" && typeof arg.value === "string") {
    const problem = checkRegexPattern(arg.value);
    if (problem) fail("sql_invalid", `Invalid regular expression '${arg.value}': ${problem}.`, node);
  } else if (arg.k === "param") {
    arg.index = env.ctx.patternSlot(arg.index);
  }
}

export function analyzeOrderedAggregate(fn: "ARRAY_AGG" | "STRING_AGG", node: AstNode, env: ExprEnv): Expr {
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
      const key = analyzeExpr(k!, inner);
      requireOrderable(key.type, "ORDER BY", k);
      orderBy.push({
        expr: key,
        desc: stringArg(dir, "direction") === "DESC",
        ...(n ? { nulls: n as "first" | "last" } : {}),
      });
    } else if (name === "__qes_limit") {
      limit = indexLiteral(a.args.value[0]);
      if (limit < 0) fail("sql_invalid", `${fn} LIMIT must not be negative.`, a);
    } else values.push(analyzeExpr(a, inner));
  }
  // a bare NULL aggregated is a STRING, the element type its result has
  for (const [i, v] of values.entries())
    values[i] = i === 0 ? typedAggregateLiteral(v, "STRING") : typedNull(v, "STRING");
  if (fn === "STRING_AGG" && values[1]) checkConstantArg(fn, values[1], args[2]!);
  const x = values[0];
  if (!x) return fail("sql_invalid", `${fn} needs an argument.`, node);
  if (fn === "ARRAY_AGG" && values.length !== 1) fail("sql_invalid", "ARRAY_AGG takes one argument.", node);
  if (fn === "STRING_AGG" && values.length > 2)
    fail("sql_invalid", "STRING_AGG takes a value and an optional delimiter.", node);
  if (x.type.t !== "scalar" && x.type.t !== "null")
    fail("sql_invalid", `${fn} of ${typeName(x.type)} is not supported.`, node);
  // BigQuery's STRING_AGG takes STRING (or BYTES): PostgreSQL refused a FLOAT64 where DuckDB and
  // ClickHouse joined their own text of it
  if (fn === "STRING_AGG" && x.type.t === "scalar" && x.type.s !== "STRING")
    fail(
      "sql_invalid",
      `No matching signature for function STRING_AGG: argument 1 is ${typeName(x.type)}, expected STRING.`,
      node,
    );
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
  const call: CallExpr = { k: "call", fn, args: values, type, agg };
  return node.over ? withWindow(call, node.over, env) : call;
}

export function sameExpr(a: Expr, b: Expr): boolean {
  return JSON.stringify(a, bigintSafe) === JSON.stringify(b, bigintSafe);
}

export function bigintSafe(k: string, v: unknown): unknown {
  // where a call is written (`at`) does not make it another expression
  if (k === "at") return undefined;
  return typeof v === "bigint" ? `${v}n` : v;
}

// ---------------------------------------------------------------------------------------------
// windows, subqueries, EXTRACT

export const FRAME_BOUND =
  /^(UNBOUNDED PRECEDING|UNBOUNDED FOLLOWING|CURRENT ROW|\d+ PRECEDING|\d+ FOLLOWING)$/i;

/**
 * A window specification with the named window it starts from (`OVER (w ORDER BY …)`, or
 * `WINDOW b AS (a …)`) folded in, as BigQuery reads it: the named window's PARTITION BY, its
 * ORDER BY unless this one adds it, its frame unless this one adds it. Neither may say again what
 * the named window says. (`OVER (w)` read as an empty window lost w's ORDER BY and PARTITION BY.)
 */
function resolveWindowSpec(spec: AstNode, over: AstNode, env: ExprEnv, seen: string[] = []): AstNode {
  const name = spec?.name;
  if (typeof name !== "string" || name === "") return spec;
  if (seen.includes(name.toLowerCase())) return fail("sql_invalid", `Window ${name} refers to itself.`, over);
  const base = env.windows?.get(name.toLowerCase())?.as_window_specification;
  const baseSpec = typeof base === "string" ? { name: base } : base?.window_specification;
  if (!baseSpec) return fail("sql_invalid", `Window ${name} is not defined.`, over);
  const resolved = resolveWindowSpec(baseSpec, over, env, [...seen, name.toLowerCase()]);
  if (spec.partitionby?.length)
    fail("sql_invalid", `A window that starts from window ${name} cannot have its own PARTITION BY.`, over);
  if (spec.orderby?.length && resolved.orderby?.length)
    fail(
      "sql_invalid",
      `Window ${name} has an ORDER BY already; a window that starts from it cannot add one.`,
      over,
    );
  if (spec.window_frame_clause && resolved.window_frame_clause)
    fail(
      "sql_invalid",
      `Window ${name} has a frame already; a window that starts from it cannot add one.`,
      over,
    );
  return {
    name: null,
    partitionby: resolved.partitionby,
    orderby: spec.orderby?.length ? spec.orderby : resolved.orderby,
    window_frame_clause: spec.window_frame_clause ?? resolved.window_frame_clause,
  };
}

export function withWindow(call: CallExpr, over: AstNode, env: ExprEnv): Expr {
  const named = over?.as_window_specification;
  const written = typeof named === "string" ? { name: named } : named?.window_specification;
  if (!written) return fail("sql_invalid", "Invalid OVER clause.", over);
  const spec = resolveWindowSpec(written, over, env);
  const inner: ExprEnv = { ...env, clause: "select" };
  const partitionBy = ((spec.partitionby ?? []) as AstNode[]).map((p) => {
    const key = analyzeExpr(p.expr, inner);
    requireGroupable(key.type, "Partitioning", p.expr);
    return key;
  });
  const orderBy: OrderItem[] = ((spec.orderby ?? []) as AstNode[]).map((o) => {
    const { node, nulls } = unwrapNullsNode(o.expr);
    const key = analyzeExpr(node, inner);
    requireOrderable(key.type, "ORDER BY", node);
    return {
      expr: key,
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
    // a frame_start alone (`ROWS 1 PRECEDING`) arrives as BETWEEN … AND CURRENT ROW (the
    // frame-start-alone desugaring pass)
    if (
      (kind !== "ROWS" && kind !== "RANGE") ||
      texts.length !== 2 ||
      !texts.every((t) => FRAME_BOUND.test(t))
    ) {
      fail(
        "sql_invalid",
        "Window frames must be ROWS|RANGE BETWEEN <bound> AND <bound>, or ROWS|RANGE <n or UNBOUNDED> PRECEDING or CURRENT ROW.",
        over,
      );
    }
    // BigQuery's rule, which every engine needs too: an offset is added to the one ORDER BY key
    // (PostgreSQL refused a TIMESTAMP key as an unsupported feature, a 500)
    const offset = texts.some((t) => /^\d/.test(t));
    if (kind === "RANGE" && offset && !(orderBy.length === 1 && isNumeric(orderBy[0]!.expr.type))) {
      fail(
        "sql_invalid",
        "A RANGE frame with an offset (n PRECEDING or n FOLLOWING) needs exactly one ORDER BY key, of type INT64 or FLOAT64.",
        over,
      );
    }
    // a ROWS offset beyond 2^31 - 2 rows reaches as far as that one does (no partition holds
    // more rows); ClickHouse takes no larger one (it was a 422 there, 200 elsewhere)
    const bound = (t: string) =>
      kind === "ROWS" && /^\d{10,}/.test(t) && BigInt(t.split(" ")[0]!) > 2_147_483_646n
        ? t.replace(/^\d+/, "2147483646")
        : t;
    frame = `${kind} BETWEEN ${bound(texts[0]!)} AND ${bound(texts[1]!)}`;
  }
  return { ...call, over: { partitionBy, orderBy, ...(frame ? { frame } : {}) } };
}

export function unwrapNullsNode(node: AstNode): { node: AstNode; nulls?: "first" | "last" } {
  if (node?.type === "function") {
    const name = functionName(node).toLowerCase();
    if (name === "__qes_nulls_first" || name === "__qes_nulls_last") {
      return { node: node.args.value[0], nulls: name.endsWith("first") ? "first" : "last" };
    }
  }
  return { node };
}

export function analyzeExtract(node: AstNode, env: ExprEnv): Expr {
  return analyzeExtractPart(String(node.args?.field ?? "").toUpperCase(), node.args.source, env, node);
}

export function analyzeExtractPart(part: string, sourceNode: AstNode, env: ExprEnv, node: AstNode): Expr {
  const weekday = /^WEEK\((\w+)\)$/.exec(part)?.[1];
  if (!DATE_PARTS.has(part) && !(weekday && WEEKDAYS.includes(weekday)))
    fail("sql_invalid", `EXTRACT(${part} …) is not supported.`, node);
  const source = typedNull(
    coerceLiteralTo(analyzeExpr(sourceNode, env), "TIMESTAMP", sourceNode),
    "TIMESTAMP",
  );
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

export function isTemporalType(t: SqlType): boolean {
  return t.t === "scalar" && (t.s === "TIMESTAMP" || t.s === "DATETIME" || t.s === "DATE");
}
