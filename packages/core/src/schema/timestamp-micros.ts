/**
 * Timestamps as exact integer microseconds since the Unix epoch (UTC). A JS `Date` keeps only
 * milliseconds, so ISO 8601 text is parsed and written here with integer arithmetic.
 */

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$/;

const MICROS_PER_SECOND = 1_000_000n;

/**
 * BigQuery's TIMESTAMP range, 0001-01-01T00:00:00Z (first) to 10000-01-01T00:00:00Z (past the
 * last), in unix microseconds: what every backend stores and compares alike
 */
export const MIN_TIMESTAMP_MICROS = -62_135_596_800_000_000n;
export const END_TIMESTAMP_MICROS = 253_402_300_800_000_000n;
const MICROS_PER_DAY = 86_400_000_000n;

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The date of a day number (inverse of `daysFromCivil`). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses ISO 8601 / RFC 3339 text (`2025-01-15T09:00:00.123456Z`, a space instead of `T`, a date
 * alone, an offset `+02:00` / `+0200` / `+02`, `Z` or ` UTC`; no zone = UTC) into unix
 * microseconds. Digits beyond microseconds are truncated. Returns null when the text is not such a
 * timestamp or names an impossible date or time.
 */
export function parseIsoTimestampMicros(text: string): bigint | null {
  const m = ISO_TIMESTAMP.exec(text.trim());
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const fraction = m[7] === undefined ? 0n : BigInt((m[7] + "000000").slice(0, 6));
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== "Z" && zone !== "z" && zone !== "UTC") {
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const seconds =
    daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  return BigInt(seconds) * MICROS_PER_SECOND + fraction;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function splitMicros(micros: bigint): { days: number; timeMicros: bigint } {
  let days = micros / MICROS_PER_DAY;
  let timeMicros = micros % MICROS_PER_DAY;
  if (timeMicros < 0n) {
    timeMicros += MICROS_PER_DAY;
    days -= 1n;
  }
  return { days: Number(days), timeMicros };
}

/** `YYYY-MM-DD` of a day number since the epoch. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  const y = year < 0 ? "-" + pad(-year, 4) : pad(year, 4);
  return `${y}-${pad(month, 2)}-${pad(day, 2)}`;
}

/**
 * Text of a microsecond instant (or naive clock reading): `YYYY-MM-DD<sep>HH:MM:SS` followed by
 * `.ffffff` always (`fraction: "always"`) or only when it is not zero (`"nonzero"`).
 */
export function formatMicros(micros: bigint, sep = "T", fraction: "always" | "nonzero" = "nonzero"): string {
  const { days, timeMicros } = splitMicros(micros);
  const secs = Number(timeMicros / MICROS_PER_SECOND);
  const frac = Number(timeMicros % MICROS_PER_SECOND);
  const time = `${pad(Math.floor(secs / 3600), 2)}:${pad(Math.floor(secs / 60) % 60, 2)}:${pad(secs % 60, 2)}`;
  const tail = fraction === "always" || frac !== 0 ? "." + pad(frac, 6) : "";
  return `${formatDate(days)}${sep}${time}${tail}`;
}
