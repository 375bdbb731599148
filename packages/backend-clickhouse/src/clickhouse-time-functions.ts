import {
  type CallExpr,
  checkedTimestampFrom,
  DEFAULT_FUNCTIONS,
  dateFormatForTimestamp,
  dateParseFormat,
  datetimeFormat,
  END_TIMESTAMP_MICROS,
  type FunctionTable,
  literalArg,
  MAX_GENERATED_ELEMENTS,
  MICROS_PER,
  MIN_TIMESTAMP_MICROS,
  microsPer,
  offsetMinutesSql,
  offsetSplit,
  QesError,
  readingFormat,
  readsInstant,
  type SqlEmitter,
  timestampArrayStep,
  truncatesWithinOffset,
  weekNumberNumerator,
  withoutFraction,
  ZERO_TIMESTAMP_STEP,
} from "@qes/core";
import { bindOnce } from "./clickhouse-bind-once.ts";
import { civilDate32 } from "./clickhouse-casts.ts";
import { fromLocalSql, offsetSql, textToTimestampSql, toLocalSql, zoneOf } from "./clickhouse-time.ts";
import { formatTimestampSql, translateParseFormat } from "./clickhouse-time-format.ts";
import { truncateSql } from "./clickhouse-time-trunc.ts";

const scalarOf = (call: CallExpr, i: number) => {
  const t = call.args[i]?.type;
  return t?.t === "scalar" ? t.s : undefined;
};
const partOf = (call: CallExpr, i: number) => {
  const a = call.args[i];
  return a?.k === "datepart" ? a.part : "DAY";
};
const micros = (ts: string) => `toUnixTimestamp64Micro(${ts})`;
/** Unix µs → TIMESTAMP. */
const fromMicros = (n: string) => `fromUnixTimestamp64Micro(toInt64(${n}), 'UTC')`;
/**
 * floor(µs / unit): BigQuery rounds toward the past, also before 1970. In integers: `/` divides
 * as Float64, which made 9999-12-31 23:59:59.999999 the second 253402300800.
 */
const floorDiv = (us: string, unit: number) =>
  `intDiv(${us} - toInt64(positiveModulo(${us}, toInt64(${unit}))), toInt64(${unit}))`;

const EXTRACT: Record<string, (ts: string) => string> = {
  YEAR: (ts) => `toYear(${ts})`,
  QUARTER: (ts) => `toQuarter(${ts})`,
  MONTH: (ts) => `toMonth(${ts})`,
  DAY: (ts) => `toDayOfMonth(${ts})`,
  HOUR: (ts) => `toHour(${ts})`,
  MINUTE: (ts) => `toMinute(${ts})`,
  SECOND: (ts) => `toSecond(${ts})`,
  // mode 3: Sunday is 1 … Saturday 7 (BigQuery's DAYOFWEEK)
  DAYOFWEEK: (ts) => `toDayOfWeek(${ts}, 3)`,
  DAYOFYEAR: (ts) => `toDayOfYear(${ts})`,
  ISOWEEK: (ts) => `toISOWeek(${ts})`,
  ISOYEAR: (ts) => `toISOYear(${ts})`,
  MICROSECOND: (ts) => `((${micros(ts)} % 1000000 + 1000000) % 1000000)`,
  MILLISECOND: (ts) => `intDiv((${micros(ts)} % 1000000 + 1000000) % 1000000, 1000)`,
};

