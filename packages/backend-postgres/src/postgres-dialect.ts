import {
  ADDRESS_CHARS,
  ADDRESS_PATTERN,
  ADDRESS_PATTERN_WITHOUT_PERCENT,
  type CallExpr,
  checkedMakeDate,
  checkedMath,
  checkedTimestampFrom,
  checkedWindowCount,
  DEFAULT_FUNCTIONS,
  dateFormatForTimestamp,
  dateParseFormat,
  datetimeFormat,
  decimalRounding,
  ESCAPE_MARK_CODE_POINT,
  edgeCall,
  type FormatSpec,
  type FunctionTable,
  formatCall,
  formatTimestampMicros,
  IPV4_ADDRESS_PATTERN,
  IPV6_HINT_PATTERN,
  isPlainPattern,
  JSON_ESCAPE_PATTERN,
  jsonPathKeys,
  literalArg,
  MAX_GENERATED_ELEMENTS,
  mayMatchEmpty,
  microsPer,
  nanAwareExtreme,
  type Once,
  offsetMinutesSql,
  offsetSplit,
  QesError,
  RAISED_MESSAGE_MARK,
  REDACTED,
  REPLACE_MARKS,
  readingFormat,
  readsInstant,
  rename,
  type ScalarType,
  SqlEmitter,
  type SqlType,
  type SubstringSpelling,
  substrCall,
  timeFormatRegex,
  timestampArrayStep,
  truncate,
  weekNumberNumerator,
  weekStartDay,
  ZERO_TIMESTAMP_STEP,
} from "@qes/core";
import { bindAlways, bindOnce } from "./postgres-bind-once.ts";
import {
  JSON_PIECES,
  postgresFloatText,
  postgresJsonNumbersAsCore,
  postgresJsonNumberText,
} from "./postgres-float-text.ts";
import { jsonArrayText, jsonObjectText } from "./postgres-json-object.ts";
import { PATTERN_TOKEN, perlClassOutside, toPostgresRegex, WORD_BOUNDARIES } from "./postgres-regex.ts";
import { JSON_OR_NULL } from "./postgres-sql.ts";
import { PG_COLUMN_TYPES } from "./postgres-storage.ts";
import { formatTimestampSql, translateTimeFormat } from "./postgres-time-format.ts";
import { postgresFromLocal, postgresZone, postgresZoneText } from "./postgres-time-zone.ts";

/** Positions and counts are integers on PostgreSQL (clamped to the text first, by substrCall). */
const PG_SUBSTRING: SubstringSpelling = {
  length: (s) => `char_length(${s})`,
  substring: (s, start, count) =>
    `substr(${s}, CAST(${start} AS integer)${count === undefined ? "" : `, CAST(${count} AS integer)`})`,
  edge: (side, s, count) => `${side}(${s}, CAST(${count} AS integer))`,
};

/**
 * printf's %g of a float8 with to_char alone: P significant digits (6 by default, at least 1);
 * the exponent X of the value rounded to them (read from its %e text) picks fixed notation with
 * P-1-X decimals when -4 ≤ X < P, else %e with P-1; trailing zeros go.
 */
function postgresShortestFormat(x: string, precision: number | undefined): string {
  const p = precision === undefined ? 6 : Math.max(precision, 1);
  const eMask = `'9${p > 1 ? `.${"9".repeat(p - 1)}` : ""}EEEE'`;
  const eText = `ltrim(to_char(CAST(${x} AS float8), ${eMask}))`;
  const exponent = `CAST(split_part(${eText}, 'e', 2) AS integer)`;
  const decimals = `(${p - 1} - ${exponent})`;
  const fixedMask = `'FM${"9".repeat(16)}0' || CASE WHEN ${decimals} > 0 THEN '.' || repeat('0', ${decimals}) ELSE '' END`;
  const fixed = `to_char(CAST(${x} AS float8), ${fixedMask})`;
  const trimmedFixed = `CASE WHEN ${fixed} LIKE '%.%' THEN regexp_replace(${fixed}, '\\.?0+$', '') ELSE ${fixed} END`;
  const trimmedExp = `regexp_replace(${eText}, '\\.?0+e', 'e')`;
  return `CASE WHEN ${exponent} >= -4 AND ${exponent} < ${p} THEN ${trimmedFixed} ELSE ${trimmedExp} END`;
}

/**
 * ln of the largest magnitude a double rounds to 0 (2^-1075, halfway to the smallest subnormal,
 * rounds to even: 0). PostgreSQL raises "underflow" where a product, quotient or power of
 * non-zero values is 0; BigQuery, as IEEE, answers 0.
 */
const LN_ROUNDS_TO_ZERO = "-745.1332191019411";

/** power(), with an underflow 0 (PostgreSQL raises on one): |x|^y at most 2^-1075 */
function postgresPower(x: string, y: string): string {
  const log = `${y} * ln(abs(${x}))`;
  return `CASE WHEN ${x} <> 0 AND ${log} <= ${LN_ROUNDS_TO_ZERO} THEN 0 WHEN ${x} <> 0 AND ${overflows(log)} THEN ${OVERFLOWED} ELSE power(${x}, ${y}) END`;
}

/**
 * PostgreSQL raises on a FLOAT64 overflow itself, so that the checks of EXP and POW (checkedMath:
 * an error, NULL under SAFE.) never saw it: past ln of FLOAT64's largest value the result is
 * infinite without asking, and the checks take it from there.
 */
const OVERFLOWED = "'Infinity'::float8";

/** an exponent past ln(FLOAT64 max), finite: PostgreSQL orders NaN above every number */
function overflows(exponent: string): string {
  return `(${exponent} > 709.782712893384 AND ${exponent} <= 1.7976931348623157e308)`;
}

/** A JSON string (kept, group 1) or white space between tokens (dropped). */
const JSON_SPACE_OUTSIDE_STRINGS = String.raw`("(?:[^"\\]|\\.)*")|[ \t\n\r]+`;

/** SQL type of each scalar: the storage column types (one table for DDL and queries). */
const TYPE_NAMES: Record<ScalarType, string> = PG_COLUMN_TYPES;

const INTERVAL_UNIT: Record<string, string> = {
  MICROSECOND: "1 microsecond",
  MILLISECOND: "1 millisecond",
  SECOND: "1 second",
  MINUTE: "1 minute",
  HOUR: "1 hour",
  DAY: "1 day",
  WEEK: "7 days",
  MONTH: "1 month",
  QUARTER: "3 months",
  YEAR: "1 year",
};

/** any character that makes a pattern more than its characters (core's isPlainPattern), in ARE */
const PATTERN_METACHARACTER = String.raw`[\\^$.|?*+()[\]{}]`;

// Text that casts without error; everything else is NULL (SAFE_CAST and DESIGN.md §3's casts).
const INT_TEXT_18 = "'^\\s*[+-]?[0-9]{1,18}\\s*$'";
const INT_TEXT = "'^\\s*[+-]?[0-9]+\\s*$'";
const INT64_MIN = "-9223372036854775808";
const INT64_MAX = "9223372036854775807";
/** INT64's range as doubles: [-2^63, 2^63), both exact */
const INT64_MIN_DOUBLE = "CAST(-9223372036854775808 AS double precision)";
const INT64_END_DOUBLE = "CAST(9223372036854775808 AS double precision)";

/**
 * A double rounded half away from zero, as BigQuery's CAST to INT64 does (a double's own cast
 * rounds half to even), in double arithmetic, which is exact here: through numeric, a double
 * keeps 15 significant digits, so 4503599627370497.0 (2^52 + 1) became 4503599627370500 and a
 * microsecond time held as FLOAT64 lost its last digit.
 */
function roundedDouble(v: string): string {
  return `(trunc(${v}) + CASE WHEN abs(${v} - trunc(${v})) >= 0.5 THEN sign(${v}) ELSE 0 END)`;
}
const FLOAT_TEXT = "'^\\s*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?\\s*$'";
const HEX_TEXT_15 = "'^\\s*[+-]?0[xX][0-9a-fA-F]{1,15}\\s*$'";
/** the names BigQuery reads as FLOAT64 (and PostgreSQL too, but for the sign of a NaN) */
const FLOAT_NAMES = "'^\\s*[+-]?(inf|infinity|nan)\\s*$'";

/**
 * Text as FLOAT64: past FLOAT64's range it is ±infinity, below its least magnitude ±0, as
 * BigQuery (and DuckDB, ClickHouse) read it; PostgreSQL's cast raises "out of range". Text that
 * is no number is NULL (`safe`) or the cast's own error.
 */
