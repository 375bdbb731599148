import { WINDOW_COUNT_ARGS, windowCountRule } from "../catalogue/window-counts.ts";
import type { Expr } from "../compile/ir.ts";
import { typeName } from "../compile/sql-type.ts";
import { QesError } from "../errors.ts";
import { canMatchEmpty, groupCannotBeEmpty } from "../sandbox/regex-empty-match.ts";
import { type CaseFoldOps, caseFoldedSql } from "./case-folding.ts";
import { printableText } from "./format-printable.ts";
import { type CallExpr, type FunctionEmitter, type FunctionTable, rename } from "./function-table.ts";
import type { SqlEmitter } from "./sql-emitter.ts";

const distinct = (call: CallExpr) => (call.agg?.distinct ? "DISTINCT " : "");
const scalarOf = (call: CallExpr, i: number) => {
  const t = call.args[i]?.type;
  return t?.t === "scalar" ? t.s : undefined;
};

/**
 * BigQuery's GREATEST / LEAST are NULL when any argument is (the engines skip NULLs), and NaN when
 * any FLOAT64 argument is NaN (DuckDB and PostgreSQL order NaN above every number, ClickHouse's
 * comparisons skip it).
 */
const nullIfAnyNull =
  (fn: string): FunctionEmitter =>
  (args, call, e) => {
    const nan =
      call.type.t === "scalar" && call.type.s === "FLOAT64"
        ? args.map((a) => ` WHEN ${e.isNaN(a)} THEN ${a}`).join("")
        : "";
    return `CASE WHEN ${args.map((a) => `(${a}) IS NULL`).join(" OR ")} THEN NULL${nan} ELSE ${fn}(${args.join(", ")}) END`;
  };

/**
 * MIN / MAX: NaN when a FLOAT64 input is NaN (BigQuery), where the engines order it above every
 * number (MIN skipped it) or skip it (ClickHouse).
 */
export function nanAwareExtreme(fn: "min" | "max", x: string, call: CallExpr, e: SqlEmitter): string {
  const type = call.args[0]!.type;
  const plain = `${fn}(${e.ordered(x, type)})`;
  if (!(type.t === "scalar" && type.s === "FLOAT64")) return plain;
  const over = e.overOf(call);
  const nan = e.cast(e.stringLiteral("NaN"), { t: "scalar", s: "STRING" }, "FLOAT64");
  return `CASE WHEN count(CASE WHEN ${e.isNaN(x)} THEN 1 END)${over} > 0 THEN ${nan} ELSE ${plain}${over} END`;
}

/** FIRST_VALUE, LAST_VALUE, NTH_VALUE, with `IGNORE NULLS` inside the call where the query asks */
function navigation(name: string): FunctionEmitter {
  return (args, call) => `${name}(${args.join(", ")}${call.ignoreNulls ? " IGNORE NULLS" : ""})`;
}

/**
 * A window function whose row count (WINDOW_COUNT_ARGS: LAG's offset, NTILE's bucket count,
 * NTH_VALUE's row number) is bound as a parameter (a literal is checked when it compiles): a NULL
 * or one below its least is BigQuery's error, where the engines answered NULL, read a negative
 * offset the other way, or raised in their own words (ClickHouse refused every parameter, a
 * Nullable count). `write(n)` is the window's SQL, its OVER placed inside, given a count the
 * engine takes (never NULL; the least where the check raises).
 */
export function checkedWindowCount(
  n: string,
  call: CallExpr,
  e: SqlEmitter,
  write: (n: string) => string,
): string {
  const count = WINDOW_COUNT_ARGS[call.fn]!;
  if (call.args[count.at]?.k === "lit") return write(n);
  return e.raiseWhen(
    write(`greatest(coalesce(${n}, ${count.least}), ${count.least})`),
    `${n} IS NULL OR ${n} < ${count.least}`,
    windowCountRule(call.fn, true),
  );
}

/** LAG or LEAD, its offset checked when it is bound (checkedWindowCount) */
function shift(name: string): FunctionEmitter {
  return ([x, offset, ...rest], call, e) =>
    offset === undefined
      ? `${name}(${x})`
      : checkedWindowCount(
          offset,
          call,
          e,
          (at) => `${name}(${[x, at, ...rest].join(", ")})${e.overOf(call)}`,
        );
}

/** BigQuery's error for OFFSET / ORDINAL outside an array (SAFE_OFFSET answers NULL) */
export const ARRAY_INDEX_OUT_OF_BOUNDS =
  "Array index is out of bounds (use SAFE_OFFSET or SAFE_ORDINAL for NULL)";

