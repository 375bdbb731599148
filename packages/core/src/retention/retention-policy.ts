import type { RetentionPolicy } from "../backend.ts";
import { splitOutsideQuotes, unquoteName } from "../config/quoted-list.ts";
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

function invalid(message: string): QesError {
  return new QesError("invalid_config", `QES_RETENTION_DAYS: ${message}`, { param: "QES_RETENTION_DAYS" });
}

function days(text: string, what: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) > MAX_DAYS) {
    throw invalid(`${what} "${t}" is not a whole number of days from 0 (keep forever) to ${MAX_DAYS}`);
  }
  return Number(t);
}

/**
 * Parses `QES_RETENTION_DAYS` (DESIGN.md §8, §10): a default and per-source overrides,
 * `30,postgres.logs=7,cloudflare.logs.prod=90`; `0` keeps forever; unset or empty means 30. The
 * default may be omitted when overrides are given (`postgres.logs=7` keeps the rest 30 days).
 * A source name holding `,`, `=`, `"` or white space at its ends is written as a JSON string:
 * `"eu,west"=7`. Throws QesError('invalid_config') naming the variable and the bad entry.
 */
export function parseRetentionDays(text: string | undefined): RetentionPolicy {
  const perSource: Record<string, number> = {};
  let defaultDays: number | undefined;
  if (text === undefined || text.trim() === "") return { defaultDays: 30, perSource };
  for (const entry of splitOutsideQuotes(text, ",")) {
    if (entry.trim() === "") throw invalid(`an empty entry in "${text}"`);
    const parts = splitOutsideQuotes(entry, "=");
    if (parts.length === 1 && entry.trim().startsWith('"')) {
      const listed = unquoteName(entry);
      throw invalid("error" in listed ? listed.error : `${entry.trim()} is a source name without =days`);
    }
    if (parts.length === 1) {
      if (defaultDays !== undefined) throw invalid("the default is given twice");
      defaultDays = days(entry, "the default");
      continue;
    }
    const listed = unquoteName(parts[0]!);
    if ("error" in listed) throw invalid(listed.error);
    const source = listed.name;
    if (source === "") throw invalid(`"${entry.trim()}" names no source`);
    // a newline- or tab-separated list (a multi-line value in a compose file) read as one
    // override for a source no store can hold, and left the sources it meant at the default
    if (hasControlCharacter(source)) {
      throw invalid(
        `${JSON.stringify(source)} is no source name (it has a control character); separate entries with commas`,
      );
    }
    if (Object.hasOwn(perSource, source)) throw invalid(`source ${source} is given twice`);
    Object.defineProperty(perSource, source, {
      value: days(parts.slice(1).join("="), `the days of ${source}`),
      enumerable: true,
    });
  }
  return { defaultDays: defaultDays ?? 30, perSource };
}