function postgresFloatFromText(expr: string, safe: boolean): string {
  const n = `CAST(${expr} AS numeric)`;
  const number = `CASE WHEN abs(${n}) > 1.7976931348623157e308 THEN sign(${n}) * CAST('Infinity' AS double precision) WHEN ${n} <> 0 AND abs(${n}) < 2.4703282292062328e-324 THEN 0 ELSE CAST(${expr} AS double precision) END`;
  const name = `CASE WHEN ${expr} ~* 'nan' THEN CAST('NaN' AS double precision) ELSE CAST(${expr} AS double precision) END`;
  return `CASE WHEN ${expr} ~ ${FLOAT_TEXT} THEN ${number} WHEN ${expr} ~* ${FLOAT_NAMES} THEN ${name} ${safe ? "" : `ELSE CAST(${expr} AS double precision) `}END`;
}

const TIMESTAMP_TEXT =
  "'^\\s*[0-9]{4}-(0?[1-9]|1[0-2])-(0?[1-9]|[12][0-9]|3[01])([ Tt]([01]?[0-9]|2[0-3]):[0-5]?[0-9](:[0-5]?[0-9]([.][0-9]+)?)?)?\\s*(Z|z|UTC|[+-][0-9]{1,2}(:?[0-9]{2})?)?\\s*$'";

/**
 * PostgreSQL. Sessions may run in any time zone: every TIMESTAMP is built or truncated in UTC
 * explicitly, so results never depend on the server's TimeZone.
 */
export class PostgresDialect extends SqlEmitter {
  /** `x * y`, `x / y` with an underflow 0 (LN_ROUNDS_TO_ZERO): PostgreSQL raises on one */
  protected override floatProduct(x: string, op: "*" | "/", y: string, mayUnderflow: boolean): string {
    if (!mayUnderflow) return `${x} ${op} ${y}`;
    const log = `ln(abs(${x})) ${op === "*" ? "+" : "-"} ln(abs(${y}))`;
    return `CASE WHEN ${x} <> 0 AND ${y} <> 0 AND ${log} <= ${LN_ROUNDS_TO_ZERO} THEN 0 ELSE ${x} ${op} ${y} END`;
  }

  readonly name = "postgres";

  /** a long value read once through a scalar subquery (postgres-bind-once.ts) */
  override once(value: string, body: (v: string) => string): string {
    return bindOnce(value, body);
  }

  /** `once` for the SQL builders of other modules */
  private readonly bound: Once = (value, body) => this.once(value, body);

  override get engineName(): string {
    return "PostgreSQL";
  }

  /** Zone parameters are bound with an offset's sign as PostgreSQL reads it (postgres-time-zone.ts). */
  bindZone(zone: string): string {
    return postgresZoneText(zone);
  }

  /** RE2 pattern parameters are bound in RE2's newline behaviour (postgres-regex.ts). */
  bindPattern(pattern: string): string {
    return toPostgresRegex(pattern);
  }

  // PARSE_TIMESTAMP (and PARSE_DATE's reading): to_timestamp reads the text in the session's zone
  // (UTC); the civil time it gives is then placed in the zone argument, unless the text carried
  // its offset. An offset (%z, %Ez) is taken out of the text and applied here: TZHTZM reads
  // neither Z nor +HH:MM, and after SS.US it took '+0530' for the fraction .053 and dropped the
  // offset.
  private readonly parseTimestamp = ([, s, zone]: string[], call: CallExpr): string => {
    const format = readingFormat(literalArg(call, 0, "its format"));
    const z = zone === undefined || readsInstant(format) ? "'UTC'" : postgresZone(zone);
    const split = offsetSplit(format);
    const re = split && this.stringLiteral(split.re);
    const text = split ? `regexp_replace(${s}, ${re}, ${this.stringLiteral(split.keep)})` : s;
    const pattern = this.stringLiteral(translateTimeFormat(split?.civil ?? format));
    const read = `to_timestamp(${text}, ${pattern})::timestamp`;
    // SAFE.: to_timestamp raises on a field out of range in text that matches the format (day 30
    // of February); jsonpath's .datetime() reads the same template and, silent, is NULL there
    const jsonPath = this.stringLiteral(
      `$.datetime(${JSON.stringify(translateTimeFormat(split?.civil ?? format))})`,
    );
    const readable = `jsonb_path_query_first(to_jsonb(CAST(${text} AS text)), ${jsonPath}, '{}', true)`;
    const civil = this.inSafeCall ? `(CASE WHEN ${readable} IS NULL THEN NULL ELSE ${read} END)` : read;
    const offset = `coalesce((regexp_match(${s}, ${re}))[${split?.offsetGroup}], '')`;
    // to_timestamp reads what it can and skips the rest: text the format does not describe
    // whole is BigQuery's error here, not an answer (the offset, if any, included)
    const value = this.raiseWhen(
      split ? `(${civil} - make_interval(mins => ${offsetMinutesSql(offset, "integer")}))` : civil,
      `${s} !~ ${this.stringLiteral(timeFormatRegex(format))}`,
      `${call.fn}: the text does not match the format`,
    );
    return postgresFromLocal(value, z);
  };

