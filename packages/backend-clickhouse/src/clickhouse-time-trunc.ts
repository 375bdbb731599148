import { QesError } from "@qes/core";
import { bindOnce } from "./clickhouse-bind-once.ts";

/**
 * Truncation to a BigQuery date part as arithmetic on unix microseconds and day numbers.
 * ClickHouse's own `toStartOf*` functions answer wrongly outside 1970 … 2149 (their results are
 * DateTime / Date): `toStartOfDay` of 1969-12-31 23:59:59.5 is 1970-01-01, of year 1 a time in
 * 2042, and `toStartOfYear` of a 9999 date is 2149-06-06 — where BigQuery's TIMESTAMP and DATE
 * run from year 1 to 9999. The calendar readings used here (`toDayOfMonth`, `toDayOfYear`,
 * `toISOWeek`, `toYear`) read DateTime64 and Date32 correctly over that whole range.
 */

const MICROS_PER: Record<string, number> = {
  MILLISECOND: 1_000,
  SECOND: 1_000_000,
  MINUTE: 60_000_000,
  HOUR: 3_600_000_000,
  DAY: 86_400_000_000,
};
const MICROS_PER_DAY = MICROS_PER.DAY!;

/** Day number (since 1970-01-01) of the first day of a week starting on that day: 1970-01-04 was a Sunday. */
const WEEK_START_DAY: Record<string, number> = {
  SUNDAY: 3,
  MONDAY: 4,
  TUESDAY: 5,
  WEDNESDAY: 6,
  THURSDAY: 0,
  FRIDAY: 1,
  SATURDAY: 2,
};

/** days of a common year before the first month of each quarter */
const QUARTER_START_DAY = "[0, 90, 181, 273]";

// Constants are Int64: with an unsigned literal ClickHouse takes Int64 % UInt64 in unsigned
// arithmetic (-62135596800000000 % 86400000000 is 28909551616).
const int = (n: number) => `toInt64(${n})`;

/** `x` rounded down to a multiple of `unit` (toward the past before 1970 too; intDiv truncates toward zero) */
const floorTo = (x: string, unit: number) => `(${x} - toInt64(positiveModulo(${x}, ${int(unit)})))`;

/** the day number of the first day of the week (starting on `weekDay`) that holds day number `days` */
const weekStart = (days: string, weekDay: string) =>
  `(${days} - toInt64(positiveModulo(${days} - ${int(WEEK_START_DAY[weekDay]!)}, ${int(7)})))`;

function weekDayOf(part: string): string | undefined {
  if (part === "WEEK") return "SUNDAY";
  if (part === "ISOWEEK") return "MONDAY";
  if (!part.startsWith("WEEK(")) return undefined;
  const day = part.slice(5, -1);
  if (WEEK_START_DAY[day] === undefined) throw new QesError("sql_invalid", `Unknown week start ${day}.`);
  return day;
}

/** the day number of the first day of `part` that holds `value` (whose day number is `days`) */
function startDay(value: string, days: string, part: string): string {
  const weekDay = weekDayOf(part);
  if (weekDay !== undefined) return weekStart(days, weekDay);
  const yearStart = `(${days} - (toInt64(toDayOfYear(${value})) - 1))`;
  switch (part) {
    case "DAY":
      return days;
    case "MONTH":
      return `(${days} - (toInt64(toDayOfMonth(${value})) - 1))`;
    case "YEAR":
      return yearStart;
    case "QUARTER": {
      const y = `toYear(${value})`;
      const q = `toQuarter(${value})`;
      const leap = `((${y} % 4 = 0 AND ${y} % 100 != 0) OR ${y} % 400 = 0)`;
      return `(${yearStart} + arrayElement(${QUARTER_START_DAY}, ${q}) + if(${q} > 1 AND ${leap}, 1, 0))`;
    }
    case "ISOYEAR":
      return `(${weekStart(days, "MONDAY")} - (toInt64(toISOWeek(${value})) - 1) * 7)`;
    default:
      throw new QesError("sql_invalid", `Truncation to ${part} is not supported.`);
  }
}

/**
 * A value truncated to a BigQuery date part: a DateTime64(6, 'UTC') (a TIMESTAMP in UTC or a
 * DATETIME's reading), or with `date` a Date32. Weeks start on Sunday (WEEK), Monday (ISOWEEK) or
 * the day named (WEEK(<day>)).
 */
export function truncateSql(value: string, part: string, date: boolean): string {
  return bindOnce(value, (v) => truncatedSql(v, part, date));
}

function truncatedSql(value: string, part: string, date: boolean): string {
  if (date) {
    if (part === "DAY") return value;
    return `addDays(toDate32(0), ${startDay(value, `toInt64(${value})`, part)})`;
  }
  if (part === "MICROSECOND") return value;
  const micros = `toUnixTimestamp64Micro(${value})`;
  const unit = MICROS_PER[part];
  const start =
    unit !== undefined
      ? floorTo(micros, unit)
      : `(${startDay(value, `intDiv(${floorTo(micros, MICROS_PER_DAY)}, ${int(MICROS_PER_DAY)})`, part)} * ${int(MICROS_PER_DAY)})`;
  return `fromUnixTimestamp64Micro(${start}, 'UTC')`;
}
