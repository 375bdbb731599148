import { QesError } from "../errors.ts";

/**
 * UTC offsets of a time zone, from the runtime's tz database (Intl), for engines that cannot
 * convert zones themselves (DuckDB without its ICU extension). `offsets[0]` holds before
 * `transitions[0]`; `offsets[i + 1]` from `transitions[i]` on. Transitions are unix µs.
 */
export interface ZoneRules {
  zone: string;
  transitions: bigint[];
  /** seconds east of UTC */
  offsets: number[];
}

const FIXED = /^(?:UTC|Z|Etc\/UTC|GMT|Etc\/GMT)?\s*(?:([+-])(\d{1,2})(?::?(\d{2}))?)?$/i;
const FROM_YEAR = 1970;
const TO_YEAR = 2100;
const cache = new Map<string, ZoneRules>();

export function zoneRules(zone: string): ZoneRules {
  const hit = cache.get(zone);
  if (hit) return hit;
  const rules = computeRules(zone);
  cache.set(zone, rules);
  return rules;
}

/**
 * Seconds east of UTC of a zone written as an offset (`+05:30`, `UTC-3`, `Z`, `UTC`): BigQuery's
 * sign, not POSIX's. Undefined for a tz database name.
 */
export function fixedZoneOffset(zone: string): number | undefined {
  const fixed = FIXED.exec(zone.trim());
  if (!fixed) return undefined;
  const sign = fixed[1] === "-" ? -1 : 1;
  return sign * (Number(fixed[2] ?? 0) * 3600 + Number(fixed[3] ?? 0) * 60);
}

function computeRules(zone: string): ZoneRules {
  const fixed = fixedZoneOffset(zone);
  if (fixed !== undefined) return { zone, transitions: [], offsets: [fixed] };
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    throw new QesError("sql_invalid", `Unknown time zone '${zone}'.`);
  }
  const offsetAt = (ms: number): number => {
    const parts: Record<string, number> = {};
    for (const p of format.formatToParts(new Date(ms)))
      if (p.type !== "literal") parts[p.type] = Number(p.value);
    const local = Date.UTC(
      parts.year!,
      parts.month! - 1,
      parts.day!,
      parts.hour!,
      parts.minute!,
      parts.second!,
    );
    return Math.round((local - Math.floor(ms / 1000) * 1000) / 1000);
  };
  const start = Date.UTC(FROM_YEAR, 0, 1);
  const end = Date.UTC(TO_YEAR, 0, 1);
  const step = 7 * 86_400_000;
  const transitions: bigint[] = [];
  const offsets = [offsetAt(start)];
  let prevMs = start;
  let prev = offsets[0]!;
  for (let ms = start + step; ms <= end; ms += step) {
    const o = offsetAt(ms);
    if (o !== prev) {
      // binary search the first second with the new offset
      let lo = prevMs;
      let hi = ms;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (offsetAt(mid) === prev) lo = mid;
        else hi = mid;
      }
      transitions.push(BigInt(hi) * 1000n);
      offsets.push(o);
      prev = o;
    }
    prevMs = ms;
  }
  return { zone, transitions, offsets };
}