/** Whole `part`s between two dates, counted as boundaries crossed (BigQuery's DATE_DIFF). */
function dateDiff(a: string, b: string, part: string): string {
  // a Date32's own number is its day since 1970-01-01 over DATE's whole range, where
  // toRelativeDayNum answered 0 before 1970 and 65535 after 2149
  if (part === "DAY") return `(toInt64(${a}) - toInt64(${b}))`;
  // from the calendar's own readings: toRelativeMonthNum of 9999-12-31 was 65,536 months short (UInt16)
  const count: Record<string, (d: string) => string> = {
    MONTH: (d) => `(toInt64(toYear(${d})) * 12 + toMonth(${d}))`,
    QUARTER: (d) => `(toInt64(toYear(${d})) * 4 + toQuarter(${d}))`,
    YEAR: (d) => `toInt64(toYear(${d}))`,
  };
  const fn = count[part];
  if (fn) return `(${fn(a)} - ${fn(b)})`;
  if (part === "WEEK" || part === "ISOWEEK" || part.startsWith("WEEK(")) {
    const start = (d: string) => `toInt64(${truncateSql(d, part, true)})`;
    return `intDiv(${start(a)} - ${start(b)}, 7)`;
  }
  if (part === "ISOYEAR") return `(toInt64(toISOYear(${a})) - toInt64(toISOYear(${b})))`;
  throw new QesError("sql_invalid", `DATE_DIFF by ${part} is not supported.`);
}

/** BigQuery's range in unix µs and in days since 1970-01-01: 0001-01-01 … 9999-12-31 (23:59:59.999999). */
const MIN_MICROS = MIN_TIMESTAMP_MICROS;
const MAX_MICROS = END_TIMESTAMP_MICROS - 1n;
const MICROS_PER_DAY = 86_400_000_000n;
const MIN_DAY = Number(MIN_TIMESTAMP_MICROS / MICROS_PER_DAY);
const MAX_DAY = Number(END_TIMESTAMP_MICROS / MICROS_PER_DAY) - 1;
/** months since year 0 of 0001-01 and 9999-12 (`year * 12 + month - 1`) */
const MIN_MONTH = 12;
const MAX_MONTH = 9999 * 12 + 11;

/** the amount and unit of an INTERVAL argument */
function intervalOf(e: SqlEmitter, call: CallExpr, i: number): { n: string; unit: string } {
  const iv = call.args[i];
  if (iv?.k !== "interval") throw new QesError("sql_invalid", `${call.fn} needs an INTERVAL.`);
  return { n: `toInt128(${e.expr(iv.value)})`, unit: iv.unit };
}

/**
 * TIMESTAMP_ADD / _SUB in µs, refused past BigQuery's range. ClickHouse's DateTime64 arithmetic
 * saturates instead of failing (9999-12-31 plus a DAY stayed 9999-12-31, and compared inside the
 * range); the sum of µs, in Int128, cannot.
 */
function shiftedTimestamp(e: SqlEmitter, call: CallExpr, args: string[], sign: "+" | "-"): string {
  const { n, unit } = intervalOf(e, call, 1);
  // other units (MONTH…) as every backend writes them: BigQuery refuses them, DuckDB and
  // PostgreSQL answer; kept as they were
  if (!(unit in MICROS_PER))
    return DEFAULT_FUNCTIONS[call.fn === "TIMESTAMP_ADD" ? "TIMESTAMP_ADD" : "TIMESTAMP_SUB"](args, call, e);
  // `date + INTERVAL …` reaches here with a DATE: its midnight in UTC
  const ts = scalarOf(call, 0) === "DATE" ? `toDateTime64(${args[0]}, 6, 'UTC')` : args[0]!;
  const us = `(toInt128(${micros(ts)}) ${sign} ${n} * ${MICROS_PER[unit]})`;
  return e.raiseWhen(
    fromMicros(`if(${us} < ${MIN_MICROS} OR ${us} > ${MAX_MICROS}, 0, ${us})`),
    `${us} < ${MIN_MICROS} OR ${us} > ${MAX_MICROS}`,
    `${call.fn}: the result is out of TIMESTAMP's range`,
  );
}

/**
 * DATE_ADD / _SUB, refused past BigQuery's range. ClickHouse's Date32 arithmetic saturates
 * (9999-12-31 plus a day, or 2025 plus 8,000 years, answered 9999-12-31 or 9999-01-01; 0001-01-01
 * minus a day 0000-12-31): the result's day or month number is checked in Int128 first, and
 * ClickHouse's own arithmetic (which keeps the month's last day, as BigQuery does) computes it.
 */