/** A string-literal argument, known at compile time (formats, JSON paths). */
export function literalArg(call: CallExpr, i: number, what: string): string {
  const a: Expr | undefined = call.args[i];
  if (a?.k === "lit" && typeof a.value === "string") return a.value;
  throw new QesError("sql_invalid", `${call.fn} needs ${what} as a string literal.`);
}

/** An engine's character-counting string functions, as SUBSTR, LEFT and RIGHT are written with them. */
export interface SubstringSpelling {
  /** characters of `s` (code points), as an INT64 */
  length: (s: string) => string;
  /** the characters of `s` from 1-based `start`, `count` of them (or to the end) */
  substring: (s: string, start: string, count?: string) => string;
  /** the first (`left`) or last `count` characters of `s` */
  edge: (side: "left" | "right", s: string, count: string) => string;
}

/** An INT64 literal from 0 to `max`: an argument that needs no guard. */
function smallLiteral(call: CallExpr, i: number, min: number): boolean {
  const a = call.args[i];
  return a?.k === "lit" && typeof a.value === "number" && a.value >= min && a.value <= 1_000_000;
}

/**
 * SUBSTR in BigQuery's semantics: a negative position counts from the end (before the start is
 * 1), 0 is 1; positions and lengths past the text are clamped to it (the engines refuse or
 * overflow on INT64's extremes: DuckDB past 2^32, PostgreSQL past 2^31); a negative length is
 * BigQuery's error.
 */
export function substrCall(
  [s, p, l]: string[],
  call: CallExpr,
  e: SqlEmitter,
  spell: SubstringSpelling,
): string {
  const length = spell.length(s!);
  // CASE, not least/greatest: those skip a NULL argument, where SUBSTR's answer is NULL. A NULL
  // text's length is NULL: the position and length are then 1 and NULL, not the arguments, which
  // PostgreSQL's CAST(… AS integer) refused past 2^31 (SUBSTR(NULL, 9223372036854775807)); with a
  // NULL position the length is the text's (SUBSTR('a', NULL, -2^63) is NULL, not an overflow)
  const start = smallLiteral(call, 1, 1)
    ? p!
    : `CASE WHEN ${s} IS NULL THEN 1 WHEN ${p} < 0 THEN CASE WHEN ${length} + ${p} >= 0 THEN ${length} + ${p} + 1 ELSE 1 END WHEN ${p} = 0 THEN 1 WHEN ${p} > ${length} THEN ${length} + 1 ELSE ${p} END`;
  if (l === undefined) return spell.substring(s!, start);
  // a NULL text or position makes the answer NULL before the length is looked at
  const count = smallLiteral(call, 2, 0)
    ? l
    : e.raiseWhen(
        `CASE WHEN ${l} > ${length} OR ${s} IS NULL OR ${p} IS NULL THEN ${length} ELSE ${l} END`,
        `${l} < 0 AND ${s} IS NOT NULL AND ${p} IS NOT NULL`,
        `Third argument in ${call.fn}() cannot be negative`,
      );
  return spell.substring(s!, start, count);
}

/**
 * DATE(year, month, day) by the engine's `makeDate` SQL, BigQuery's error (NULL under SAFE.) for a
 * day that does not exist checked first: make_date raised in the engine's own words, where SAFE.
 * could not reach it. The month's length is plain arithmetic, so the check itself cannot raise.
 */
export function checkedMakeDate([y, m, d]: string[], e: SqlEmitter, makeDate: string): string {
  const leap = `((${y}) % 4 = 0 AND (${y}) % 100 <> 0) OR (${y}) % 400 = 0`;
  const days = `CASE WHEN (${m}) IN (4, 6, 9, 11) THEN 30 WHEN (${m}) = 2 THEN CASE WHEN ${leap} THEN 29 ELSE 28 END ELSE 31 END`;
  return e.raiseWhen(
    makeDate,
    `(${m}) < 1 OR (${m}) > 12 OR (${d}) < 1 OR (${y}) < 1 OR (${y}) > 9999 OR (${d}) > ${days}`,
    "DATE(year, month, day): no such date",
  );
}

