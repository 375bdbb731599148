import { QesError } from "../errors.ts";

/**
 * ISO 8601 / BigQuery timestamp text → unix microseconds, exactly. A JS Date keeps only
 * milliseconds, so the fraction is parsed here. No zone means UTC (BigQuery's rule).
 * Accepts `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.f{1,9}]]` and a zone of `Z`, `UTC`, `±HH[:MM]`.
 */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$/;

export function parseTimestampMicros(text: string): bigint | undefined {
  const m = ISO.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  let offsetMinutes = 0;
  if (zone && zone !== "Z" && zone !== "z" && zone !== "UTC") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  // Sub-microsecond digits are truncated, as BigQuery does when it stores a TIMESTAMP.
  const micros = BigInt((frac + "000000").slice(0, 6));
  return (BigInt(ms) - BigInt(offsetMinutes) * 60_000n) * 1000n + micros;
}

/** Unix microseconds → `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), the text form bound to engines. */
export function formatTimestampMicros(micros: bigint): string {
  let frac = micros % 1_000_000n;
  if (frac < 0n) frac += 1_000_000n;
  const iso = new Date(Number((micros - frac) / 1000n)).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.toString().padStart(6, "0")}`;
}

export function requireTimestampMicros(text: string, param: string): bigint {
  const micros = parseTimestampMicros(text);
  if (micros === undefined) {
    throw new QesError(
      "invalid_parameter",
      `Parameter "${param}" must be an ISO 8601 timestamp such as 2024-01-15T09:00:00.123456Z; got "${text}".`,
      { param },
    );
  }
  return micros;
}
