import type { ScalarType, SqlType } from "@qes/core";
import { clickhouseFloatText } from "./clickhouse-float-text.ts";
import { sqlString } from "./clickhouse-sql.ts";
import { clickhouseColumnType } from "./clickhouse-storage.ts";
import { checkedInt64, nullableType } from "./clickhouse-types.ts";

/** Integer text BigQuery casts: decimal or hexadecimal, surrounding spaces allowed. */
const INT_TEXT = "'^\\\\s*[+-]?([0-9]+|0[xX][0-9a-fA-F]+)\\\\s*$'";
const HEX_TEXT = "'^\\\\s*[+-]?0[xX][0-9a-fA-F]+\\\\s*$'";

const scalarOf = (t: SqlType): ScalarType | undefined => (t.t === "scalar" ? t.s : undefined);

/**
 * `convert` applied so that text it cannot read raises, as BigQuery's CAST does: on a Nullable
 * argument ClickHouse's conversions answer NULL instead of raising, so NULL is passed through
 * first and the conversion sees the value as not Nullable.
 */
function raising(x: string, convert: (notNull: string) => string): string {
  return `if(isNull(${x}), NULL, ${convert(`assumeNotNull(${x})`)})`;
}

/**
 * Text → INT64 as BigQuery reads it: decimal or `0x…` hexadecimal, signed; a value outside INT64
 * raises (NULL for SAFE_CAST). Read as Int128 and narrowed: toInt64 would wrap. Hexadecimal
 * digits beyond 32 are beyond Int128 too (leftPad would cut them): the maximum stands in.
 */
function textToInt(x: string, orNull: boolean): string {
  const digits = `replaceRegexpOne(trimBoth(${x}), '^[+-]?0[xX]0*', '')`;
  const sign = `if(startsWith(trimBoth(${x}), '-'), -1, 1)`;
  const magnitude = `if(length(${digits}) > 32, toUInt128('340282366920938463463374607431768211455'), reinterpretAsUInt128(reverse(unhex(leftPad(${digits}, 32, '0')))))`;
  const hex = `${sign} * toInt128(least(${magnitude}, toUInt128('9223372036854775809')))`;
  if (orNull)
    return `accurateCastOrNull(if(match(${x}, ${HEX_TEXT}), ${hex}, toInt128OrNull(trimBoth(${x}))), 'Int64')`;
  const decimal = raising(x, (v) => `toInt128(trimBoth(${v}))`);
  return checkedInt64(`if(match(${x}, ${HEX_TEXT}), ${hex}, ${decimal})`);
}

/**
 * FLOAT64 → INT64 rounding half away from zero (BigQuery), not to even, from the integer part and
 * the fraction (both exact): `floor(x + 0.5)` rounded the sum itself, so 2^52 + 1 became 2^52 + 2
 * and 0.49999999999999994 became 1.
 */
function roundToInt(x: string, orNull: boolean): string {
  const rounded = `(trunc(${x}) + if(abs(${x} - trunc(${x})) >= 0.5, sign(${x}), 0))`;
  return orNull ? `accurateCastOrNull(${rounded}, 'Int64')` : checkedInt64(rounded);
}

/**
 * BigQuery's text of a TIMESTAMP: UTC, with 0, 3 or 6 fractional digits, and `+00`.
 * The fraction is read from the microsecond count, never from text.
 */
export function timestampText(ts: string): string {
  const us = `toUnixTimestamp64Micro(${ts})`;
  const frac = `((${us} % 1000000 + 1000000) % 1000000)`;
  return `concat(formatDateTime(${ts}, '%Y-%m-%d %H:%i:%S', 'UTC'), multiIf(${frac} = 0, '', ${frac} % 1000 = 0, concat('.', leftPad(toString(intDiv(${frac}, 1000)), 3, '0')), concat('.', leftPad(toString(${frac}), 6, '0'))), '+00')`;
}

/** BigQuery's text of a DATETIME: no zone; 6 fractional digits only when there is a fraction. */
function datetimeText(ts: string): string {
  const frac = `((toUnixTimestamp64Micro(${ts}) % 1000000 + 1000000) % 1000000)`;
  return `concat(formatDateTime(${ts}, '%Y-%m-%d %H:%i:%S', 'UTC'), if(${frac} = 0, '', concat('.', leftPad(toString(${frac}), 6, '0'))))`;
}

/** The year, month and day text starts with (`YYYY-M-D`), each Int32 or NULL. */
function dateParts(x: string): { y: string; m: string; d: string } {
  const part = (re: string) => `toInt32OrNull(extract(${x}, '${re}'))`;
  return {
    y: part("^\\\\s*([0-9]{4})-"),
    m: part("^\\\\s*[0-9]{4}-([0-9]{1,2})"),
    d: part("^\\\\s*[0-9]{4}-[0-9]{1,2}-([0-9]{1,2})"),
  };
}