/** LEFT and RIGHT: a count past the text is the whole text; a negative count is BigQuery's error. */
export function edgeCall(
  side: "left" | "right",
  [s, n]: string[],
  call: CallExpr,
  e: SqlEmitter,
  spell: SubstringSpelling,
): string {
  const count = smallLiteral(call, 1, 0)
    ? n!
    : e.raiseWhen(
        // a NULL text's length is NULL too, not the count: PostgreSQL's CAST(… AS integer) of
        // LEFT(NULL, 9223372036854775807)'s count raised "integer out of range"
        `CASE WHEN ${n} > ${spell.length(s!)} OR ${s} IS NULL THEN ${spell.length(s!)} ELSE ${n} END`,
        `${n} < 0 AND ${s} IS NOT NULL`,
        `Second argument in ${call.fn}() cannot be negative`,
      );
  return spell.edge(side, s!, count);
}

const STANDARD_SUBSTRING: SubstringSpelling = {
  length: (s) => `length(${s})`,
  substring: (s, start, count) => `substr(${s}, ${start}${count === undefined ? "" : `, ${count}`})`,
  edge: (side, s, count) => `${side}(${s}, ${count})`,
};

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

/** FLOAT64's greatest finite value: a result past it from finite arguments is an overflow. */
function float64Max(e: SqlEmitter): string {
  return `CAST(1.7976931348623157e308 AS ${e.typeName("FLOAT64")})`;
}

/** Argument `i` of a math function as FLOAT64. */
function floatArg(args: string[], call: CallExpr, e: SqlEmitter, i = 0): string {
  return e.cast(args[i]!, call.args[i]!.type, "FLOAT64");
}

/**
 * BigQuery's math functions raise where the engines answer NaN, ±inf or NULL (ClickHouse) or
 * raise in their own words: each is written with its domain checked first (`engine` writes the
 * engine's function of the FLOAT64 arguments), so every backend refuses the same calls.
 */
export const checkedMath = {
  /** LN, LOG10: "an error if X is less than or equal to zero" */
  log(engine: (x: string) => string): FunctionEmitter {
    return (args, call, e) => {
      const x = floatArg(args, call, e);
      return e.raiseWhen(
        engine(x),
        `${x} <= 0`,
        `${call.fn}() is undefined for values less than or equal to 0`,
      );
    };
  },
  /** SQRT: "an error if X is less than 0" */
  sqrt(engine: (x: string) => string): FunctionEmitter {
    return (args, call, e) => {
      const x = floatArg(args, call, e);
      return e.raiseWhen(engine(x), `${x} < 0`, "SQRT() is undefined for negative values");
    };
  },
  /**
   * ABS: an error for INT64's least value, -2^63, whose absolute value INT64 cannot hold (BigQuery
   * raises; under SAFE. it is NULL, where the engines' own overflow errors raised through it)
   */
  abs(engine: (x: string) => string): FunctionEmitter {
    return ([x], call, e) => {
      const type = call.args[0]!.type;
      if (!(type.t === "scalar" && type.s === "INT64")) return engine(x!);
      return e.raiseWhen(
        engine(x!),
        `${x} = (-9223372036854775807 - 1)`,
        "ABS() overflows INT64: -2^63 has no absolute value in INT64",
      );
    };
  },
  /** EXP: "an error if the result overflows" (an underflow is 0) */
  exp(engine: (x: string) => string): FunctionEmitter {
    return (args, call, e) => {
      const x = floatArg(args, call, e);
      const max = float64Max(e);
      return e.raiseWhen(
        engine(x),
        `abs(${engine(x)}) > ${max} AND abs(${x}) <= ${max}`,
        "EXP() overflows FLOAT64",
      );
    };
  },
  /**
   * POW: an error for 0 to a negative power, a negative number to a non-integer power, and a
   * result past FLOAT64's range from finite arguments
   */
  pow(engine: (x: string, y: string) => string): FunctionEmitter {
    return (args, call, e) => {
      const x = floatArg(args, call, e);
      const y = floatArg(args, call, e, 1);
      const max = float64Max(e);
      const r = engine(x, y);
      const undefinedWhen = `(${x} = 0 AND ${y} < 0) OR (${x} < 0 AND abs(${x}) <= ${max} AND abs(${y}) <= ${max} AND ${y} <> floor(${y})) OR (abs(${r}) > ${max} AND abs(${x}) <= ${max} AND abs(${y}) <= ${max})`;
      return e.raiseWhen(
        r,
        undefinedWhen,
        `${call.fn}() is undefined or overflows: 0 to a negative power, a negative number to a non-integer power, or a result past FLOAT64's range`,
      );
    };
  },
};

