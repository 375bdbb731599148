import { QesError, type RetentionPolicy, type SourceDayLimit } from "@qes/core";

/**
 * Days a source holds under a retention of `days`, ingest refusing events older than it keeps
 * (ingest/day-limit.ts): today and the `days` whole days before it, tomorrow (events may lie up to
 * a day ahead), and the oldest day once more between midnight and the next hourly run.
 */
export function daysHeldUnder(days: number): number {
  return days + 3;
}

/**
 * Refuses at start-up a retention (`QES_RETENTION_DAYS`, its default or a source's) that would
 * keep more days of a source than the backend can hold (`Backend.sourceDayLimit`; 0, forever,
 * included): on PostgreSQL such a source's queries without a time filter, and then other
 * sessions of the whole server, fail once it has grown, which takes an ingest token five
 * requests of past days, or a honest deployment the years alone. A stop naming the variable at
 * start-up rather than a store that breaks months later.
 */
export function checkRetentionDayLimit(policy: RetentionPolicy, limit: SourceDayLimit | undefined): void {
  if (limit === undefined) return;
  const most = limit.days - daysHeldUnder(0);
  const entries: [string, number][] = [
    ["the default", policy.defaultDays],
    ...Object.entries(policy.perSource).map(([source, days]): [string, number] => [`source ${source}`, days]),
  ];
  for (const [what, days] of entries) {
    if (days !== 0 && daysHeldUnder(days) <= limit.days) continue;
    throw new QesError(
      "invalid_config",
      `QES_RETENTION_DAYS: ${what} keeps ${days === 0 ? "events forever (0)" : `${days} days`}, more days ` +
        `than a source may hold on this store: ${limit.reason}. ` +
        (most >= 1 ? `Set a retention of 1 to ${most} days.` : "It holds too few days for any retention."),
      { param: "QES_RETENTION_DAYS" },
    );
  }
}