/**
 * Whether text starts with a real calendar day (no 2025-02-30, no month 13): ClickHouse's date
 * parsing would roll such a day over into the next month instead of refusing it. The month's
 * length is arithmetic: makeDate32 clamps a year before 1900 or after 2299 to those.
 */
function realDate(x: string): string {
  const { y, m, d } = dateParts(x);
  const leap = `((${y} % 4 = 0 AND ${y} % 100 != 0) OR ${y} % 400 = 0)`;
  const lastDay = `if(${m} = 2, if(${leap}, 29, 28), 31 - ((${m} - 1) % 7) % 2)`;
  return `ifNull(${m} BETWEEN 1 AND 12 AND ${d} BETWEEN 1 AND ${lastDay}, false)`;
}

/**
 * Text CAST AS DATE reads: a date (`YYYY-M-D`), perhaps with a time after it, which DuckDB and
 * PostgreSQL (and toDate32 before) accept too, though BigQuery refuses it.
 */
const DATE_TEXT =
  "'^\\\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{2}(:[0-9]{2}([.][0-9]*)?)?)?\\\\s*$'";

/**
 * The Date32 of date text, from its numbers: toDate32 of text clamps a year before 1900 or after
 * 2299 to those ('1850-06-01' was 1900-01-01), though a Date32 holds years 1 to 9999.
 */
function dateFromText(x: string): string {
  const { y, m, d } = dateParts(x);
  return civilDate32(y, m, d);
}

/**
 * The Date32 of a year, month and day (SQL integers, a real day of years 1 to 9999): makeDate32
 * and toDate32 clamp a year before 1900 or after 2299, or answer 1970-01-01. Days since
 * 1970-01-01 by H. Hinnant's days_from_civil (core's daysFromCivil); years from 1 on, so no
 * division here meets a negative number.
 */
export function civilDate32(y: string, m: string, d: string): string {
  const y2 = `(${y} - if(${m} <= 2, 1, 0))`;
  const era = `intDiv(${y2}, 400)`;
  const yoe = `(${y2} - ${era} * 400)`;
  const doy = `(intDiv(153 * ((${m} + 9) % 12) + 2, 5) + ${d} - 1)`;
  const doe = `(${yoe} * 365 + intDiv(${yoe}, 4) - intDiv(${yoe}, 100) + ${doy})`;
  return `addDays(toDate32(0), toInt64(${era}) * 146097 + ${doe} - 719468)`;
}

/**
 * Whether a time in the text (after the day) is a real one (hour 0-23, minute and second 0-59):
 * ClickHouse's parsing would roll 25:00 over into the next day instead of refusing it.
 */
function realTime(x: string): string {
  const part = (re: string) => `toInt32OrNull(extract(${x}, '${re}'))`;
  const h = part("^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[ Tt]([0-9]{1,2}):");
  const m = part("^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[ Tt][0-9]{1,2}:([0-9]{1,2})");
  const sec = part("^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[ Tt][0-9]{1,2}:[0-9]{1,2}:([0-9]{1,2})");
  return `(ifNull(${h} <= 23, true) AND ifNull(${m} <= 59, true) AND ifNull(${sec} <= 59, true))`;
}

function textToTimestamp(x: string, orNull: boolean): string {
  if (!orNull) return raisingTimestamp(x, "'UTC'");
  return `if(${realDate(x)} AND ${realTime(x)}, parseDateTime64BestEffortOrNull(${x}, 6, 'UTC'), NULL)`;
}

/**
 * Timestamp text read in zone `tz` (SQL), raising on text it cannot read, NULL for NULL. On a
 * Nullable argument parseDateTime64BestEffort reads the empty placeholder of each NULL row too —
 * also behind `raising`'s if() once the parse is shared by two expressions, which ClickHouse then
 * evaluates on every row — and the whole query failed ("Cannot read DateTime") where BigQuery
 * answers NULL for that row: a NULL row is read as a valid text instead, its result dropped.
 */
export function raisingTimestamp(x: string, tz: string): string {
  // a day or time that does not exist is refused, not rolled over (2025-02-30, 25:00)
  const text = `ifNull(${x}, '1970-01-01')`;
  const checked = `throwIf(NOT (${realDate(text)} AND ${realTime(text)}), 'Invalid timestamp: no such day or time')`;
  return `if(isNull(${x}), NULL, parseDateTime64BestEffort(${text}, 6, ${tz}) + ${checked})`;
}

