import type { Expr } from "../compile/ir.ts";
import { QesError } from "../errors.ts";
import { type CallExpr, type FunctionEmitter, type FunctionTable, rename } from "./function-table.ts";
import type { SqlEmitter } from "./sql-emitter.ts";

const distinct = (call: CallExpr) => (call.agg?.distinct ? "DISTINCT " : "");
const scalarOf = (call: CallExpr, i: number) => {
  const t = call.args[i]?.type;
  return t?.t === "scalar" ? t.s : undefined;
};

/**
 * `a || b || …` grouped as a balanced tree: engines nest a flat chain one level per operand and
 * stop at their depth limits (DuckDB at 1,000 operands, PostgreSQL's stack near 5,000), where the
 * README promises a chain of any length inside the token limit. Concatenation is associative, NULL
 * included, so the grouping does not change the value.
 */
function concatTree(args: string[]): string {
  if (args.length <= 16) return `(${args.join(" || ")})`;
  const mid = Math.ceil(args.length / 2);
  return `(${concatTree(args.slice(0, mid))} || ${concatTree(args.slice(mid))})`;
}

/** BigQuery's GREATEST / LEAST are NULL when any argument is; the engines skip NULLs. */
const nullIfAnyNull =
  (fn: string): FunctionEmitter =>
  (args) =>
    `CASE WHEN ${args.map((a) => `(${a}) IS NULL`).join(" OR ")} THEN NULL ELSE ${fn}(${args.join(", ")}) END`;

/** A string-literal argument, known at compile time (formats, JSON paths). */
export function literalArg(call: CallExpr, i: number, what: string): string {
  const a: Expr | undefined = call.args[i];
  if (a?.k === "lit" && typeof a.value === "string") return a.value;
  throw new QesError("sql_invalid", `${call.fn} needs ${what} as a string literal.`);
}

/** Position for SUBSTR: BigQuery counts a negative position from the end and treats 0 as 1. */
function substrStart(s: string, pos: string, call: CallExpr): string {
  const p = call.args[1];
  if (p?.k === "lit" && typeof p.value === "number" && p.value > 0) return pos;
  return `CASE WHEN ${pos} < 0 THEN greatest(length(${s}) + ${pos} + 1, 1) WHEN ${pos} = 0 THEN 1 ELSE ${pos} END`;
}

/** BigQuery JSONPath (`$.a.b`, `$['a']`, `$.a[0]`) → keys; undefined keys are refused. */
export function jsonPathKeys(path: string): Array<string | number> {
  if (!path.startsWith("$")) throw new QesError("sql_invalid", `JSONPath must start with $: ${path}.`);
  const keys: Array<string | number> = [];
  let i = 1;
  while (i < path.length) {
    if (path[i] === ".") {
      let j = i + 1;
      if (path[j] === '"') {
        const end = path.indexOf('"', j + 1);
        if (end < 0) throw new QesError("sql_invalid", `Invalid JSONPath ${path}.`);
        keys.push(path.slice(j + 1, end));
        i = end + 1;
        continue;
      }
      while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
      if (j === i + 1) throw new QesError("sql_invalid", `Invalid JSONPath ${path}.`);
      keys.push(path.slice(i + 1, j));
      i = j;
    } else if (path[i] === "[") {
      const end = path.indexOf("]", i);
      if (end < 0) throw new QesError("sql_invalid", `Invalid JSONPath ${path}.`);
      const inner = path.slice(i + 1, end).trim();
      if (/^\d+$/.test(inner)) keys.push(Number(inner));
      else if (/^'.*'$|^".*"$/.test(inner)) keys.push(inner.slice(1, -1));
      else throw new QesError("sql_invalid", `Invalid JSONPath ${path}.`);
      i = end + 1;
    } else {
      throw new QesError("sql_invalid", `Invalid JSONPath ${path}.`);
    }
  }
  return keys;
}

/** Largest width or precision of a FORMAT specifier. */
export const MAX_FORMAT_WIDTH = 10_000;