  readonly functions: FunctionTable = {
    ...DEFAULT_FUNCTIONS,
    COUNT: ([x], call) => {
      if (x === undefined) return "count(*)";
      if (call.over && call.agg?.distinct) return this.windowDistinctCount(x, call);
      return `count(${call.agg?.distinct ? "DISTINCT " : ""}${x})`;
    },
    COUNTIF: ([c]) => `count(*) FILTER (WHERE ${c})`,
    // PostgreSQL raises on a quotient past FLOAT64's range itself: SAFE_DIVIDE's NULL for it is
    // decided before dividing (a divisor below 1 that the finite dividend's magnitude outgrows)
    SAFE_DIVIDE: ([a, b], call) => {
      const x = this.cast(a!, call.args[0]!.type, "FLOAT64");
      // abs() of an INT64 divisor of -2^63 raised "bigint out of range"
      const y = this.cast(b!, call.args[1]!.type, "FLOAT64");
      const max = "CAST(1.7976931348623157e308 AS double precision)";
      const fractional = call.args[0]!.type.t === "scalar" && call.args[0]!.type.s === "FLOAT64";
      return `CASE WHEN ${b} = 0 THEN NULL WHEN abs(${y}) < 1 AND abs(${x}) <= ${max} AND abs(${x}) > ${max} * abs(${y}) THEN NULL ELSE ${this.floatProduct(x, "/", y, fractional)} END`;
    },
    LENGTH: rename("char_length"),
    ENDS_WITH: ([a, b]) => `(right(${a}, char_length(${b})) = ${b})`,
    REGEXP_CONTAINS: ([s, p], call) => {
      // A pattern of plain characters is a substring test: strpos skips the regex engine, which
      // costs several times more per row (it widens every subject to pg_wchar first).
      const pattern = call.args[1];
      if (pattern?.k === "lit" && typeof pattern.value === "string" && isPlainPattern(pattern.value)) {
        return `(strpos(${s}, ${p}) > 0)`;
      }
      // A bound pattern is often plain too (usage.api-counts' project ref). Which it is is decided
      // once per query, in an InitPlan, so each row pays only for the branch taken. A plain value
      // is bound unchanged (toPostgresRegex rewrites only metacharacters).
      if (pattern?.k === "param") {
        return `(CASE WHEN (SELECT ${p} !~ ${this.stringLiteral(PATTERN_METACHARACTER)}) THEN strpos(${s}, ${p}) > 0 ELSE ${s} ~ ${p} END)`;
      }
      return `(${s} ~ ${this.regex(p!, call)})`;
    },
    TIMESTAMP_TRUNC: ([ts, , zone], call) =>
      call.args[0]?.type.t === "scalar" && call.args[0].type.s === "TIMESTAMP"
        ? truncate(ts!, call, this, postgresZone(zone))
        : truncate(ts!, call, this),
    DATETIME: (args, call) => {
      const from = call.args[0]?.type;
      if (from?.t === "scalar" && from.s === "TIMESTAMP")
        return `(${args[0]} AT TIME ZONE ${postgresZone(args[1])})`;
      return `CAST(${args[0]} AS timestamp)`;
    },
    DATE: (args, call) => {
      if (args.length === 3)
        return checkedMakeDate(
          args,
          this,
          `make_date(${args.map((a) => `CAST(${a} AS integer)`).join(", ")})`,
        );
      const from = call.args[0]?.type;
      if (from?.t === "scalar" && from.s === "TIMESTAMP")
        return `CAST(${args[0]} AT TIME ZONE ${postgresZone(args[1])} AS date)`;
      return `CAST(${args[0]} AS date)`;
    },
    // extract() returns numeric since PostgreSQL 14: exact to the microsecond.
    UNIX_MICROS: ([ts]) => `CAST(extract(epoch FROM ${ts}) * 1000000 AS bigint)`,
    // whole seconds and the rest apart: bigint * interval multiplies in float8, which rounded
    // 253402300799999999 µs (9999-12-31 23:59:59.999999) up to year 10000
    TIMESTAMP_MICROS: checkedTimestampFrom(1, (n) => epochPlus(n, 1_000_000, "1 microsecond")),
    // json has no ordering: a record's (or an event array's) JSON text is taken as text, as the
    // other engines take it
    ANY_VALUE: (args, call) =>
      call.type.t === "scalar" && call.type.s === "BOOL"
        ? `bool_and(${args[0]})`
        : isJsonText(call, 0)
          ? `CAST(min(CAST(${args[0]} AS text) COLLATE "C") AS json)`
          : `min(${args[0]})`,
    MIN: (args, call) =>
      call.type.t === "scalar" && call.type.s === "BOOL"
        ? `bool_and(${args[0]})`
        : nanAwareExtreme("min", args[0]!, call, this),
    MAX: (args, call) =>
      call.type.t === "scalar" && call.type.s === "BOOL"
        ? `bool_or(${args[0]})`
        : nanAwareExtreme("max", args[0]!, call, this),
    APPROX_COUNT_DISTINCT: ([x], call) =>
      call.over ? this.windowDistinctCount(x!, call) : `count(DISTINCT ${x})`,
    // ntile takes an integer on PostgreSQL; BigQuery's argument is INT64
    NTILE: ([n], call) =>
      checkedWindowCount(n!, call, this, (at) => `ntile(CAST(${at} AS integer))${this.overOf(call)}`),
    LAG: (args, call) => this.shiftCall("lag", args, call),
    LEAD: (args, call) => this.shiftCall("lead", args, call),
    UNIX_MILLIS: ([ts]) => `CAST(floor(extract(epoch FROM ${ts}) * 1000) AS bigint)`,
    UNIX_SECONDS: ([ts]) => `CAST(floor(extract(epoch FROM ${ts})) AS bigint)`,
    TIMESTAMP_MILLIS: checkedTimestampFrom(1000, (n) => epochPlus(n, 1000, "1 millisecond")),
    TIMESTAMP_SECONDS: checkedTimestampFrom(
      1_000_000,
      (n) => `(TIMESTAMPTZ 'epoch' + (${n}) * INTERVAL '1 second')`,
    ),
    TIMESTAMP_DIFF: ([a, b], call) => `((${this.micros(a!)} - ${this.micros(b!)}) / ${microsPer(call, 2)})`,
    // BigQuery counts the part's boundaries crossed from b to a
    DATE_DIFF: ([a, b], call) => {
      const part = call.args[2]?.k === "datepart" ? call.args[2].part : "";
      if (part === "DAY") return `CAST(${a} - ${b} AS bigint)`;
      if (weekStartDay(part)) {
        const start = (d: string) =>
          `CAST(${truncate(d!, { ...call, args: [call.args[0]!, call.args[2]!] }, this)} AS date)`;
        return `CAST((${start(a!)} - ${start(b!)}) / 7 AS bigint)`;
      }
      const months = (d: string) => `(extract(year FROM ${d}) * 12 + extract(month FROM ${d}))`;
      if (part === "MONTH") return `CAST(${months(a!)} - ${months(b!)} AS bigint)`;
      const quarters = (d: string) => `(extract(year FROM ${d}) * 4 + extract(quarter FROM ${d}))`;
      if (part === "QUARTER") return `CAST(${quarters(a!)} - ${quarters(b!)} AS bigint)`;
      if (part === "YEAR") return `CAST(extract(year FROM ${a}) - extract(year FROM ${b}) AS bigint)`;
      if (part === "ISOYEAR")
        return `CAST(extract(isoyear FROM ${a}) - extract(isoyear FROM ${b}) AS bigint)`;
      throw new QesError("sql_invalid", `DATE_DIFF by ${part} is not supported.`);
    },
    FORMAT_TIMESTAMP: ([, ts, zone], call) =>
      formatTimestampSql(literalArg(call, 0, "its format"), ts!, zone, (x) => this.stringLiteral(x)),
    TIMESTAMP: (args, call) => {
      const t = call.args[0]?.type;
      if (t?.t === "scalar" && t.s === "STRING") {
        const s = typedLiteral(args[0]!);
        const zone = postgresZone(args[1]);
        // An explicit offset in the text wins over the zone argument.
        const ts = `CASE WHEN ${s} ~ '(Z|UTC|[+-][0-9]{1,2}(:?[0-9]{2})?)\\s*$' AND ${s} ~ '[0-9]:[0-9]' THEN CAST(${s} AS timestamptz) ELSE ${postgresFromLocal(`CAST(${s} AS timestamp)`, zone)} END`;
        // SAFE.TIMESTAMP: text that is no timestamp is NULL, as SAFE_CAST reads it
        return this.inSafeCall ? validDateThen(s, ts) : ts;
      }
      if (t?.t === "scalar" && t.s !== "TIMESTAMP")
        return postgresFromLocal(`CAST(${args[0]} AS timestamp)`, postgresZone(args[1]));
      return args[0]!;
    },
    PARSE_TIMESTAMP: (args, call) => this.parseTimestamp(args, call),
    // BigQuery: the date of PARSE_TIMESTAMP in UTC
    PARSE_DATE: ([f, s], call) => {
      dateParseFormat(literalArg(call, 0, "its format"));
      return `CAST(${this.parseTimestamp([f!, s!], call)} AT TIME ZONE 'UTC' AS date)`;
    },
    // the civil time read as UTC's: its fields are written as they are
    FORMAT_DATETIME: ([, d], call) =>
      formatTimestampSql(
        datetimeFormat(literalArg(call, 0, "its format")),
        postgresFromLocal(d!, "'UTC'"),
        undefined,
        (x) => this.stringLiteral(x),
      ),
    // BigQuery: FORMAT_TIMESTAMP at midnight UTC, time elements written as their own text
    FORMAT_DATE: ([, d], call) =>
      formatTimestampSql(
        dateFormatForTimestamp(literalArg(call, 0, "its format")),
        postgresFromLocal(`CAST(${d} AS timestamp)`, "'UTC'"),
        undefined,
        (x) => this.stringLiteral(x),
      ),
    // More elements than the limit are an error, as on DuckDB. PostgreSQL has no error function:
    // the message is cast to integer, and names the arguments so that it is never a constant the
    // planner would fold (and raise) while the condition is still undecided.
    GENERATE_TIMESTAMP_ARRAY: ([a, b, step], call) => {
      timestampArrayStep(call);
      // a span against the step's direction is an empty array, however long (abs() counted it)
      const span = `(extract(epoch FROM ${b}) - extract(epoch FROM ${a}))`;
      const tooMany = `sign(${span}) * sign(extract(epoch FROM ${step})) >= 0 AND abs(${span}) / greatest(abs(extract(epoch FROM ${step})), 0.000001) > ${MAX_GENERATED_ELEMENTS}`;
      // marked as raiseWhen's messages are, so that it reads as the error it is (postgres-errors.ts)
      const message = `${this.stringLiteral(`${RAISED_MESSAGE_MARK}GENERATE_TIMESTAMP_ARRAY would produce more than ${MAX_GENERATED_ELEMENTS} elements: from `)} || CAST((${a}) AS text) || ' to ' || CAST((${b}) AS text) || ' by ' || CAST((${step}) AS text)`;
      const series = `CASE WHEN ${tooMany} THEN ARRAY[CAST(CAST(CAST(${message} AS integer) AS text) AS timestamptz)] ELSE ARRAY(SELECT generate_series(${a}, ${b}, ${step})) END`;
      // a step of 0 is BigQuery's own error, checked first (the count above took it for 1 µs)
      return this.raiseWhen(series, `(${step}) = INTERVAL '0'`, ZERO_TIMESTAMP_STEP);
    },
    __EXTRACT: ([, ts], call) => postgresExtract(call, ts!),
    __QUANTILE: ([x, k, n]) =>
      `(array_agg(${x} ORDER BY ${x}) FILTER (WHERE ${x} IS NOT NULL))[greatest(1, (${k} * count(${x}) + ${n} - 1) / ${n})]`,
    FIRST_VALUE: ([x], call) =>
      call.ignoreNulls ? `(${this.nonNullValues(x!, call)})[1]` : `first_value(${x})`,
    LAST_VALUE: ([x], call) => {
      if (!call.ignoreNulls) return `last_value(${x})`;
      const values = this.nonNullValues(x!, call);
      return `(${values})[cardinality(${this.nonNullValues(x!, call)})]`;
    },
    // nth_value takes an integer; a row number past its range is past every frame
    NTH_VALUE: ([x, n], call) =>
      checkedWindowCount(n!, call, this, (at) => {
        const index = `CAST(LEAST(${at}, 2147483647) AS integer)`;
        return call.ignoreNulls
          ? `(${this.nonNullValues(x!, call)})[${index}]`
          : `nth_value(${x}, ${index})${this.overOf(call)}`;
      }),
    ARRAY_AGG: ([x], call) => {
      const filter = call.agg?.ignoreNulls ? ` FILTER (WHERE ${x} IS NOT NULL)` : "";
      // DISTINCT needs the ORDER BY key as written in the argument, collation included.
      const arg = call.agg?.distinct ? `DISTINCT ${this.ordered(x!, call.args[0]!.type)}` : x;
      if (call.over) {
        const agg = `array_agg(${x})${filter}${this.orderedWindow(call)}`;
        return call.agg?.limit === undefined ? agg : `(${agg})[1:${call.agg.limit}]`;
      }
      let agg = `array_agg(${arg}${this.aggregateOrder(call)})${filter}`;
      const nan = this.distinctNaNOrder(call);
      // PostgreSQL ordered NaN after +inf: the distinct values ordered again, NaN next to NULL
      if (nan)
        agg = `(SELECT array_agg("__d"."v" ORDER BY ${this.orderItem({ ...nan, expr: { k: "col", rel: "__d", col: "v", type: nan.expr.type } })}) FROM unnest(${agg}) AS "__d"("v"))`;
      return call.agg?.limit === undefined ? agg : `(${agg})[1:${call.agg.limit}]`;
    },
    STRING_AGG: ([x, d], call) => {
      const delim = d ?? "','";
      // LIMIT 0 aggregates no value: NULL, as over no rows (BigQuery), not the empty string
      if (call.agg?.limit === 0) return `CAST(NULL AS ${this.typeName("STRING")})`;
      const agg = this.stringAgg(x!, delim, call);
      // a NULL delimiter makes the result NULL (BigQuery), where string_agg joins without one;
      // the delimiter is a literal or a parameter (constantArgs), so the CASE is one per query
      return d === undefined ? agg : `(CASE WHEN ${delim} IS NULL THEN NULL ELSE ${agg} END)`;
    },
    // substring(… FROM pattern) is BigQuery's REGEXP_EXTRACT: first group or whole match, NULL when none.
    REGEXP_EXTRACT: ([s, p], call) => `substring(${s} FROM ${this.regex(p!, call)})`,
    REGEXP_REPLACE: ([s, p, r], call) =>
      this.globalReplace(s!, this.regex(p!, call), this.rewrite(r!, call), call),
    // BigQuery splits '' into [''] where string_to_array gives [].
    // An empty delimiter splits into characters (BigQuery; regexp_split_to_array's empty pattern),
    // where string_to_array keeps the text whole, and splits into characters on a NULL one.
    SPLIT: ([s, d]) => {
      const delim = d ?? "','";
      return `CASE WHEN ${s} = '' THEN ARRAY[''] WHEN ${delim} IS NULL THEN NULL WHEN ${delim} = '' THEN regexp_split_to_array(${s}, '') ELSE string_to_array(${s}, ${delim}) END`;
    },
    TRIM: ([s, c]) => (c === undefined ? `btrim(${s})` : `btrim(${s}, ${c})`),
    CHAR_LENGTH: rename("char_length"),
    // BigQuery's UPPER and LOWER are ICU's full mappings in the root locale (ß → SS, final Σ → ς);
    // the database's own follow its locale (C.UTF-8 left ß as it was). ICU's root collation does
    // the same; the result goes back to the default collation, which ordered() reads as bytes.
    UPPER: ([x]) => `(upper(${x} COLLATE "und-x-icu") COLLATE "default")`,
    LOWER: ([x]) => `(lower(${x} COLLATE "und-x-icu") COLLATE "default")`,
    ROUND: decimalRounding("round"),
    TRUNC: decimalRounding("trunc"),
    // the divisor as every engine writes it: NULL under SAFE., PostgreSQL's own error otherwise
    DIV: ([a, b]) => `((${a}) / ${this.divisor(`(${b})`, `(${a})`)})`,
    LOG10: checkedMath.log((x) => `log(${x})`),
    // PostgreSQL raises on an underflow, where BigQuery's answer is 0: past e^-745.2 (the least
    // FLOAT64 above 0 is about e^-744.4) the result is 0 without asking
    EXP: checkedMath.exp(
      (x) => `CASE WHEN ${x} < -745.2 THEN 0 WHEN ${overflows(x)} THEN ${OVERFLOWED} ELSE exp(${x}) END`,
    ),
    POW: checkedMath.pow(postgresPower),
    POWER: checkedMath.pow(postgresPower),
    LEFT: (args, call) => edgeCall("left", args, call, this, PG_SUBSTRING),
    RIGHT: (args, call) => edgeCall("right", args, call, this, PG_SUBSTRING),
    SUBSTR: (args, call) => substrCall(args, call, this, PG_SUBSTRING),
    SUBSTRING: (args, call) => substrCall(args, call, this, PG_SUBSTRING),
    // an array sent as null inside records is JSON null in their text, which json_array_length
    // and json_array_elements refuse ("… of a scalar": 422): none, as DuckDB and ClickHouse read it
    ARRAY_LENGTH: ([a], call) =>
      isNative(call, 0)
        ? `cardinality(${a})`
        : this.once(
            `${a}::json`,
            (j) => `CASE json_typeof(${j}) WHEN 'array' THEN json_array_length(${j}) WHEN 'null' THEN 0 END`,
          ),
    ARRAY_TO_STRING: ([a, d], call) => {
      const type = call.args[0]!.type;
      const element = type.t === "array" ? type.element : "STRING";
      if (!isNative(call, 0))
        // string_agg of no elements is NULL: an empty array joins to '', as BigQuery's does. The
        // elements' JSON text is core's spelling of each value, CAST(… AS STRING)'s
        return `CASE WHEN ${a} IS NOT NULL AND ${d} IS NOT NULL THEN (SELECT coalesce(string_agg(e, ${d}), '') FROM json_array_elements_text(${jsonArrayOrNone(a!)}) AS e) END`;
      if (element === "STRING") return `array_to_string(${a}, ${d})`;
      // other elements as CAST(… AS STRING) spells them: array_to_string wrote a boolean `t`, a
      // double `1e-07`
      const e = `qes_el${this.elementAliases++}`;
      return `CASE WHEN ${a} IS NOT NULL AND ${d} IS NOT NULL THEN (SELECT coalesce(string_agg(${this.cast(`${e}.v`, { t: "scalar", s: element }, "STRING")}, ${d} ORDER BY ${e}.n), '') FROM unnest(${a}) WITH ORDINALITY AS ${e}(v, n)) END`;
    },
    JSON_VALUE: ([x], call) => this.jsonValue(x!, call),
    JSON_EXTRACT_SCALAR: ([x], call) => this.jsonValue(x!, call),
    JSON_QUERY: ([x], call) => this.jsonQuery(x!, call),
    JSON_EXTRACT: ([x], call) => this.jsonQuery(x!, call),
    FORMAT: (args, call) => formatCall(args, call, this, (x, type, spec) => this.formatSpec(x, type, spec)),
    __ARRAY_AT: ([a, i], call) => this.arrayAt(a!, i!, call),
    __ARRAY_CONTAINS: ([a, x], call) =>
      isNative(call, 0)
        ? // a NULL array holds nothing: FALSE, as for [] (= ANY(NULL) was NULL)
          `(${x} = ANY(coalesce(${a}, '{}')))`
        : `(${x} IN (SELECT ${this.safeCast("e", { t: "scalar", s: "STRING" }, scalarOfArgElement(call))} FROM json_array_elements_text(${jsonArrayOrNone(a!)}) AS e))`,
    __ARRAY_TO_JSON: ([a], call) => {
      const t = call.args[0]!.type;
      // TIMESTAMP elements leave as unix microseconds, like every TIMESTAMP on the wire.
      if (t.t === "array" && t.element === "TIMESTAMP") {
        return `(SELECT CAST(coalesce(json_agg(${this.micros("e.v")} ORDER BY e.n), '[]') AS text) FROM unnest(${a}) WITH ORDINALITY AS e(v, n))`;
      }
      return `CAST(to_json(${a}) AS text)`;
    },
    __ARRAY: (args, call) => {
      const t = call.type;
      const element = TYPE_NAMES[t.t === "array" ? t.element : "STRING"];
      return `CAST(ARRAY[${args.join(", ")}] AS ${element}[])`;
    },
    __JSON_OBJECT: (args, call) =>
      jsonObjectText(args.map((a, i) => (i % 2 === 1 && isJsonText(call, i) ? `CAST(${a} AS json)` : a))),
    __JSON_ARRAY: (args) => jsonArrayText(args.map((a) => `CAST(${a} AS json)`)),
    // the address pattern as PostgreSQL reads it; JSON text is redacted as text (its strings hold
    // every address), arrays element by element in their order. Under the collation "C", whose
    // word characters are ASCII as in RE2 and JavaScript: the database's own (C.UTF-8, en_US)
    // counts `é` as one, so `\y` did not hold in `éfe80::abcd` and only PostgreSQL kept it whole.
    // The result goes back to the default collation consumer SQL expects.
    //
    // The whole pattern costs ~20× the IPv4 form alone here (PostgreSQL's engine pays for every
    // IPv6 alternative at every character: ~300 µs against ~15 µs per 1.2 KB of record JSON), so
    // it reads only the stretch of text from the first run of address characters (ADDRESS_CHARS)
    // holding an IPv6 hint (IPV6_HINT_PATTERN: what every IPv6 match holds) to the end of the
    // last such run; the IPv4 form alone reads the text before and after (all of it, without a
    // hint). Sound: no match crosses the cuts, which lie between runs, and the neighbours a
    // boundary test sees there are no word characters, as the ends of a text are not; and a text
    // without a hint matches only where the IPv4 form does (address-pattern.ts).
    __REDACT_ADDRESSES: ([v], call) => {
      const c = (text: string) => `${text} COLLATE "C"`;
      const regex = (pattern: string) => this.stringLiteral(pattern);
      const redacted = this.stringLiteral(REDACTED);
      const ipv4 = (text: string) =>
        `regexp_replace(${c(text)}, ${regex(toPostgresRegex(IPV4_ADDRESS_PATTERN))}, ${redacted}, 'g')`;
      // (a smaller automaton where no `%` can make an encoded separator or a zone)
      const whole = (text: string) =>
        `CASE WHEN strpos(${text}, '%') > 0 THEN regexp_replace(${c(text)}, ${regex(toPostgresRegex(ADDRESS_PATTERN))}, ${redacted}, 'g') ELSE regexp_replace(${c(text)}, ${regex(toPostgresRegex(ADDRESS_PATTERN_WITHOUT_PERCENT))}, ${redacted}, 'g') END`;
      // PostgreSQL's own syntax: `.` is any character there, newlines included
      const hint = `(?:${toPostgresRegex(IPV6_HINT_PATTERN)})`;
      const fromFirstHint = regex(`${ADDRESS_CHARS}*${hint}.*`);
      const toLastHint = regex(`^.*${hint}${ADDRESS_CHARS}*`);
      const replaceIn = (t: string) =>
        bindAlways(
          `substring(${c(t)} FROM ${fromFirstHint})`,
          (tail) =>
            `(CASE WHEN ${tail} IS NULL THEN ${ipv4(t)} ELSE ${bindAlways(
              `substring(${c(tail)} FROM ${toLastHint})`,
              (middle) =>
                `${ipv4(`left(${t}, length(${t}) - length(${tail}))`)} || ${whole(middle)} || ${ipv4(`substr(${tail}, length(${middle}) + 1)`)}`,
            )} END COLLATE "default")`,
        );
      const replace = (text: string) => this.once(text, replaceIn);
      if (isNative(call, 0))
        return `ARRAY(SELECT ${replace("e.v")} FROM unnest(${v}) WITH ORDINALITY AS e(v, n) ORDER BY e.n)`;
      if (!isJsonText(call, 0)) return replace(`CAST(${v} AS text)`);
      // JSON text: escapes marked so the pattern meets the decoded text's boundaries (json-text-escapes.ts)
      const mark = `chr(${ESCAPE_MARK_CODE_POINT})`;
      const marked = `regexp_replace(CAST(${v} AS text), ${this.stringLiteral(toPostgresRegex(JSON_ESCAPE_PATTERN))}, ${this.stringLiteral("\\1")} || ${mark}, 'g')`;
      // (the marking, a regexp_replace too, is read once whatever its length)
      return `replace(${bindAlways(marked, replaceIn)}, ${mark}, '')`;
    },
  };