/**
 * ROUND and TRUNC of FLOAT64 as BigQuery computes them (ZetaSQL's RoundDecimal, TruncDecimal): on
 * the binary value, scaled by 10^digits, so ROUND(2.675, 2) is 2.67 and TRUNC(0.29, 2) 0.28 (the
 * double below 2.675 and 0.29); halfway cases away from zero; a value with no fraction left at
 * that scale (past 2^52) is itself. The engines differed: PostgreSQL and ClickHouse rounded the
 * decimal text (2.68), DuckDB's TRUNC the binary value, ClickHouse's ROUND(NaN, 2) was NULL.
 */
export function decimalRounding(mode: "round" | "trunc"): FunctionEmitter {
  return ([x, n], call, e) =>
    e.once(e.cast(x!, call.args[0]!.type, "FLOAT64"), (v) => rounded(v, n, e, mode));
}

/** `decimalRounding` of the FLOAT64 `v`, which it names many times (bound once: `e.once`) */
function rounded(v: string, n: string | undefined, e: SqlEmitter, mode: "round" | "trunc"): string {
  const whole = (t: string) => (mode === "trunc" ? `(sign(${t}) * floor(abs(${t})))` : roundHalfAway(t));
  if (n === undefined) return whole(v);
  const float = (sql: string) => `CAST(${sql} AS ${e.typeName("FLOAT64")})`;
  const up = `power(${float("10")}, ${n})`;
  const down = `power(${float("10")}, -(${n}))`;
  return `CASE WHEN ${n} > 308 THEN ${v} WHEN ${n} < -308 THEN ${v} * 0 WHEN ${n} >= 0 THEN CASE WHEN abs(${v} * ${up}) >= 4503599627370496 THEN ${v} ELSE ${whole(`(${v} * ${up})`)} / ${up} END ELSE ${whole(`(${v} / ${down})`)} * ${down} END`;
}

/** The nearest whole number, halfway cases away from zero (exactly: the fraction is exact). */
function roundHalfAway(t: string): string {
  return `(CASE WHEN abs(${t}) - floor(abs(${t})) >= 0.5 THEN sign(${t}) * (floor(abs(${t})) + 1) ELSE sign(${t}) * floor(abs(${t})) END)`;
}

/** BigQuery's TIMESTAMP range in unix microseconds: 0001-01-01 to 9999-12-31 23:59:59.999999 UTC. */
const TIMESTAMP_MIN_MICROS = -62135596800000000n;
const TIMESTAMP_MAX_MICROS = 253402300799999999n;

/**
 * TIMESTAMP_SECONDS / _MILLIS / _MICROS: a count past BigQuery's TIMESTAMP range is its error
 * (the engines answered a year past 9999, an interval overflow, or a clamped instant). `engine`
 * writes the engine's conversion of the count.
 */
export function checkedTimestampFrom(microsPerUnit: number, engine: (n: string) => string): FunctionEmitter {
  return ([n], call, e) => {
    const unit = BigInt(microsPerUnit);
    // the least and greatest counts inside the range (floor and ceiling of the bounds per unit)
    const lo = -(-TIMESTAMP_MIN_MICROS / unit);
    const hi = TIMESTAMP_MAX_MICROS / unit;
    return e.raiseWhen(
      engine(n!),
      `(${n}) < ${lo} OR (${n}) > ${hi}`,
      `${call.fn}: the value is out of TIMESTAMP's range`,
    );
  };
}

/**
 * A TIMESTAMP or DATE computed by adding an interval, or BigQuery's error past its range (years 1
 * to 9999): DuckDB answered year 10000, PostgreSQL text of a year the wire cannot read ("10000-01-01
 * 01:00:00+00", "0001-12-31 BC"). `sql` is evaluated twice; the engines compute it once.
 */