/**
 * Most elements GENERATE_TIMESTAMP_ARRAY may produce for one row: each dialect refuses more at run
 * time (an engine cannot interrupt, nor count against its memory limit, one huge array).
 */
export const MAX_GENERATED_ELEMENTS = 1_000_000;

/** One FORMAT specifier: `%[flags][width][.precision]conversion`. */
export interface FormatSpec {
  flags: string;
  width?: number;
  precision?: number;
  conversion: string;
}

/**
 * FORMAT with a literal format string, expanded at compile time into a concatenation; each
 * specifier is written by the dialect (`spec`). A NULL argument prints as NULL (BigQuery).
 */
export function formatCall(
  args: string[],
  call: CallExpr,
  e: SqlEmitter,
  spec: (arg: string, argType: Expr["type"], s: FormatSpec) => string,
): string {
  const format = literalArg(call, 0, "its format");
  const pieces: string[] = [];
  let literal = "";
  let next = 1;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      literal += c;
      continue;
    }
    const m = /^%([-+ 0#']*)(\d+)?(?:\.(\d+))?([sdifxXoeEgGtT%])/.exec(format.slice(i));
    if (!m)
      throw new QesError(
        "sql_invalid",
        `FORMAT specifier at position ${i + 1} of '${format}' is not supported.`,
      );
    i += m[0].length - 1;
    // a width or precision of 999999999 is a gigabyte per value; no output needs more than this
    if (Number(m[2] ?? 0) > MAX_FORMAT_WIDTH || Number(m[3] ?? 0) > MAX_FORMAT_WIDTH) {
      throw new QesError(
        "sql_invalid",
        `FORMAT specifier ${m[0]} asks for more than ${MAX_FORMAT_WIDTH} characters.`,
      );
    }
    if (m[4] === "%") {
      literal += "%";
      continue;
    }
    if (literal) pieces.push(e.stringLiteral(literal));
    literal = "";
    const arg = args[next];
    const argExpr = call.args[next];
    next++;
    if (arg === undefined || !argExpr)
      throw new QesError("sql_invalid", `FORMAT '${format}' needs more arguments.`);
    const s: FormatSpec = {
      flags: m[1] ?? "",
      conversion: m[4]!,
      ...(m[2] !== undefined ? { width: Number(m[2]) } : {}),
      ...(m[3] !== undefined ? { precision: Number(m[3]) } : {}),
    };
    pieces.push(`coalesce(${spec(arg, argExpr.type, s)}, 'NULL')`);
  }
  if (literal) pieces.push(e.stringLiteral(literal));
  if (next !== args.length) {
    throw new QesError(
      "sql_invalid",
      `FORMAT '${format}' has ${next - 1} specifiers for ${args.length - 1} values.`,
    );
  }
  return pieces.length ? `(${pieces.join(" || ")})` : "''";
}

const WEEK_START_OFFSET: Record<string, number> = {
  MONDAY: 0,
  TUESDAY: 1,
  WEDNESDAY: 2,
  THURSDAY: 3,
  FRIDAY: 4,
  SATURDAY: 5,
  SUNDAY: 6,
};

/** The day a BigQuery week part starts on (WEEK: Sunday, ISOWEEK: Monday), or undefined. */
export function weekStartDay(part: string): string | undefined {
  if (part === "WEEK") return "SUNDAY";
  if (part.startsWith("WEEK(")) return part.slice(5, -1);
  if (part === "ISOWEEK") return "MONDAY";
  return undefined;
}

/**
 * BigQuery's week number (WEEK, WEEK(<day>)) as `floor(numerator / 7)`: weeks start on that day
 * and the days before the year's first one are week 0. `dayOfYear` is 1-based, `dayOfWeek` 0 for
 * Sunday (both engines' own numbering).
 */
export function weekNumberNumerator(dayOfYear: string, dayOfWeek: string, part: string): string {
  // days since the week's first day: 0 on that day
  const start = ((WEEK_START_OFFSET[weekStartDay(part) ?? "SUNDAY"] ?? 6) + 1) % 7;
  const intoWeek = start === 0 ? dayOfWeek : `((${dayOfWeek} + ${7 - start}) % 7)`;
  return `(${dayOfYear} + 6 - ${intoWeek})`;
}