function shiftedDate(e: SqlEmitter, call: CallExpr, d: string, iv: string, sign: "+" | "-"): string {
  const { n, unit } = intervalOf(e, call, 1);
  const days: Record<string, number> = { DAY: 1, WEEK: 7 };
  const months: Record<string, number> = { MONTH: 1, QUARTER: 3, YEAR: 12 };
  let outside: string;
  if (days[unit] !== undefined) {
    const day = `(toInt128(toInt32(${d})) ${sign} ${n} * ${days[unit]})`;
    outside = `${day} < ${MIN_DAY} OR ${day} > ${MAX_DAY}`;
  } else if (months[unit] !== undefined) {
    const month = `(toInt128(toYear(${d})) * 12 + toMonth(${d}) - 1 ${sign} ${n} * ${months[unit]})`;
    outside = `${month} < ${MIN_MONTH} OR ${month} > ${MAX_MONTH}`;
  } else {
    // other units (HOUR…) as before: BigQuery refuses them, DuckDB and PostgreSQL answer
    return `toDate32(${d} ${sign} ${iv})`;
  }
  // a failing row fails the query (raiseWhen's throwIf): a saturated date is never answered
  return e.raiseWhen(
    `toDate32(${d} ${sign} ${iv})`,
    outside,
    `${call.fn}: the result is out of DATE's range`,
  );
}