function inTimestampRange(sql: string, type: "TIMESTAMP" | "DATE", call: CallExpr, e: SqlEmitter): string {
  const lo = e.timestampLiteral(TIMESTAMP_MIN_MICROS, type);
  const hi = e.timestampLiteral(
    type === "DATE" ? TIMESTAMP_MAX_MICROS - 86_399_999_999n : TIMESTAMP_MAX_MICROS,
    type,
  );
  return e.raiseWhen(
    sql,
    `${sql} < ${lo} OR ${sql} > ${hi}`,
    `${call.fn}: the result is out of ${type}'s range`,
  );
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
 * A specifier's head (`%`, flags, width, precision) for an engine's printf, with the flags C's
 * printf honours (BigQuery's FORMAT follows it): no grouping `'` (groupedInteger writes it); `-` overrides `0` (DuckDB's
 * printf padded `%-06d` with zeros); `+` and space sign only signed conversions (DuckDB's and
 * ClickHouse's wrote `%+x` of 200 as `+c8`).
 */
export function printfHead(s: FormatSpec): string {
  let flags = s.flags.replaceAll("'", "");
  if (flags.includes("-")) flags = flags.replaceAll("0", "");
  if ("xXo".includes(s.conversion)) flags = flags.replaceAll("+", "").replaceAll(" ", "");
  return `%${flags}${s.width ?? ""}${s.precision !== undefined ? `.${s.precision}` : ""}`;
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
    if (s.conversion === "t" || s.conversion === "T") {
      // the text is core's (format-printable.ts); the dialect pads it as a %s
      const text = printableText(arg, argExpr.type, s.conversion === "T", e);
      pieces.push(`coalesce(${spec(text, { t: "scalar", s: "STRING" }, { ...s, conversion: "s" })}, 'NULL')`);
      continue;
    }
    checkFormatArgument(format, s.conversion, argExpr.type);
    const printed = s.flags.includes("'")
      ? groupedInteger(arg, argExpr.type, s, format, spec)
      : spec(arg, argExpr.type, s);
    pieces.push(`coalesce(${printed}, 'NULL')`);
  }
  if (literal) pieces.push(e.stringLiteral(literal));
  if (next !== args.length) {
    throw new QesError(
      "sql_invalid",
      `FORMAT '${format}' has ${next - 1} specifiers for ${args.length - 1} values.`,
    );
  }
  if (next === 1) {
    // no specifier: a constant, written as a cast like a constant key (SqlEmitter.key) — a bare
    // literal among the ORDER BY keys that complete a cut order was DuckDB's "ORDER BY
    // non-integer literal" error
    const text: Expr["type"] = { t: "scalar", s: "STRING" };
    return e.cast(e.stringLiteral(pieces.length ? literal : ""), text, "STRING");
  }
  return `(${pieces.join(" || ")})`;
}

/** most digit groups after the first in an INT64's 19 digits */
const MAX_DIGIT_GROUPS = 6;

/**
 * `%'d` (and `%'i`): BigQuery's FORMAT groups the digits in threes with ',' (`FORMAT("%'d",
 * 12345678)` is 12,345,678); every engine's printf ignored the flag. The dialect prints the
 * integer with its sign flags and no width; the digits are grouped here, with the string
 * functions every engine shares, and the width pads the grouped text as a %s does. A zero-padded
 * width (`%'015d`, zeros outside the groups) and the grouping of %x and %o (':' and ',' in fours)
 * are refused by name rather than printed without groups.
 */
function groupedInteger(
  arg: string,
  argType: Expr["type"],
  s: FormatSpec,
  format: string,
  spec: (arg: string, argType: Expr["type"], s: FormatSpec) => string,
): string {
  if (
    !"di".includes(s.conversion) ||
    (s.flags.includes("0") && !s.flags.includes("-") && s.width !== undefined)
  )
    throw new QesError(
      "sql_invalid",
      `FORMAT '${format}': the ' flag (digit grouping) is supported with %d and %i, without zero padding.`,
    );
  const text = spec(arg, argType, { flags: s.flags.replace(/['0-]/g, ""), conversion: s.conversion });
  const signed = `substr(${text}, 1, 1) IN ('-', '+', ' ')`;
  const sign = `CASE WHEN ${signed} THEN substr(${text}, 1, 1) ELSE '' END`;
  const digits = `CASE WHEN ${signed} THEN substr(${text}, 2) ELSE ${text} END`;
  const n = `length(${digits})`;
  const first = `((${n} - 1) % 3 + 1)`;
  let grouped = `substr(${digits}, 1, ${first})`;
  for (let k = 0; k < MAX_DIGIT_GROUPS; k++)
    grouped += ` || CASE WHEN ${n} > ${first} + ${3 * k} THEN ',' || substr(${digits}, ${first} + ${3 * k + 1}, 3) ELSE '' END`;
  const whole = `(${sign} || ${grouped})`;
  if (s.width === undefined) return whole;
  const padding: FormatSpec = { flags: s.flags.includes("-") ? "-" : "", width: s.width, conversion: "s" };
  return spec(whole, { t: "scalar", s: "STRING" }, padding);
}

/**
 * BigQuery's FORMAT takes only INT64 for %d %i %x %X %o and a number for %f %e %E %g %G; %s takes
 * a STRING (other scalars print as their text here). The engines answered a FLOAT64 %d with its
 * text, its integer part or an error: refused here, on every backend.
 */
function checkFormatArgument(format: string, conversion: string, type: Expr["type"]): void {
  if (type.t === "null") return;
  const scalar = type.t === "scalar" ? type.s : undefined;
  const ok = "dixXo".includes(conversion)
    ? scalar === "INT64"
    : "feEgG".includes(conversion)
      ? scalar === "INT64" || scalar === "FLOAT64"
      : scalar !== undefined;
  if (!ok)
    throw new QesError(
      "sql_invalid",
      `FORMAT '${format}': %${conversion} cannot print a value of type ${typeName(type)}${conversion === "s" ? " (use %t)" : ""}.`,
    );
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
  if (part === "ISOYEAR") {
    // the ISO year is the year of the week's Thursday; it starts on the Monday of the week of its
    // January 4th (in a zone, days are added to midnights of early January and mid-week: no zone
    // moves its clocks there, so no hour of a transition crosses a week or a year)
    const days = (n: number) => e.interval(e.literal(n, { t: "scalar", s: "INT64" }), "DAY");
    const thursday = `(${trunc("week", value)} + ${days(3)})`;
    return trunc("week", `(${trunc("year", thursday)} + ${days(3)})`);
  }
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

/** microseconds in one of each fixed-length time unit (MICROSECOND to DAY) */
export const MICROS_PER: Readonly<Record<string, number>> = {
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

/**
 * GENERATE_TIMESTAMP_ARRAY's step, an INTERVAL of MICROSECOND to DAY as BigQuery takes (not MONTH
 * or longer, whose length varies): its microseconds per unit. Every dialect checks it, so all
 * refuse the same steps (DuckDB and PostgreSQL stepped by months where ClickHouse refused): its
 * amount and the microseconds of its unit.
 */
export function timestampArrayStep(call: CallExpr): { amount: Expr; micros: number } {
  const step = call.args[2];
  if (step?.k !== "interval") throw new QesError("sql_invalid", `${call.fn} needs an INTERVAL step.`);
  const micros = microsPer({ ...call, args: [{ k: "datepart", part: step.unit, type: step.type }] }, 0);
  return { amount: step.value, micros };
}

/** BigQuery's error for GENERATE_TIMESTAMP_ARRAY's step of 0, raised by every dialect */
export const ZERO_TIMESTAMP_STEP = "GENERATE_TIMESTAMP_ARRAY: the step must not be 0";

function balancedConcat(args: string[], from: number, to: number): string {
  if (to - from === 1) return `(${args[from]})`;
  const mid = (from + to) >> 1;
  return `(${balancedConcat(args, from, mid)} || ${balancedConcat(args, mid, to)})`;
}

function isFloat64Type(e: Expr): boolean {
  return e.type.t === "scalar" && e.type.s === "FLOAT64";
}

/**
 * AVG (`aggregate`, its OVER placed) of FLOAT64 `x`: an error where it is not finite and every
 * value is (BigQuery: "If there is numeric overflow, produces an error"). A sum of the values
 * scaled by 2^-64 beside it tells that: it cannot overflow (2^63 values of at most 2^960 each), so
 * it is finite exactly when they all are. INT64 values cannot overflow AVG.
 */
export function floatAggregate(aggregate: string, x: string, call: CallExpr, e: SqlEmitter): string {
  if (!isFloat64Type(call.args[0]!)) return aggregate;
  return e.floatOverflow(aggregate, [`sum((${x}) * ${e.literal(2 ** -64, FLOAT64_TYPE)})${e.overOf(call)}`]);
}

const FLOAT64_TYPE = { t: "scalar", s: "FLOAT64" } as const;

/**
 * SUM of FLOAT64 `x` for engines that answer ±inf past the range (SqlEmitter.floatSum): the sum of
 * the values scaled by 2^-64, scaled back. One aggregate tells both the sum and whether it
 * overflowed: the scaled sum cannot (2^63 values of at most 2^960 each), so it is finite exactly
 * when every value is, and the sum overflowed where scaling it back is not finite. Scaling by a
 * power of two is exact, so the sum is the plain one's, bit for bit — but for values and partial
 * sums below 2^-958 (1e-288), which the scaling makes subnormal. A second aggregate beside the sum
 * (max(abs(x)), or the scaled sum) evaluated `x` twice per row: DuckDB, 1M rows of SUM(y * 1.5 +
 * y - 0.5), 1.5× the unchecked query.
 */
export function scaledFloatSum(x: string, distinct: string, over: string, e: SqlEmitter): string {
  const scaled = `sum(${distinct}(${x}) * ${e.literal(2 ** -64, FLOAT64_TYPE)})${over}`;
  return e.once(scaled, (s) =>
    e.floatOverflow(`CAST(${s} * ${e.literal(2 ** 64, FLOAT64_TYPE)} AS ${e.typeName("FLOAT64")})`, [s]),
  );
}

/**
 * Whether REGEXP_REPLACE's pattern may match the empty string (canMatchEmpty): a literal that
 * cannot is replaced the engine's own way; a parameter or a computed pattern may.
 */
export function mayMatchEmpty(call: CallExpr): boolean {
  const arg = call.args[1];
  return !(arg?.k === "lit" && typeof arg.value === "string") || canMatchEmpty(arg.value);
}

/**
 * REGEXP_EXTRACT's `extracted` text of an engine that writes '' for a capturing group that took
 * no part in the match, as BigQuery's NULL — where the group cannot capture '' (groupCannotBeEmpty),
 * so that '' says so. A group that can (`a(x*)?b`) stays '' there.
 */
export function unsetGroupAsNull(extracted: string, call: CallExpr): string {
  const arg = call.args[1];
  const literal = arg?.k === "lit" && typeof arg.value === "string" ? arg.value : undefined;
  return literal !== undefined && groupCannotBeEmpty(literal) ? `NULLIF(${extracted}, '')` : extracted;
}

/** Emitters shared by the standard-SQL engines; dialects spread this table and override rows. */
export const DEFAULT_FUNCTIONS = {
  COUNT: (args, call) => (args.length === 0 ? "count(*)" : `count(${distinct(call)}${args[0]})`),
  SUM: (args, call, e) =>
    isFloat64Type(call.args[0]!)
      ? e.floatSum(args[0]!, distinct(call), e.overOf(call))
      : `CAST(sum(${distinct(call)}${args[0]})${e.overOf(call)} AS ${e.typeName(call.type.t === "scalar" ? call.type.s : "FLOAT64")})`,
  AVG: (args, call, e) =>
    floatAggregate(
      `avg(${distinct(call)}${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})${e.overOf(call)}`,
      args[0]!,
      call,
      e,
    ),
  MIN: ([x], call, e) => nanAwareExtreme("min", x!, call, e),
  MAX: ([x], call, e) => nanAwareExtreme("max", x!, call, e),
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
  NTILE: ([n], call, e) => checkedWindowCount(n!, call, e, (at) => `ntile(${at})${e.overOf(call)}`),
  LAG: shift("lag"),
  LEAD: shift("lead"),
  __CHECK_INDEX: ([value, i, length], _call, e) =>
    e.raiseWhen(value!, `${i} < 0 OR ${i} >= ${length}`, ARRAY_INDEX_OUT_OF_BOUNDS),
  FIRST_VALUE: navigation("first_value"),
  LAST_VALUE: navigation("last_value"),
  NTH_VALUE: ([x, n], call, e) =>
    checkedWindowCount(n!, call, e, (at) => `${navigation("nth_value")([x!, at], call, e)}${e.overOf(call)}`),
  COALESCE: rename("coalesce"),
  IFNULL: rename("coalesce"),
  NULLIF: rename("nullif"),
  IF: ([c, a, b]) => `CASE WHEN ${c} THEN ${a} ELSE ${b} END`,
  LOWER: rename("lower"),
  UPPER: rename("upper"),
  LENGTH: rename("length"),
  CHAR_LENGTH: rename("length"),
  STARTS_WITH: rename("starts_with"),
  // BigQuery compares the case-folded texts (case-folding.ts)
  CONTAINS_SUBSTR: ([a, b], _call, e) => {
    const ops: CaseFoldOps = {
      lower: "lower",
      ascii: (x) => `octet_length(${x}) = char_length(${x})`,
      literal: (s) => e.stringLiteral(s),
    };
    return `(strpos(${caseFoldedSql(a!, ops)}, ${caseFoldedSql(b!, ops)}) > 0)`;
  },
  SUBSTR: (args, call, e) => substrCall(args, call, e, STANDARD_SUBSTRING),
  SUBSTRING: (args, call, e) => substrCall(args, call, e, STANDARD_SUBSTRING),
  LTRIM: rename("ltrim"),
  RTRIM: rename("rtrim"),
  REPLACE: rename("replace"),
  STRPOS: rename("strpos"),
  LEFT: (args, call, e) => edgeCall("left", args, call, e, STANDARD_SUBSTRING),
  RIGHT: (args, call, e) => edgeCall("right", args, call, e, STANDARD_SUBSTRING),
  REVERSE: rename("reverse"),
  // BigQuery's CONCAT is NULL when any argument is; `||` behaves so on every engine. Grouped as a
  // balanced tree (`||` is associative): an engine parses a flat chain one level per operand, and
  // a `||` chain of 5,000 passed DuckDB's expression depth (1,000) and PostgreSQL's stack.
  // BigQuery casts every non-STRING argument to STRING: each through the dialect's CAST, so that
  // CONCAT(1e21, '') is CAST(1e21 AS STRING) ('1e+21') where an engine's own `||` wrote its own
  // text of a DOUBLE ('1e21', '0.0'), of a boolean ('1') or of a timestamp, or had no `||` for two.
  CONCAT: (args, call, e) =>
    balancedConcat(
      args.map((a, i) => {
        const type = call.args[i]!.type;
        return type.t === "scalar" && type.s !== "STRING" ? e.cast(a, type, "STRING") : a;
      }),
      0,
      args.length,
    ),
  // a quotient past FLOAT64's range is NULL too
  SAFE_DIVIDE: ([a, b], call, e) =>
    `CASE WHEN ${b} = 0 THEN NULL ELSE ${e.floatOverflow(
      `${e.cast(a!, call.args[0]!.type, "FLOAT64")} / ${b}`,
      [a!, b!].filter((_, i) => isFloat64Type(call.args[i]!)),
      true,
    )} END`,
  // arguments are emitted bare: `MOD(5 + 1, 4)` must not read as `5 + 1 % 4`
  // BigQuery: MOD(x, 0) raises; MOD(x, -1) is 0, also for -2^63 (whose division overflows)
  MOD: ([a, b], _call, e) =>
    `CASE WHEN (${b}) = -1 THEN (${a}) * 0 ELSE ((${a}) % ${e.divisor(`(${b})`, `(${a})`)}) END`,
  ABS: checkedMath.abs((x) => `abs(${x})`),
  // SIGN(NaN) is NaN (BigQuery); DuckDB and PostgreSQL answered 0, ClickHouse 1. SIGN(INT64) is
  // an INT64: PostgreSQL's sign(bigint) is a double precision (TIMESTAMP_MICROS(SIGN(x)) failed)
  SIGN: ([x], call, e) =>
    call.type.t === "scalar" && call.type.s === "FLOAT64"
      ? `CASE WHEN ${e.isNaN(x!)} THEN ${x} ELSE sign(${x}) END`
      : e.cast(`sign(${x})`, call.type, "INT64"),
  FLOOR: (args, call, e) => `floor(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  CEIL: (args, call, e) => `ceil(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  CEILING: (args, call, e) => `ceil(${e.cast(args[0]!, call.args[0]!.type, "FLOAT64")})`,
  SQRT: checkedMath.sqrt((x) => `sqrt(${x})`),
  POW: checkedMath.pow((x, y) => `power(${x}, ${y})`),
  POWER: checkedMath.pow((x, y) => `power(${x}, ${y})`),
  LN: checkedMath.log((x) => `ln(${x})`),
  EXP: checkedMath.exp((x) => `exp(${x})`),
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
  TIMESTAMP_SUB: ([ts, iv], call, e) => inTimestampRange(`(${ts} - ${iv})`, "TIMESTAMP", call, e),
  TIMESTAMP_ADD: ([ts, iv], call, e) => inTimestampRange(`(${ts} + ${iv})`, "TIMESTAMP", call, e),
  DATE_SUB: ([d, iv], call, e) => inTimestampRange(`CAST(${d} - ${iv} AS DATE)`, "DATE", call, e),
  DATE_ADD: ([d, iv], call, e) => inTimestampRange(`CAST(${d} + ${iv} AS DATE)`, "DATE", call, e),
  DATE_TRUNC: ([d], call, e) => `CAST(${truncate(d!, call, e)} AS DATE)`,
  DATETIME_TRUNC: ([d], call, e) => truncate(d!, call, e),
  TIMESTAMP: ([x], call, e) =>
    scalarOf(call, 0) === "TIMESTAMP" ? x! : e.cast(x!, call.args[0]!.type, "TIMESTAMP"),
  __JSON_WRAP_ARRAY: ([x]) => `('[' || ${x} || ']')`,
} satisfies Partial<FunctionTable>;
