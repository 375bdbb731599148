import { ingestHorizonDays, type RetentionPolicy, type SourceDayLimit } from "@qes/core";

/**
 * Warnings at start-up for a retention (`QES_RETENTION_DAYS`, its default or a source's; 0,
 * forever, included) that keeps more days of a source than the backend can hold: ingest opens
 * days older than `ingestHorizonDays` only while a source holds fewer days than the bound, but
 * always takes the recent ones, so a source that grows past the bound by time alone — a
 * deployment keeping years — has its scans without a time filter fail.
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
        `days than a source may hold on this store (${limit.days}: ${limit.reason}). Ingest takes ` +
        `events older than ${horizon} days only while a source holds fewer days; a source that grows past ${limit.days} days by time ` +
        "alone fails its queries without a time filter. Set a retention of at most " +
        `${horizon} days, or raise the bound.`,
    );
  }
  return warnings;
}
