import { QesError } from "@qes/core";

/** ClickHouse's largest RANGE offset: "must be a nonnegative 32-bit integer" (2^31 - 1 refused too) */
const MAX_RANGE_OFFSET = 2_147_483_646n;

/** A RANGE frame ClickHouse takes over its ORDER BY key divided by 2^`shift`. */
export interface ScaledRangeFrame {
  frame: string;
  shift: number;
}

/**
 * A RANGE frame (the compiler's `RANGE BETWEEN n PRECEDING AND m FOLLOWING`) with an offset past
 * what ClickHouse takes, rewritten for the key halved `shift` times: the same frame, as long as
 * every offset divides by 2^shift (then the halved key and offsets are exact in Float64 for keys
 * within ±2^53). Dashboards' offsets over unix microseconds do: an hour is 3600000000 = 2^10·…,
 * a day 2^13·…, 30 days 2^14·…. Undefined when ClickHouse takes the frame as it is; a 422 naming
 * the bound when no power of two brings an offset within it.
 */
export function scaledRangeFrame(frame: string): ScaledRangeFrame | undefined {
  if (!frame.startsWith("RANGE ")) return undefined;
  const offsets = [...frame.matchAll(/(\d+) (?:PRECEDING|FOLLOWING)/g)].map((m) => BigInt(m[1]!));
  if (!offsets.some((n) => n > MAX_RANGE_OFFSET)) return undefined;
  let largest = 0n;
  for (const n of offsets) if (n > largest) largest = n;
  let shift = 0;
  while (largest >> BigInt(shift) > MAX_RANGE_OFFSET) shift++;
  const divisor = 1n << BigInt(shift);
  if (offsets.some((n) => n % divisor !== 0n))
    throw new QesError(
      "sql_invalid",
      `ClickHouse takes a RANGE frame's offset up to ${MAX_RANGE_OFFSET}, or one that divides by a power of two to within it (${largest} needs 2^${shift}); round the offset (an hour of microseconds, 3600000000, works).`,
    );
  return {
    frame: frame.replace(/(\d+)(?= (?:PRECEDING|FOLLOWING))/g, (n) => String(BigInt(n) / divisor)),
    shift,
  };
}