/**
 * date_trunc by a BigQuery part. The engines' weeks start on Monday (ISOWEEK); BigQuery's WEEK
 * starts on Sunday and WEEK(<day>) on that day: shift, truncate, shift back.
 */
export function truncate(value: string, call: CallExpr, e: SqlEmitter, zoneArg?: string): string {
  const part = call.args[1]?.k === "datepart" ? call.args[1].part : "DAY";
  const trunc = (unit: string, v: string) =>
    zoneArg ? `date_trunc('${unit}', ${v}, ${zoneArg})` : `date_trunc('${unit}', ${v})`;
  const weekDay = weekStartDay(part);
  if (weekDay !== undefined) {
    const k = WEEK_START_OFFSET[weekDay] ?? 0;
    if (k === 0) return trunc("week", value);
    const shift = e.interval(e.literal(k, { t: "scalar", s: "INT64" }), "DAY");
    return `(${trunc("week", `${value} - ${shift}`)} + ${shift})`;
  }
  if (part === "ISOYEAR") throw new QesError("sql_invalid", "Truncation to ISOYEAR is not supported.");
  return trunc(part.toLowerCase(), value);
}

/**
 * Whether TIMESTAMP_TRUNC in a zone truncates by a part below a day: ZetaSQL truncates those in
 * the timestamp's own offset and takes that offset off again (TimestampTruncAtLeastMinute), so
 * each occurrence of a repeated hour truncates within itself — no wall-clock reading is placed.
 */
export function truncatesWithinOffset(call: CallExpr): boolean {
  const part = call.args[1]?.k === "datepart" ? call.args[1].part : "DAY";
  return ["HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"].includes(part);
}

const MICROS_PER: Record<string, number> = {
  MICROSECOND: 1,
  MILLISECOND: 1_000,
  SECOND: 1_000_000,
  MINUTE: 60_000_000,
  HOUR: 3_600_000_000,
  DAY: 86_400_000_000,
};

export function microsPer(call: CallExpr, i: number): number {
  const part = call.args[i];
  const unit = part?.k === "datepart" ? MICROS_PER[part.part] : undefined;
  if (!unit)
    throw new QesError(
      "sql_invalid",
      `${call.fn} supports MICROSECOND to DAY, not ${part?.k === "datepart" ? part.part : "this part"}.`,
    );
  return unit;
}