  override readonly supportsQualify = false;

  /** PostgreSQL's NaN equals itself (it sorts above every number) */
  override isNaN(x: string): string {
    return `(${x} = CAST('NaN' AS double precision))`;
  }

  private elementAliases = 0;

  override joinedElements(
    array: string,
    arrayType: SqlType,
    each: (element: string) => string,
    separator: string,
  ): string {
    const e = `qes_el${this.elementAliases++}`;
    const from =
      arrayType.t === "array" && arrayType.native
        ? `unnest(${array})`
        : arrayType.t === "array"
          ? `json_array_elements_text(CASE WHEN json_typeof(CAST(${array} AS json)) = 'array' THEN CAST(${array} AS json) END)`
          : // records read from an event may be one object (FieldNode.objects): an array of one;
            // a JSON null (or any scalar) has no elements
            `json_array_elements(CASE json_typeof(CAST(${array} AS json)) WHEN 'object' THEN json_build_array(CAST(${array} AS json)) WHEN 'array' THEN CAST(${array} AS json) END)`;
    const value =
      arrayType.t === "array" && !arrayType.native && arrayType.element !== "STRING"
        ? this.safeCast(`${e}.v`, { t: "scalar", s: "STRING" }, arrayType.element)
        : arrayType.t === "records"
          ? `CAST(${e}.v AS text)`
          : `${e}.v`;
    return `coalesce((SELECT string_agg(${each(value)}, ${this.stringLiteral(separator)} ORDER BY ${e}.n) FROM ${from} WITH ORDINALITY AS ${e}(v, n)), '')`;
  }

