import {
  type EndpointDefinition,
  type LogSchema,
  queryWindow,
  type RetentionPolicy,
  retentionDaysOf,
} from "@qes/core";

const MICROS_PER_DAY = 86_400_000_000n;

/**
 * Warnings for stored queries that read further back than a source they read keeps events
 * (`usage.api-counts` daily reads 7 days; `QES_RETENTION_DAYS=…,cloudflare.logs.prod=3` would
 * leave most of its chart empty). Retention keeps today and `days` whole days before it, so a
 * window up to `days` days is covered.
 */
export function shortRetentionWarnings(
  endpoints: readonly EndpointDefinition[],
  schema: LogSchema,
  policy: RetentionPolicy,
): string[] {
  const warnings: string[] = [];
  for (const endpoint of endpoints) {
    let window: ReturnType<typeof queryWindow>;
    try {
      window = queryWindow(endpoint.sql);
    } catch {
      continue; // start-up's check reports a definition that does not parse
    }
    if (window.longestIntervalMicros === 0n) continue;
    for (const source of window.tables) {
      if (schema.sources[source] === undefined) continue;
      const days = retentionDaysOf(policy, source);
      if (days === 0 || window.longestIntervalMicros <= BigInt(days) * MICROS_PER_DAY) continue;
      const reads = Number((window.longestIntervalMicros * 10n) / MICROS_PER_DAY) / 10;
      warnings.push(
        `endpoint ${endpoint.name} reads up to ${reads} days of ${source}, which keeps ${days} days ` +
          `(QES_RETENTION_DAYS): older events will be missing from its answers`,
      );
    }
  }
  return warnings;
}

/**
 * Warnings for per-source overrides of `QES_RETENTION_DAYS` naming a source the store does not
 * hold: the override may wait for ingest to create it, but a misspelt one (`Postgres.Logs=7`;
 * source names are case-sensitive) silently left that source at the default, its disk growing
 * for the default's days instead.
 */
export function unheldRetentionWarnings(schema: LogSchema, policy: RetentionPolicy): string[] {
  return Object.keys(policy.perSource)
    .filter((source) => !Object.hasOwn(schema.sources, source))
    .map(
      (source) =>
        `QES_RETENTION_DAYS names ${source}, which the store does not hold: its ${retentionDaysOf(policy, source)} days ` +
        `apply once events create it (source names are case-sensitive; the default ${policy.defaultDays} applies to every other source)`,
    );
}