/** Emitters shared by the standard-SQL engines; dialects spread this table and override rows. */
export const DEFAULT_FUNCTIONS = {
  COUNT: (args, call) => (args.length === 0 ? "count(*)" : `count(${distinct(call)}${args[0]})`),
  SUM: (args, call, e) =>
    `CAST(sum(${distinct(call)}${args[0]})${e.overOf(call)} AS ${e.typeName(call.type.t === "scalar" ? call.type.s : "FLOAT64")})`,
  AVG: (args, call, e) => `avg(${distinct(call)}${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  MIN: ([x], call, e) => `min(${e.ordered(x!, call.args[0]!.type)})`,
  MAX: ([x], call, e) => `max(${e.ordered(x!, call.args[0]!.type)})`,
  // BigQuery leaves ANY_VALUE's choice open; every backend takes the minimum (DESIGN.md §3).
  ANY_VALUE: rename("min"),
  LOGICAL_OR: rename("bool_or"),
  LOGICAL_AND: rename("bool_and"),
  // APPROX_COUNT_DISTINCT is exact here (DESIGN.md §3).
  APPROX_COUNT_DISTINCT: ([x]) => `count(DISTINCT ${x})`,
  ROW_NUMBER: rename("row_number"),
  RANK: rename("rank"),
  DENSE_RANK: rename("dense_rank"),
  PERCENT_RANK: rename("percent_rank"),
  CUME_DIST: rename("cume_dist"),
  NTILE: rename("ntile"),
  LAG: rename("lag"),
  LEAD: rename("lead"),
  FIRST_VALUE: rename("first_value"),
  LAST_VALUE: rename("last_value"),
  COALESCE: rename("coalesce"),
  IFNULL: rename("coalesce"),
  NULLIF: rename("nullif"),
  IF: ([c, a, b]) => `CASE WHEN ${c} THEN ${a} ELSE ${b} END`,
  LOWER: rename("lower"),
  UPPER: rename("upper"),
  LENGTH: rename("length"),
  CHAR_LENGTH: rename("length"),
  STARTS_WITH: rename("starts_with"),
  CONTAINS_SUBSTR: ([a, b]) => `(strpos(lower(${a}), lower(${b})) > 0)`,
  SUBSTR: ([s, p, l], call) => `substr(${s}, ${substrStart(s!, p!, call)}${l === undefined ? "" : `, ${l}`})`,
  SUBSTRING: ([s, p, l], call) =>
    `substr(${s}, ${substrStart(s!, p!, call)}${l === undefined ? "" : `, ${l}`})`,
  LTRIM: rename("ltrim"),
  RTRIM: rename("rtrim"),
  REPLACE: rename("replace"),
  STRPOS: rename("strpos"),
  LEFT: rename("left"),
  RIGHT: rename("right"),
  REVERSE: rename("reverse"),
  // BigQuery's CONCAT is NULL when any argument is; `||` behaves so on every engine.
  CONCAT: (args) => concatTree(args),
  SAFE_DIVIDE: ([a, b], call, e) =>
    `CASE WHEN ${b} = 0 THEN NULL ELSE ${e.cast(a!, call.args[0]!.type, "FLOAT64")} / ${b} END`,
  // arguments are emitted bare: `MOD(5 + 1, 4)` must not read as `5 + 1 % 4`
  MOD: ([a, b]) => `((${a}) % (${b}))`,
  ABS: rename("abs"),
  SIGN: rename("sign"),
  FLOOR: (args, call, e) => `floor(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  CEIL: (args, call, e) => `ceil(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  CEILING: (args, call, e) => `ceil(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  SQRT: (args, call, e) => `sqrt(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  POW: ([a, b], call, e) => `power(${e.cast(a!, call.args[0]!.type, "FLOAT64")}, ${b})`,
  POWER: ([a, b], call, e) => `power(${e.cast(a!, call.args[0]!.type, "FLOAT64")}, ${b})`,
  LN: (args, call, e) => `ln(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  EXP: (args, call, e) => `exp(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  GREATEST: nullIfAnyNull("greatest"),
  LEAST: nullIfAnyNull("least"),
  // A time zone argument needs the engine's own zone arithmetic: a dialect without it refuses.
  TIMESTAMP_TRUNC: ([ts, , zone], call, e) => {
    if (zone !== undefined)
      throw new QesError(
        "function_not_allowed",
        `TIMESTAMP_TRUNC with a time zone is not supported on ${e.engineName}.`,
      );
    return truncate(ts!, call, e);
  },
  TIMESTAMP_SUB: ([ts, iv]) => `(${ts} - ${iv})`,
  TIMESTAMP_ADD: ([ts, iv]) => `(${ts} + ${iv})`,
  DATE_SUB: ([d, iv]) => `CAST(${d} - ${iv} AS DATE)`,
  DATE_ADD: ([d, iv]) => `CAST(${d} + ${iv} AS DATE)`,
  DATE_TRUNC: ([d], call, e) => `CAST(${truncate(d!, call, e)} AS DATE)`,
  DATETIME_TRUNC: ([d], call, e) => truncate(d!, call, e),
  TIMESTAMP: ([x], call, e) =>
    scalarOf(call, 0) === "TIMESTAMP" ? x! : e.cast(x!, call.args[0]!.type, "TIMESTAMP"),
  __JSON_WRAP_ARRAY: ([x]) => `('[' || ${x} || ']')`,
} satisfies Partial<FunctionTable>;