  private formatSpec(arg: string, type: SqlType, s: FormatSpec): string {
    // a bare NULL is text to PostgreSQL, which has no `>>`, to_hex or comparison with a float8
    // for it: typed as the conversion reads it (its text is 'NULL' either way)
    const x =
      type.t === "null" && "oxXdieEfgG".includes(s.conversion)
        ? `CAST(${arg} AS ${"oxXdi".includes(s.conversion) ? "bigint" : "double precision"})`
        : arg;
    let text: string;
    switch (s.conversion) {
      case "d":
      case "i":
        text = `CAST(${x} AS text)`;
        break;
      case "x":
        text = `to_hex(${x})`;
        break;
      case "X":
        text = `upper(to_hex(${x}))`;
        break;
      case "f": {
        // to_char rounds the binary value as printf does (2.675 → 2.67, 0.125 → 0.12), within
        // 15 significant digits; past them, the decimal text rounded (numeric)
        const p = s.precision ?? 6;
        const mask = `FM${"9".repeat(16)}0${p > 0 ? `.${"0".repeat(p)}` : ""}`;
        const numericText = `CAST(round(CAST(${x} AS numeric), ${p}) AS text)`;
        text = `CASE WHEN abs(${x}) < 1e${15 - p} THEN to_char(CAST(${x} AS float8), ${this.stringLiteral(mask)}) ELSE ${numericText} END`;
        break;
      }
      case "e":
      case "E": {
        // to_char's EEEE formats a float8 as C's %.*e does, after a sign column (space or -)
        const precision = s.precision ?? 6;
        const mask = `9${precision > 0 ? `.${"9".repeat(precision)}` : ""}EEEE`;
        text = `ltrim(to_char(CAST(${x} AS float8), ${this.stringLiteral(mask)}))`;
        if (s.conversion === "E") text = `upper(${text})`;
        break;
      }
      case "s":
      case "t":
      case "T":
        text = this.cast(x, type, "STRING");
        // a precision cuts a string to that many characters (printf's %.3s)
        if (s.precision !== undefined) text = `left(${text}, ${s.precision})`;
        break;
      case "o":
        // octal of the 64-bit two's complement, three bits a digit (bit 63 alone on top)
        text = `CASE WHEN ${x} IS NOT NULL THEN coalesce(nullif((SELECT ltrim(string_agg(CAST((${x} >> (3 * i)) & CASE WHEN i = 21 THEN 1 ELSE 7 END AS text), '' ORDER BY i DESC), '0') FROM generate_series(0, 21) AS i), ''), '0') END`;
        break;
      case "g":
      case "G":
        text = postgresShortestFormat(x, s.precision);
        if (s.conversion === "G") text = `upper(${text})`;
        break;
      default:
        throw new QesError("sql_invalid", `FORMAT %${s.conversion} is not supported on PostgreSQL.`);
    }
    // NaN and the infinities print as C's printf prints them (to_char wrote '#.####', text 'Infinity')
    if ("feEgG".includes(s.conversion)) {
      const upper = s.conversion === "E" || s.conversion === "G";
      text = `CASE WHEN ${this.isNaN(x)} THEN '${upper ? "NAN" : "nan"}' WHEN ${x} = CAST('Infinity' AS double precision) THEN '${upper ? "INF" : "inf"}' WHEN ${x} = CAST('-Infinity' AS double precision) THEN '${upper ? "-INF" : "-inf"}' ELSE ${text} END`;
    }
    if ("dieEfgG".includes(s.conversion) && (s.flags.includes("+") || s.flags.includes(" "))) {
      const sign = s.flags.includes("+") ? "'+'" : "' '";
      text = `(CASE WHEN ${x} >= 0 THEN ${sign} ELSE '' END || ${text})`;
    }
    // printf's `#`: a non-zero hexadecimal number after 0x (0X), an octal one after a 0
    if (s.flags.includes("#") && "xXo".includes(s.conversion)) {
      const prefix = s.conversion === "o" ? "'0'" : s.conversion === "x" ? "'0x'" : "'0X'";
      text = `(CASE WHEN ${x} = 0 THEN '' ELSE ${prefix} END || ${text})`;
    }
    if (s.width === undefined) return text;
    if (s.flags.includes("-")) return `rpad(${text}, greatest(${s.width}, char_length(${text})))`;
    const spaced = `lpad(${text}, greatest(${s.width}, char_length(${text})), ' ')`;
    if (!s.flags.includes("0") || !"dixXoeEfgG".includes(s.conversion)) return spaced;
    // printf's zeros go between the sign (or 0x) and the digits: %05d of -5 is -0005 (lpad wrote
    // 000-5); nan and inf are padded with spaces
    const lead = `CASE WHEN ${text} ~ '^[-+ ]?0[xX]' THEN left(${text}, position('x' IN lower(${text}))) WHEN ${text} ~ '^[-+ ]' THEN left(${text}, 1) ELSE '' END`;
    const digits = `substr(${text}, char_length(${lead}) + 1)`;
    return `CASE WHEN ${text} ~ '^[-+ ]?(0[xX])?[0-9a-fA-F]' THEN ${lead} || lpad(${digits}, greatest(${s.width} - char_length(${lead}), char_length(${digits})), '0') ELSE ${spaced} END`;
  }

