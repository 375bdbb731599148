import type { Backend, RetentionPolicy, RetentionReport } from "@qes/core";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import { PeriodicRun } from "../periodic-run.ts";

/** how often retention runs after the start-up run */
export const RETENTION_EVERY_MS = 3_600_000;

/** a run's reports, or why it failed (logged already) */
type RunOutcome = { reports: RetentionReport[] } | { failed: unknown };

function reportsOf(outcome: RunOutcome): RetentionReport[] {
  return "reports" in outcome ? outcome.reports : [];
}

/**
 * Runs retention (DESIGN.md §10) at start-up and then hourly. Across instances on PostgreSQL the
 * backend makes a run happen once at a time (advisory lock); a run that finds nothing old drops
 * nothing, so instances repeating it cost catalogue reads only. A failed run is logged and
 * retried at the next hour; it never stops the service.
 */
export class RetentionRunner {
  readonly #periodic = new PeriodicRun(RETENTION_EVERY_MS, () => this.#runOnce());

  constructor(
    private readonly opts: {
      backend: Backend;
      policy: RetentionPolicy;
      clock: Clock;
      logger: Logger;
      /** after a run that removed events (per-source metrics read the sources again) */
      removed?: () => void;
    },
  ) {}

  /** The first run now (the returned promise settles when it ends), then one every hour. */
  async start(): Promise<RetentionReport[]> {
    return reportsOf(await this.#periodic.start());
  }

  /** One run; a run already under way is joined, not repeated. Never rejects. */
  async run(): Promise<RetentionReport[]> {
    return reportsOf(await this.#periodic.run());
  }

  /**
   * One run for a caller that must tell a failure from a run that found nothing to remove (`qes
   * retention` through this server): as `run`, but rejects with the run's error.
   */
  async runOrThrow(): Promise<RetentionReport[]> {
    const outcome = await this.#periodic.run();
    if ("failed" in outcome) throw outcome.failed;
    return outcome.reports;
  }

  close(): Promise<void> {
    return this.#periodic.close();
  }

  async #runOnce(): Promise<RunOutcome> {
    const { backend, policy, clock, logger } = this.opts;
    const started = performance.now();
    try {
      const reports = await backend.applyRetention(policy, clock());
      const removed = reports.filter((r) => r.deletedEvents > 0 || (r.droppedPartitions ?? 0) > 0);
      if (removed.length > 0) this.opts.removed?.();
      const left = reports.filter((r) => (r.leftPartitions ?? 0) > 0);
      logger[left.length > 0 ? "warn" : "info"](
        {
          seconds: Math.round(performance.now() - started) / 1000,
          removed: removed.map((r) => ({
            source: r.source,
            events: r.deletedEvents,
            ...(r.droppedPartitions !== undefined ? { partitions: r.droppedPartitions } : {}),
          })),
          // old days whose table a query or load held past the drop's wait: the next run tries them
          ...(left.length > 0
            ? { left: left.map((r) => ({ source: r.source, partitions: r.leftPartitions })) }
            : {}),
        },
        "retention run",
      );
      return { reports };
    } catch (e) {
      logger.error({ err: e }, "retention run failed; the next run tries again");
      return { failed: e };
    }
  }
}
