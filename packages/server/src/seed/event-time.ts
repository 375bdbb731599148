import type { Prng } from "./prng.ts";

const MICROS_PER_SECOND = 1_000_000n;
const HOUR = 3600n * MICROS_PER_SECOND;
const DAY = 24n * HOUR;

/** How the timestamps of generated events are spread before `now`. */
export type TimeSpread =
  /** over `days` days, dense in the last hour and day so minutely and hourly charts have data */
  | { days: number }
  /** uniformly over the last `seconds` seconds (the demo trickle) */
  | { lastSeconds: number };

/** a timestamp (µs) before `now` drawn from the spread */
export function eventTime(rng: Prng, nowMicros: bigint, spread: TimeSpread): bigint {
  if ("lastSeconds" in spread)
    return nowMicros - randomMicros(rng, BigInt(Math.round(spread.lastSeconds * 1e6)));
  const span = BigInt(Math.max(1, Math.round(spread.days * 86_400e6)));
  const r = rng.next();
  // 35 % in the last hour, 25 % in the last day, the rest over the whole span
  const window = r < 0.35 ? HOUR : r < 0.6 ? DAY : span;
  return nowMicros - randomMicros(rng, window < span ? window : span);
}

function randomMicros(rng: Prng, range: bigint): bigint {
  if (range <= 0n) return 0n;
  // two draws give 64 bits of spread, plenty for any span in µs
  const big = (BigInt(rng.uint32()) << 32n) | BigInt(rng.uint32());
  return big % range;
}

/** `2025-01-15T09:00:00.123456Z` */
export function isoMicros(micros: bigint): string {
  const ms = micros / 1000n;
  const iso = new Date(Number(ms)).toISOString(); // …ss.mmmZ
  const fraction = (((micros % MICROS_PER_SECOND) + MICROS_PER_SECOND) % MICROS_PER_SECOND)
    .toString()
    .padStart(6, "0");
  return `${iso.slice(0, 19)}.${fraction}Z`;
}

/** `2025-01-15 09:00:00.123 UTC`, PostgreSQL's log time */
export function postgresTime(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}