  /**
   * A pattern (argument 1) in RE2's newline behaviour: literals at compile time, parameters when
   * bound (bindRequestParams), and patterns the query computes (from columns, CONCAT, …) at run
   * time: cut into tokens as `toPostgresRegex` reads them (an escape pair, a bracket class, one
   * character) with each bare `.` made `[^\n]`. A NULL pattern stays NULL; an empty one, empty.
   */
  private regex(p: string, call: CallExpr): string {
    const arg = call.args[1];
    if (arg?.k === "lit" && typeof arg.value === "string")
      return this.stringLiteral(toPostgresRegex(arg.value));
    if (arg?.k === "param") return p;
    // token by token as toPostgresRegex: a bare dot, and RE2's word boundaries (PostgreSQL's \b
    // is a backspace), and RE2's ASCII \d \w \s outside a class (inside one they stay the locale's)
    const classes = [..."dDwWsS"]
      .map((l) => `WHEN ${this.stringLiteral(`\\${l}`)} THEN ${this.stringLiteral(perlClassOutside(l)!)} `)
      .join("");
    const token =
      `CASE qes_re.m[1] WHEN '.' THEN ${this.stringLiteral("[^\\n]")} ` +
      `WHEN ${this.stringLiteral("\\b")} THEN ${this.stringLiteral(WORD_BOUNDARIES.b!)} ` +
      `WHEN ${this.stringLiteral("\\B")} THEN ${this.stringLiteral(WORD_BOUNDARIES.B!)} ${classes}ELSE qes_re.m[1] END`;
    const tokens = `regexp_matches(${p}, ${this.stringLiteral(PATTERN_TOKEN)}, 'g') WITH ORDINALITY AS qes_re(m, n)`;
    return `coalesce((SELECT string_agg(${token}, '' ORDER BY qes_re.n) FROM ${tokens}), ${p})`;
  }

  /**
   * A REGEXP_REPLACE replacement in RE2's terms: `\0` is the whole match, which PostgreSQL writes
   * `\&` (it leaves `\0` as it is); `\\` stays a backslash. Literals only: a computed
   * replacement is passed as it is.
   */
  private rewrite(r: string, call: CallExpr): string {
    const arg = call.args[2];
    if (arg?.k !== "lit" || typeof arg.value !== "string") return r;
    return this.stringLiteral(arg.value.replace(/\\(.)/gs, (m, c: string) => (c === "0" ? "\\&" : m)));
  }

  /**
   * REGEXP_REPLACE as RE2's GlobalReplace (BigQuery's): an empty match right where the previous
   * match ended is not replaced — `('aaa', 'a*', 'x')` is `x`, where regexp_replace gave `xx`. For
   * a pattern that can match the empty string (canMatchEmpty) each replacement is marked with the
   * match it replaced (REPLACE_MARKS); the replacements of empty matches glued to the mark ending
   * the previous one are taken out, then the marks and matches.
   */
  private globalReplace(s: string, pattern: string, rewrite: string, call: CallExpr): string {
    const plain = `regexp_replace(${s}, ${pattern}, ${rewrite}, 'g')`;
    if (!mayMatchEmpty(call)) return plain;
    const { START, MATCH_END, END } = REPLACE_MARKS;
    const lit = (text: string) => this.stringLiteral(text);
    const marked = `regexp_replace(${s}, ${pattern}, ${lit(`${START}\\&${MATCH_END}`)} || ${rewrite} || ${lit(END)}, 'g')`;
    const skipped = `regexp_replace(${marked}, ${lit(`${END}${START}${MATCH_END}[^${END}]*${END}`)}, ${lit(END)}, 'g')`;
    const unmarked = `replace(regexp_replace(${skipped}, ${lit(`${START}[^${MATCH_END}]*${MATCH_END}`)}, '', 'g'), ${lit(END)}, '')`;
    const marks = lit(`[${START}${MATCH_END}${END}]`);
    const holdsMarks =
      call.args[2]?.k === "lit" ? `${s} ~ ${marks}` : `(${s} ~ ${marks} OR ${rewrite} ~ ${marks})`;
    return `CASE WHEN ${holdsMarks} THEN ${plain} ELSE ${unmarked} END`;
  }

  /** LAG/LEAD: the offset is an integer and the default has the value's type. */
  /** STRING_AGG's join (its OVER placed inside), before a NULL delimiter is looked at */
  private stringAgg(x: string, delim: string, call: CallExpr): string {
    if (call.over) {
      if (call.agg?.limit === undefined) return `string_agg(${x}, ${delim})${this.orderedWindow(call)}`;
      return `array_to_string((array_agg(${x}) FILTER (WHERE ${x} IS NOT NULL)${this.orderedWindow(call)})[1:${call.agg.limit}], ${delim})`;
    }
    const arg = call.agg?.distinct ? `DISTINCT ${this.ordered(x, call.args[0]!.type)}` : x;
    if (call.agg?.limit === undefined) return `string_agg(${arg}, ${delim}${this.aggregateOrder(call)})`;
    // LIMIT counts the values joined: array_agg keeps the NULLs string_agg skips (a NULL ordered
    // first was the one value of LIMIT 1: '')
    return `array_to_string((array_agg(${arg}${this.aggregateOrder(call)}) FILTER (WHERE ${x} IS NOT NULL))[1:${call.agg.limit}], ${delim})`;
  }

  /**
   * The non-NULL values of a navigation window's frame, in its order: PostgreSQL's first_value,
   * last_value and nth_value have no IGNORE NULLS, its window aggregates take FILTER.
   */
  private nonNullValues(x: string, call: CallExpr): string {
    return `array_agg(${x}) FILTER (WHERE ${x} IS NOT NULL)${this.overOf(call)}`;
  }

  /**
   * The OVER of a window ARRAY_AGG or STRING_AGG, which PostgreSQL cannot order inside ("aggregate
   * ORDER BY is not implemented for window functions"; DuckDB and ClickHouse answered): over a
   * whole partition (no ORDER BY, no frame in the window) the aggregate's order, by value unless
   * given, becomes the window's, with a frame of the whole partition. A window with its own order
   * has running frames no one order can serve, nor can DISTINCT be windowed: refused.
   */
  private orderedWindow(call: CallExpr): string {
    const over = call.over!;
    if (over.orderBy.length || over.frame || call.agg?.distinct)
      throw new QesError(
        "sql_invalid",
        `${call.fn} over a window is supported on PostgreSQL only over whole partitions (OVER (PARTITION BY …)), without DISTINCT.`,
      );
    return this.overOf({
      ...call,
      over: {
        partitionBy: over.partitionBy,
        orderBy: call.agg?.orderBy ?? [],
        frame: "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
      },
    });
  }

