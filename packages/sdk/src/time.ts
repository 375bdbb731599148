/**
 * Timestamps on the wire (DESIGN.md §4): a TIMESTAMP column is an integer of unix microseconds
 * (16 digits), which a JS number holds exactly (below 2^53 until the year 2255); a `Date` keeps only
 * milliseconds. These helpers convert without losing the microseconds where it matters.
 */

/** A wire TIMESTAMP: unix microseconds as a number, or as a string/bigint from other sources. */
export type Micros = number | bigint | string;

/** A timestamp parameter: a `Date` (sent as ISO 8601 with milliseconds) or an ISO 8601 string (sent unchanged). */
export type TimestampInput = Date | string;

function toBigMicros(us: Micros): bigint {
  if (typeof us === "bigint") return us;
  if (typeof us === "number") {
    if (!Number.isInteger(us)) throw new TypeError(`not a whole number of microseconds: ${us}`);
    return BigInt(us);
  }
  if (!/^-?\d+$/.test(us.trim())) throw new TypeError(`not a whole number of microseconds: "${us}"`);
  return BigInt(us.trim());
}

/** floor division, also for instants before 1970 */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/**
 * Unix microseconds → `Date`, truncated to the millisecond (a `Date` holds no more).
 * `microsToDate(1736942370123456)` is `2025-01-15T11:59:30.123Z`.
 */
export function microsToDate(us: Micros): Date {
  return new Date(Number(floorDiv(toBigMicros(us), 1000n)));
}

/** A microsecond instant split into what a `Date` holds and what it does not. */
export interface PreciseDate {
  /** the instant truncated to the millisecond */
  date: Date;
  /** the microseconds past `date`'s millisecond, 0–999 */
  micros: number;
  /** ISO 8601 with six fraction digits, `2025-01-15T11:59:30.123456Z`; usable as a timestamp parameter */
  iso: string;
}

/** Unix microseconds → `{date, micros, iso}` keeping all six fraction digits. */
export function microsToPreciseDate(us: Micros): PreciseDate {
  const big = toBigMicros(us);
  const ms = floorDiv(big, 1000n);
  const date = new Date(Number(ms));
  if (Number.isNaN(date.getTime())) throw new RangeError(`out of the range of Date: ${String(us)} µs`);
  const micros = Number(big - ms * 1000n);
  const iso = `${date.toISOString().slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
  return { date, micros, iso };
}

/** Unix microseconds → ISO 8601 with six fraction digits (`2025-01-15T11:59:30.123456Z`). */
export function microsToIso(us: Micros): string {
  return microsToPreciseDate(us).iso;
}

/** A timestamp parameter as sent: a `Date` as ISO with milliseconds; a string unchanged (its µs survive). */
export function timestampParam(value: TimestampInput): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError("Invalid Date given as a timestamp parameter");
    return value.toISOString();
  }
  return value;
}