/** 'true' or 'false' in any case; other text NULL (SAFE_CAST's answer) */
function textToBool(x: string): string {
  return `multiIf(lower(${x}) = 'true', true, lower(${x}) = 'false', false, NULL)`;
}

/** CAST: BigQuery's conversion rules where ClickHouse's differ; the rest is CAST to the Nullable type. */
export function clickhouseCast(x: string, from: SqlType, to: ScalarType): string {
  const f = scalarOf(from);
  if (f === to) return x;
  switch (`${f ?? "NULL"}>${to}`) {
    // other text is BigQuery's "Bad bool value" (it was NULL, where every other CAST raised)
    case "STRING>BOOL":
      return `if(throwIf(ifNull(lower(${x}) NOT IN ('true', 'false'), false), 'Bad bool value') = 0, ${textToBool(x)}, NULL)`;
    case "STRING>INT64":
      return textToInt(x, false);
    case "STRING>FLOAT64":
      return raising(x, (v) => `toFloat64(trimBoth(${v}))`);
    case "STRING>TIMESTAMP":
    case "STRING>DATETIME":
      return textToTimestamp(x, false);
    case "STRING>DATE": {
      // a day that does not exist raises (toDate32 rolled 2025-02-30 over into March). A NULL
      // row is read as a valid text, its result dropped: behind if() the check still ran on
      // assumeNotNull's '' of each NULL row and raised (raisingTimestamp reads NULL rows so too)
      const v = `ifNull(${x}, '1970-01-01')`;
      return `if(isNull(${x}), NULL, addDays(${dateFromText(v)}, throwIf(NOT (match(${v}, ${DATE_TEXT}) AND ${realDate(v)}), 'Invalid date: no such day')))`;
    }
    case "FLOAT64>INT64":
      return roundToInt(x, false);
    case "INT64>BOOL":
      return `(${x} != 0)`;
    case "TIMESTAMP>STRING":
      return timestampText(x);
    case "DATETIME>STRING":
      return datetimeText(x);
    case "FLOAT64>STRING":
      return clickhouseFloatText(x);
    case "BOOL>STRING":
      // if() reads a NULL condition as false: a NULL BOOL must stay NULL
      return `if(isNull(${x}), NULL, if(${x}, 'true', 'false'))`;
    case "DATE>TIMESTAMP":
    case "DATE>DATETIME":
      return `toDateTime64(${x}, 6, 'UTC')`;
    case "TIMESTAMP>DATE":
    case "DATETIME>DATE":
      return `toDate32(${x}, 'UTC')`;
    case "TIMESTAMP>DATETIME":
    case "DATETIME>TIMESTAMP":
      return x;
    default:
      return `CAST(${x} AS ${nullableType(to)})`;
  }
}

/** SAFE_CAST (and DESIGN.md §3's casts of JSON fields): NULL where the value does not convert. */
export function clickhouseSafeCast(x: string, from: SqlType, to: ScalarType): string {
  const f = scalarOf(from) ?? "STRING";
  if (f === to) return x;
  switch (`${f}>${to}`) {
    case "STRING>INT64":
      return `if(match(${x}, ${INT_TEXT}), ${textToInt(x, true)}, NULL)`;
    case "STRING>FLOAT64":
      return `toFloat64OrNull(trimBoth(${x}))`;
    case "STRING>BOOL":
      return textToBool(x);
    case "STRING>TIMESTAMP":
    case "STRING>DATETIME":
      return textToTimestamp(x, true);
    case "STRING>DATE":
      return `if(match(${x}, ${DATE_TEXT}) AND ${realDate(x)}, ${dateFromText(x)}, NULL)`;
    case "FLOAT64>INT64":
      return roundToInt(x, true);
    // conversions that cannot fail are CAST's: accurateCastOrNull answered NULL for an INT64
    // beyond 2^53 that FLOAT64 does not hold exactly (BigQuery: the nearest), and wrote a
    // FLOAT64 in ClickHouse's text, not BigQuery's
    case "INT64>FLOAT64":
    case "INT64>STRING":
    case "FLOAT64>STRING":
    case "BOOL>INT64":
    case "INT64>BOOL":
    case "TIMESTAMP>STRING":
    case "DATETIME>STRING":
    case "BOOL>STRING":
    case "DATE>TIMESTAMP":
    case "DATE>DATETIME":
    case "TIMESTAMP>DATE":
    case "DATETIME>DATE":
    case "TIMESTAMP>DATETIME":
    case "DATETIME>TIMESTAMP":
      return clickhouseCast(x, from, to);
    default:
      return `accurateCastOrNull(${x}, ${sqlString(clickhouseColumnType(to))})`;
  }
}