  /**
   * COUNT(DISTINCT x) (and the exact APPROX_COUNT_DISTINCT) OVER a whole partition, which PostgreSQL does not window ("DISTINCT is not
   * implemented for window functions"; BigQuery, DuckDB and ClickHouse count): a row's dense rank
   * up plus its dense rank down, less one, is the partition's number of distinct values, less
   * one more where NULL is among them (COUNT skips it).
   */
  private windowDistinctCount(x: string, call: CallExpr): string {
    const over = call.over!;
    if (over.orderBy.length || over.frame)
      throw new QesError(
        "sql_invalid",
        `${call.fn === "COUNT" ? "COUNT(DISTINCT …)" : call.fn} over a window is supported on PostgreSQL only over whole partitions (OVER (PARTITION BY …)).`,
      );
    const value = call.args[0]!;
    const ranked = (desc: boolean) =>
      `dense_rank()${this.overOf({ ...call, over: { partitionBy: over.partitionBy, orderBy: [{ expr: value, desc }] } })}`;
    const hasNull = `max(CASE WHEN ${x} IS NULL THEN 1 ELSE 0 END)${this.overOf({ ...call, over: { partitionBy: over.partitionBy, orderBy: [] } })}`;
    return `(${ranked(false)} + ${ranked(true)} - 1 - ${hasNull})`;
  }

  private shiftCall(fn: string, [x, offset, dflt]: string[], call: CallExpr): string {
    const t = call.args[0]!.type;
    const write = (at: string | undefined) => {
      const parts = [x!];
      if (at !== undefined) parts.push(`CAST(${at} AS integer)`);
      if (dflt !== undefined) parts.push(t.t === "scalar" ? `CAST(${dflt} AS ${TYPE_NAMES[t.s]})` : dflt);
      return `${fn}(${parts.join(", ")})${this.overOf(call)}`;
    };
    return offset === undefined ? write(undefined) : checkedWindowCount(offset, call, this, write);
  }

  /** Strings order by code point (BigQuery), whatever the database's collation. */
  override ordered(sql: string, type: SqlType): string {
    return type.t === "scalar" && type.s === "STRING" ? `(${sql} COLLATE "C")` : sql;
  }

  /** Unix microseconds of a TIMESTAMP, exactly (extract returns numeric). */
  private micros(ts: string): string {
    return `CAST(extract(epoch FROM ${ts}) * 1000000 AS bigint)`;
  }

  private jsonKeys(call: CallExpr): string {
    const path = call.args.length > 1 ? literalArg(call, 1, "a JSONPath") : "$";
    const keys = jsonPathKeys(path);
    return this.stringLiteral(
      `{${keys.map((k) => `"${String(k).replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`,
    );
  }

  /** JSON text as json; text that is not JSON gives NULL instead of an error. */
  private asJson(x: string): string {
    return `${JSON_OR_NULL}(${typedLiteral(x)})`;
  }

  /**
   * The value at the path, read once: the number's text names it some 120 times, and PostgreSQL
   * evaluates each (no common subexpressions), so each row called qes_json_or_null — a
   * subtransaction — 240 times (100,000 rows: 14.7 s; read once in a subquery kept apart by
   * OFFSET 0, 2.0 s: postgres-bind-once.ts).
   */
  private jsonValue(x: string, call: CallExpr): string {
    const valueAt = (j: string) => {
      const text = `(${j} #>> '{}')`;
      return `CASE json_typeof(${j}) WHEN 'object' THEN NULL WHEN 'array' THEN NULL WHEN 'number' THEN ${postgresJsonNumberText(text, this.bound)} ELSE ${text} END`;
    };
    const j = `(${this.asJson(x)} #> ${this.jsonKeys(call)})`;
    return bindAlways(j, valueAt);
  }

  /** BigQuery writes the JSON it returns compactly; json keeps the text's own spaces: dropped outside strings */
  private jsonQuery(x: string, call: CallExpr): string {
    const text = `CAST(${this.asJson(x)} #> ${this.jsonKeys(call)} AS text)`;
    const compact = `regexp_replace(${text}, ${this.stringLiteral(JSON_SPACE_OUTSIDE_STRINGS)}, '\\1', 'g')`;
    return postgresJsonNumbersAsCore(compact, this.stringLiteral(JSON_PIECES));
  }

  private arrayAt(a: string, i: string, call: CallExpr): string {
    const t = call.args[0]!.type;
    // an INT64 offset past integer's range is past any array's end (`+ 1` and CAST AS integer raised)
    // (or before it: a subscript is an integer, -2^63 raised "integer out of range")
    if (t.t === "array" && t.native) return `(${a})[greatest(least(${i}, 2147483646), -1) + 1]`;
    const at = `CAST(least(${i}, 2147483647) AS integer)`;
    if (t.t === "records") return `CASE WHEN ${i} >= 0 THEN CAST(${a}::json -> ${at} AS text) END`;
    const element = t.t === "array" ? t.element : "STRING";
    const text = `(${a}::json ->> ${at})`;
    return `CASE WHEN ${i} >= 0 THEN ${element === "STRING" ? text : this.safeCast(text, { t: "scalar", s: "STRING" }, element)} END`;
  }

  typeName(type: ScalarType): string {
    return TYPE_NAMES[type];
  }

  param(index: number, type: SqlType): string {
    const s = type.t === "scalar" ? type.s : "STRING";
    // Bound text is UTC without a zone: read it as such whatever the session's TimeZone.
    if (s === "TIMESTAMP") return `($${index}::timestamp AT TIME ZONE 'UTC')`;
    return `$${index}::${TYPE_NAMES[s]}`;
  }

  timestampLiteral(micros: bigint, type: ScalarType): string {
    const text = this.stringLiteral(formatTimestampMicros(micros));
    if (type === "DATE") return `DATE ${this.stringLiteral(formatTimestampMicros(micros).slice(0, 10))}`;
    if (type === "DATETIME") return `TIMESTAMP ${text}`;
    return `(TIMESTAMP ${text} AT TIME ZONE 'UTC')`;
  }

  jsonExtract(base: string, path: string[], type: SqlType): string {
    const pathLit = this.stringLiteral(
      `{${path.map((p) => `"${p.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`,
    );
    const json = `(CAST(${base} AS json) #> ${pathLit})`;
    // a records field that also met single objects (FieldNode.objects): an object is an array of one
    if (type.t === "records" && type.node.objects)
      return `(CASE WHEN json_typeof(${json}) = 'object' THEN json_build_array(${json}) ELSE ${json} END)`;
    if (type.t !== "scalar") return json;
    const text = `(CAST(${base} AS json) #>> ${pathLit})`;
    return type.s === "STRING" ? text : this.safeCast(text, { t: "scalar", s: "STRING" }, type.s);
  }

  safeCast(raw: string, from: SqlType, to: ScalarType): string {
    const expr = typedLiteral(raw);
    const fromText = from.t !== "scalar" || from.s === "STRING";
    if (!fromText && to === "INT64" && from.t === "scalar" && from.s === "FLOAT64") {
      // out of INT64's range (NaN and infinities included) is NULL, where CAST AS bigint raises;
      // -2^63 and the largest double below 2^63 are integers, so rounding keeps a value in range
      const v = `CAST(${expr} AS double precision)`;
      return `CASE WHEN ${v} >= ${INT64_MIN_DOUBLE} AND ${v} < ${INT64_END_DOUBLE} THEN CAST(${roundedDouble(v)} AS bigint) END`;
    }
    // from any other non-text type a conversion cannot fail: SAFE_CAST is CAST, with its
    // conversions (a plain CAST of a boolean to bigint raised, of a double wrote PostgreSQL's text)
    if (!fromText) return this.cast(raw, from, to);
    switch (to) {
      case "STRING":
        return expr;
      case "INT64":
        // up to 18 digits always fits (the common case, one test); longer text is compared with
        // INT64's range as a numeric first, since CAST AS bigint would raise; hexadecimal text
        // ('0x1F') as BigQuery reads it, up to 15 digits
        return `CASE WHEN ${expr} ~ ${INT_TEXT_18} THEN CAST(${expr} AS bigint) WHEN ${expr} ~ ${INT_TEXT} THEN CASE WHEN CAST(${expr} AS numeric) BETWEEN ${INT64_MIN} AND ${INT64_MAX} THEN CAST(${expr} AS bigint) END WHEN ${expr} ~ ${HEX_TEXT_15} THEN ${this.cast(expr, { t: "scalar", s: "STRING" }, "INT64")} END`;
      case "FLOAT64":
        return postgresFloatFromText(expr, true);
      case "BOOL":
        return `CASE lower(${expr}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END`;
      case "TIMESTAMP":
        return validDateThen(expr, `CAST(${expr} AS timestamptz)`);
      case "DATETIME":
        return validDateThen(expr, `CAST(${expr} AS timestamp)`);
      case "DATE":
        return validDateThen(expr, `CAST(${expr} AS date)`);
    }
  }