/** The time functions of the ClickHouse table (TIMESTAMP, DATETIME, DATE and their arithmetic). */
export function clickhouseTimeFunctions(e: SqlEmitter) {
  // PARSE_TIMESTAMP, and PARSE_DATE's reading of its text
  const parseTimestamp = ([, s, zone]: string[], call: CallExpr): string => {
    const bigQueryFormat = readingFormat(literalArg(call, 0, "its format"));
    // an offset is taken out of the text and applied here: parseDateTime64's %z reads neither
    // Z nor +HH
    const split = offsetSplit(bigQueryFormat);
    const re = split && e.stringLiteral(split.re);
    const civilText = split ? `replaceRegexpOne(${s}, ${re}, ${e.stringLiteral(split.keep)})` : s;
    // BigQuery: a run of whitespace in the format matches any run in the text, and the text
    // may be padded; parseDateTime64 wants the format's characters exactly, so both are reduced
    // to single spaces (a format's space then still needs one in the text)
    const text = `trimBoth(replaceRegexpAll(${civilText}, '[[:space:]]+', ' '))`;
    const civil = split?.civil ?? bigQueryFormat;
    // read as a UTC reading, then placed in the zone: parseDateTime64's own zone places a
    // reading with the offset of the UTC instant it names, an hour off beside a DST transition;
    // %E*S reads seconds with or without a fraction: each format is tried in turn
    const attempts = [civil, withoutFraction(civil)]
      .filter((f) => f !== undefined)
      .map((f) => translateParseFormat(f).replace(/\s+/g, " ").trim())
      .map((f) => `parseDateTime64OrNull(${text}, ${e.stringLiteral(f)}, 'UTC')`);
    const attempt = attempts.length === 1 ? attempts[0]! : `coalesce(${attempts.join(", ")})`;
    const offset = `extractGroups(${s}, ${re})[${split?.offsetGroup}]`;
    const value = split ? `(${attempt} - toIntervalMinute(${offsetMinutesSql(offset, "Int32")}))` : attempt;
    // text that does not parse is BigQuery's error, not NULL
    const parsed = e.raiseWhen(
      `toTimeZone(${value}, 'UTC')`,
      `(isNull(${attempt})${split ? ` OR ${offset} = ''` : ""}) AND isNotNull(${s})`,
      `${call.fn}: the text does not match the format`,
    );
    // an offset in the text (%z) already placed the instant: the zone argument does not apply
    return readsInstant(literalArg(call, 0, "its format")) ? parsed : fromLocalSql(parsed, zoneOf(zone));
  };
  return {
    TIMESTAMP_TRUNC: ([instant, , zone], call) => {
      const z = zoneOf(zone);
      // HOUR and MINUTE keep the timestamp's own offset: in a repeated hour each occurrence
      // truncates within itself (ZetaSQL TimestampTruncAtLeastMinute)
      if (truncatesWithinOffset(call))
        return bindOnce(
          instant!,
          (ts) =>
            `subtractSeconds(${truncateSql(toLocalSql(ts, z), partOf(call, 1), false)}, ${offsetSql(ts, z)})`,
        );
      return fromLocalSql(truncateSql(toLocalSql(instant!, z), partOf(call, 1), false), z);
    },
    DATETIME_TRUNC: ([d], call) => truncateSql(d!, partOf(call, 1), false),
    DATE_TRUNC: ([d], call) => truncateSql(d!, partOf(call, 1), true),
    DATE_ADD: ([d, iv], call) => shiftedDate(e, call, d!, iv!, "+"),
    DATE_SUB: ([d, iv], call) => shiftedDate(e, call, d!, iv!, "-"),
    TIMESTAMP_ADD: (args, call) => shiftedTimestamp(e, call, args, "+"),
    TIMESTAMP_SUB: (args, call) => shiftedTimestamp(e, call, args, "-"),
    DATETIME: ([x, zone], call) => {
      switch (scalarOf(call, 0)) {
        case "TIMESTAMP":
          return toLocalSql(x!, zoneOf(zone));
        case "DATE":
          return `toDateTime64(${x}, 6, 'UTC')`;
        case "STRING":
          return `parseDateTime64BestEffort(${x}, 6, 'UTC')`;
        default:
          return x!;
      }
    },
    DATE: (args, call) => {
      if (args.length === 3) {
        // BigQuery refuses a day that does not exist; makeDate32 rolls it over (2025-02-29 is
        // 2025-03-01), and clamps a year before 1900 or after 2299 or answers 1970-01-01 for it
        // (DATE(1, 1, 31) was 1970-01-01): the day is counted from its numbers (civilDate32), the
        // month's length is arithmetic
        const [y, m, d] = args.map((a) => `(${a})`) as [string, string, string];
        const leap = `((${y} % 4 = 0 AND ${y} % 100 != 0) OR ${y} % 400 = 0)`;
        const lastDay = `if(${m} = 2, if(${leap}, 29, 28), 31 - ((${m} - 1) % 7) % 2)`;
        return e.raiseWhen(
          civilDate32(`toInt64(${y})`, `toInt64(${m})`, `toInt64(${d})`),
          `${m} < 1 OR ${m} > 12 OR ${d} < 1 OR ${y} < 1 OR ${y} > 9999 OR ${d} > ${lastDay}`,
          "DATE(year, month, day): no such date",
        );
      }
      switch (scalarOf(call, 0)) {
        case "TIMESTAMP":
          return `toDate32(${toLocalSql(args[0]!, zoneOf(args[1]))})`;
        case "STRING":
          return e.cast(args[0]!, call.args[0]!.type, "DATE");
        default:
          return `toDate32(${args[0]})`;
      }
    },
    TIMESTAMP: ([x, zone], call) => {
      switch (scalarOf(call, 0)) {
        case "STRING":
          return textToTimestampSql(x!, zoneOf(zone), e.inSafeCall);
        case "DATE":
          return fromLocalSql(`toDateTime64(${x}, 6, 'UTC')`, zoneOf(zone));
        case "DATETIME":
          return fromLocalSql(x!, zoneOf(zone));
        default:
          return x!;
      }
    },
    UNIX_MICROS: ([ts]) => micros(ts!),
    UNIX_MILLIS: ([ts]) => floorDiv(micros(ts!), 1000),
    UNIX_SECONDS: ([ts]) => floorDiv(micros(ts!), 1_000_000),
    TIMESTAMP_MICROS: checkedTimestampFrom(1, (n) => fromMicros(n)),
    TIMESTAMP_MILLIS: checkedTimestampFrom(1000, (n) => fromMicros(`(${n}) * 1000`)),
    TIMESTAMP_SECONDS: checkedTimestampFrom(1_000_000, (n) => fromMicros(`(${n}) * 1000000`)),
    TIMESTAMP_DIFF: ([a, b], call) => `intDiv(${micros(a!)} - ${micros(b!)}, ${microsPer(call, 2)})`,
    DATE_DIFF: ([a, b], call) => dateDiff(a!, b!, partOf(call, 2)),
    FORMAT_TIMESTAMP: ([, ts, zone], call) => {
      const z = zoneOf(zone);
      const zoneText =
        "name" in z ? z.name : e.stringLiteral(zone === undefined ? "UTC" : literalArg(call, 2, "a zone"));
      return formatTimestampSql(literalArg(call, 0, "its format"), ts!, z, zoneText);
    },
    PARSE_TIMESTAMP: (args, call) => parseTimestamp(args, call),
    // BigQuery: the date of PARSE_TIMESTAMP in UTC (its result is in UTC here)
    PARSE_DATE: ([f, s], call) => {
      dateParseFormat(literalArg(call, 0, "its format"));
      return `toDate32(${parseTimestamp([f!, s!], call)})`;
    },
    // the civil time read as UTC's: its fields are written as they are
    FORMAT_DATETIME: ([, d], call) =>
      formatTimestampSql(
        datetimeFormat(literalArg(call, 0, "its format")),
        `toDateTime64(${d}, 6, 'UTC')`,
        zoneOf(undefined),
        e.stringLiteral("UTC"),
      ),
    // BigQuery: FORMAT_TIMESTAMP at midnight UTC, time elements written as their own text
    FORMAT_DATE: ([, d], call) =>
      formatTimestampSql(
        dateFormatForTimestamp(literalArg(call, 0, "its format")),
        `toDateTime64(${d}, 6, 'UTC')`,
        zoneOf(undefined),
        e.stringLiteral("UTC"),
      ),
    // One row's array is built whole in memory: more elements than the limit are refused first.
    GENERATE_TIMESTAMP_ARRAY: ([a, b], call) => {
      const step = timestampArrayStep(call);
      const by = `(toInt64(${e.expr(step.amount)}) * ${step.micros})`;
      const span = `(${micros(b!)} - ${micros(a!)})`;
      const n = `if(${by} = 0 OR sign(${span}) * sign(${by}) < 0, 0, intDiv(${span}, ${by}) + 1)`;
      const count = `ifNull(${n}, 0)`;
      // a step of 0 is BigQuery's error (the count above would be 0: an empty array, SAFE.'s answer)
      const zeroStep = `ifNull(${e.raiseWhen("0", `ifNull(${by} = 0, false)`, ZERO_TIMESTAMP_STEP)}, 0)`;
      const guarded = `${count} + throwIf(${count} > ${MAX_GENERATED_ELEMENTS}, ${e.stringLiteral(`GENERATE_TIMESTAMP_ARRAY would produce more than ${MAX_GENERATED_ELEMENTS} elements`)}) + ${zeroStep}`;
      return `arrayMap(i -> ${fromMicros(`${micros(a!)} + i * ${by}`)}, range(0, toUInt64(${guarded})))`;
    },
    __EXTRACT: ([, ts], call) => {
      const part = call.args[0]?.k === "datepart" ? call.args[0].part : "";
      if (part === "DATE") return `toDate32(${ts})`;
      // WEEK and WEEK(<day>): days before the year's first such day are week 0 (mode 2: Sunday is 0)
      if (part === "WEEK" || part.startsWith("WEEK("))
        return `toInt64(intDiv(${weekNumberNumerator(`toDayOfYear(${ts})`, `toDayOfWeek(${ts}, 2)`, part)}, 7))`;
      const fn = EXTRACT[part];
      if (!fn) throw new QesError("sql_invalid", `EXTRACT(${part} …) is not supported.`);
      return `toInt64(${fn(ts!)})`;
    },
  } satisfies Partial<FunctionTable>;
}
