import type { RetentionPolicy } from "../backend.ts";
import { QesError } from "../errors.ts";
import { hasControlCharacter } from "../schema/source-name.ts";

const MICROS_PER_DAY = 86_400_000_000n;
/** 100 years: beyond that a number of days is a typo, not a retention */
const MAX_DAYS = 36_500;

/** The days a source keeps: its override, else the default; 0 keeps forever. */
export function retentionDaysOf(policy: RetentionPolicy, source: string): number {
  return Object.hasOwn(policy.perSource, source) ? policy.perSource[source]! : policy.defaultDays;
}

/**
 * The oldest instant a source keeps, in unix µs: the start of the UTC day `days` days before
 * the day of `nowMicros`. Retention works in whole UTC days, so a backend that partitions by day
 * drops whole partitions and every backend removes the same events: with 30 days, today and the
 * 30 days before it are kept. Null when `days` is 0 (forever).
 */
export function retentionCutoffMicros(days: number, nowMicros: bigint): bigint | null {
  if (days === 0) return null;
  const today = nowMicros - (((nowMicros % MICROS_PER_DAY) + MICROS_PER_DAY) % MICROS_PER_DAY);
  return today - BigInt(days) * MICROS_PER_DAY;
}

function days(text: string, what: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) > MAX_DAYS) {
    throw new QesError(
      "invalid_config",
      `QES_RETENTION_DAYS: ${what} "${t}" is not a whole number of days from 0 (keep forever) to ${MAX_DAYS}`,
      { param: "QES_RETENTION_DAYS" },
    );
  }
  return Number(t);
}

/**
 * Parses `QES_RETENTION_DAYS` (DESIGN.md §8, §10): a default and per-source overrides,
 * `30,postgres.logs=7,cloudflare.logs.prod=90`; `0` keeps forever; unset or empty means 30. The
 * default may be omitted when overrides are given (`postgres.logs=7` keeps the rest 30 days).
 * A source name may contain `.` and `-`, never `,` or `=` (the source name rule forbids neither,
 * but no built-in or sensible name uses them). Throws QesError('invalid_config') naming the
 * variable and the bad entry.
 */
export function parseRetentionDays(text: string | undefined): RetentionPolicy {
  const perSource: Record<string, number> = {};
  let defaultDays: number | undefined;
  if (text === undefined || text.trim() === "") return { defaultDays: 30, perSource };
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") {
      throw new QesError("invalid_config", `QES_RETENTION_DAYS: an empty entry in "${text}"`, {
        param: "QES_RETENTION_DAYS",
      });
    }
    const eq = entry.indexOf("=");
    if (eq < 0) {
      if (defaultDays !== undefined) {
        throw new QesError("invalid_config", "QES_RETENTION_DAYS: the default is given twice", {
          param: "QES_RETENTION_DAYS",
        });
      }
      defaultDays = days(entry, "the default");
      continue;
    }
    const source = entry.slice(0, eq).trim();
    if (source === "") {
      throw new QesError("invalid_config", `QES_RETENTION_DAYS: "${entry}" names no source`, {
        param: "QES_RETENTION_DAYS",
      });
    }
    // a newline- or tab-separated list (a multi-line value in a compose file) read as one
    // override for a source no store can hold, and left the sources it meant at the default
    if (hasControlCharacter(source)) {
      throw new QesError(
        "invalid_config",
        `QES_RETENTION_DAYS: ${JSON.stringify(source)} is no source name (it has a control character); separate entries with commas`,
        { param: "QES_RETENTION_DAYS" },
      );
    }
    if (Object.hasOwn(perSource, source)) {
      throw new QesError("invalid_config", `QES_RETENTION_DAYS: source ${source} is given twice`, {
        param: "QES_RETENTION_DAYS",
      });
    }
    Object.defineProperty(perSource, source, {
      value: days(entry.slice(eq + 1), `the days of ${source}`),
      enumerable: true,
    });
  }
  return { defaultDays: defaultDays ?? 30, perSource };
}