  override cast(raw: string, from: SqlType, to: ScalarType): string {
    const expr = typedLiteral(raw);
    const f = from.t === "scalar" ? from.s : undefined;
    if (f === "TIMESTAMP" && to === "STRING") {
      // BigQuery's text of a TIMESTAMP: UTC, 0, 3 or 6 fractional digits, suffix +00.
      const us = `(CAST(extract(microseconds FROM ${expr}) AS bigint) % 1000000)`;
      return `(to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || CASE WHEN ${us} = 0 THEN '' WHEN ${us} % 1000 = 0 THEN '.' || lpad(CAST(${us} / 1000 AS text), 3, '0') ELSE '.' || lpad(CAST(${us} AS text), 6, '0') END || '+00')`;
    }
    if (f === "DATETIME" && to === "STRING") {
      // no zone, six fractional digits only when there is a fraction (PostgreSQL's text drops
      // trailing zeros: `.0001`)
      const us = `(CAST(extract(microseconds FROM ${expr}) AS bigint) % 1000000)`;
      return `(to_char(${expr}, 'YYYY-MM-DD HH24:MI:SS') || CASE WHEN ${us} = 0 THEN '' ELSE '.' || lpad(CAST(${us} AS text), 6, '0') END)`;
    }
    if (f === "FLOAT64" && to === "STRING") return postgresFloatText(expr, this.bound);
    if (f === "STRING" && to === "FLOAT64") return postgresFloatFromText(expr, false);
    if (f === "BOOL" && to === "INT64") return `CAST(CAST(${expr} AS integer) AS bigint)`;
    if (f === "INT64" && to === "BOOL") return `(${expr} <> 0)`;
    if (f === "FLOAT64" && to === "INT64")
      return `CAST(${roundedDouble(`CAST(${expr} AS double precision)`)} AS bigint)`;
    // other text is BigQuery's "Bad bool value" (it was NULL, where every other CAST raised)
    if (f === "STRING" && to === "BOOL")
      return this.raiseWhen(
        `CASE lower(${expr}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END`,
        `lower(${expr}) NOT IN ('true', 'false')`,
        "Bad bool value",
      );
    if (f === "STRING" && to === "INT64") {
      return `CASE WHEN ${expr} ~ '^\\s*[+-]?0[xX][0-9a-fA-F]+\\s*$' THEN (CASE WHEN ltrim(${expr}) LIKE '-%' THEN -1 ELSE 1 END) * CAST(('x' || lpad(substring(trim(${expr}) FROM '0[xX]([0-9a-fA-F]+)'), 16, '0'))::bit(64) AS bigint) ELSE CAST(${expr} AS bigint) END`;
    }
    return `CAST(${expr} AS ${TYPE_NAMES[to]})`;
  }

  unnestFrom(
    array: string,
    alias: string,
    arrayType: SqlType,
    elementType: SqlType,
    withOffset: boolean,
  ): string {
    const ord = withOffset ? ", e.n - 1 AS off" : "";
    const ordinality = withOffset ? " WITH ORDINALITY" : "";
    const cols = withOffset ? "v, n" : "v";
    if (arrayType.t === "array" && arrayType.native) {
      return `LATERAL (SELECT e.v AS value${ord} FROM unnest(${array})${ordinality} AS e(${cols})) AS ${this.quoteIdent(alias)}`;
    }
    const value =
      elementType.t === "scalar" && elementType.s !== "STRING"
        ? this.safeCast("e.v", { t: "scalar", s: "STRING" }, elementType.s)
        : "e.v";
    const fn = elementType.t === "scalar" ? "json_array_elements_text" : "json_array_elements";
    const element = elementType.t === "scalar" ? value : "e.v::text";
    return `LATERAL (SELECT ${element} AS value${ord} FROM ${fn}(CASE WHEN json_typeof(${array}::json) = 'array' THEN ${array}::json END)${ordinality} AS e(${cols})) AS ${this.quoteIdent(alias)}`;
  }

  interval(amount: string, unit: string): string {
    const one = INTERVAL_UNIT[unit];
    if (!one) throw new QesError("sql_invalid", `INTERVAL … ${unit} is not supported.`);
    return `((${amount}) * INTERVAL '${one}')`;
  }
}

/**
 * `then` when `text` is a timestamp with a real calendar day (no 2025-02-30), else NULL; nested
 * CASEs because AND does not promise to test its left side first.
 */
function validDateThen(text: string, then: string): string {
  const part = (re: string) => `CAST(substring(${text} FROM '${re}') AS integer)`;
  const year = part("^\\s*([0-9]{4})");
  const month = part("^\\s*[0-9]{4}-([0-9]{1,2})");
  const day = part("^\\s*[0-9]{4}-[0-9]{1,2}-([0-9]{1,2})");
  const lastDay = `extract(day FROM make_date(${year}, ${month}, 1) + INTERVAL '1 month' - INTERVAL '1 day')`;
  return `CASE WHEN ${text} ~ ${TIMESTAMP_TEXT} THEN CASE WHEN ${day} <= ${lastDay} THEN ${then} END END`;
}

/**
 * A bare string literal is coerced while PostgreSQL parses the statement, before a CASE can
 * guard it; typed as text, it is converted at run time only where the CASE reaches it.
 */
function typedLiteral(expr: string): string {
  return expr.startsWith("'") && expr.endsWith("'") ? `${expr}::text` : expr;
}

/** Arguments that hold JSON text (records), embedded as JSON rather than as strings. */
function isJsonText(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "record" || t?.t === "records" || (t?.t === "array" && !t.native);
}

function isNative(call: CallExpr, i: number): boolean {
  const t = call.args[i]?.type;
  return t?.t === "array" && t.native === true;
}

function scalarOfArgElement(call: CallExpr): ScalarType {
  const t = call.args[0]?.type;
  return t?.t === "array" ? t.element : "STRING";
}

function postgresExtract(call: CallExpr, ts: string): string {
  const part = call.args[0]?.k === "datepart" ? call.args[0].part : "";
  const source = call.args[1]?.type;
  const local = source?.t === "scalar" && source.s === "TIMESTAMP" ? `(${ts} AT TIME ZONE 'UTC')` : ts;
  switch (part) {
    case "DATE":
      return `CAST(${local} AS date)`;
    case "DAYOFWEEK":
      return `CAST(extract(dow FROM ${local}) + 1 AS bigint)`;
    case "DAYOFYEAR":
      return `CAST(extract(doy FROM ${local}) AS bigint)`;
    case "ISOWEEK":
      return `CAST(extract(week FROM ${local}) AS bigint)`;
    case "ISOYEAR":
      return `CAST(extract(isoyear FROM ${local}) AS bigint)`;
    case "WEEK":
      return `CAST(floor(${weekNumberNumerator(`extract(doy FROM ${local})`, `extract(dow FROM ${local})`, part)} / 7) AS bigint)`;
    case "MICROSECOND":
      return `(CAST(extract(microseconds FROM ${local}) AS bigint) % 1000000)`;
    case "MILLISECOND":
      return `(CAST(floor(extract(milliseconds FROM ${local})) AS bigint) % 1000)`;
    default:
      if (part.startsWith("WEEK("))
        return `CAST(floor(${weekNumberNumerator(`extract(doy FROM ${local})`, `extract(dow FROM ${local})`, part)} / 7) AS bigint)`;
      // extract returns numeric with fractions (59.999999 seconds): lower parts are truncated.
      return `CAST(floor(extract(${part.toLowerCase()} FROM ${local})) AS bigint)`;
  }
}

/**
 * `TIMESTAMPTZ 'epoch'` plus `n` units, exactly: whole seconds (`n / perSecond`, below 2^53) and the
 * rest (below `perSecond`) each times an interval, since `bigint * interval` multiplies in float8
 * and rounds counts past 2^53 (TIMESTAMP_MILLIS(253402300799999) ended in .999008).
 */
function epochPlus(n: string, perSecond: number, unit: string): string {
  return `(TIMESTAMPTZ 'epoch' + ((${n}) / ${perSecond}) * INTERVAL '1 second' + ((${n}) % ${perSecond}) * INTERVAL '${unit}')`;
}

export const postgresDialect = new PostgresDialect();

/** JSON text of an array as json, NULL (no elements) for JSON null (an array sent as null inside records), as UNNEST reads it */
function jsonArrayOrNone(a: string): string {
  return `(CASE WHEN json_typeof(${a}::json) = 'array' THEN ${a}::json END)`;
}
