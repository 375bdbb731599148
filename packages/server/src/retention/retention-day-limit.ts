import type { RetentionPolicy, SourceDayLimit } from "@qes/core";

/**
 * Days a source holds besides those of the past ingest takes (ingest/day-limit.ts): today,
 * tomorrow (events may lie up to a day ahead), and the oldest day once more between midnight and
 * the next hourly run.
 */
const DAYS_HELD_BESIDES_THE_PAST = 3;

/**
 * The most days of the past ingest takes into a source on a backend that holds at most
 * `limit.days` per source (`Backend.sourceDayLimit`): past them a source's scans without a time
 * filter fail (PostgreSQL: its lock table), so an ingest token spreading events over past days
 * could make a source unqueryable however long it is kept.
 */
export function ingestHorizonDays(limit: SourceDayLimit): number {
  return Math.max(1, limit.days - DAYS_HELD_BESIDES_THE_PAST);
}

/**
 * Warnings at start-up for a retention (`QES_RETENTION_DAYS`, its default or a source's; 0,
 * forever, included) that keeps more days of a source than the backend can hold: ingest still
 * takes only events of the days it can hold (`ingestHorizonDays`), but a source that grows past
 * them by time alone — a deployment keeping years — has its scans without a time filter fail.
 * A warning, not a stop: `0` keeps forever (DESIGN.md §10), and time filters keep working.
 */
export function dayLimitRetentionWarnings(
  policy: RetentionPolicy,
  limit: SourceDayLimit | undefined,
): string[] {
  if (limit === undefined) return [];
  const horizon = ingestHorizonDays(limit);
  const entries: [string, number][] = [
    ["the default", policy.defaultDays],
    ...Object.entries(policy.perSource).map(([source, days]): [string, number] => [`source ${source}`, days]),
  ];
  const warnings: string[] = [];
  for (const [what, days] of entries) {
    if (days !== 0 && days <= horizon) continue;
    warnings.push(
      `QES_RETENTION_DAYS: ${what} keeps ${days === 0 ? "events forever (0)" : `${days} days`}, more ` +
        `days than a source may hold on this store (${limit.days}: ${limit.reason}). Ingest refuses ` +
        `events older than ${horizon} days; a source that grows past ${limit.days} days by time ` +
        "alone fails its queries without a time filter. Set a retention of at most " +
        `${horizon} days, or raise the bound.`,
    );
  }
  return warnings;
}
