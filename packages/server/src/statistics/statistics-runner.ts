import type { Backend, StatisticsReport } from "@qes/core";
import type { Logger } from "pino";
import { PeriodicRun } from "../periodic-run.ts";

/** autovacuum's own default naptime: how soon a default PostgreSQL would analyze a changed table */
export const STATISTICS_EVERY_MS = 60_000;

/**
 * Keeps the planner's statistics current where the engine does not (`Backend.refreshStatistics`:
 * PostgreSQL with autovacuum off), at start-up and then every minute, so that what loads and
 * ingest store is analyzed as a default server would analyze it, off their path. A backend
 * without the method has nothing to run. A failed pass is logged and the next one tries again.
 */
export class StatisticsRunner {
  readonly #periodic: PeriodicRun<StatisticsReport> | undefined;

  constructor(private readonly opts: { backend: Backend; logger: Logger }) {
    if (opts.backend.refreshStatistics)
      this.#periodic = new PeriodicRun(STATISTICS_EVERY_MS, () => this.#runOnce());
  }

  /** The first pass now (settles when it ends), then one every minute. */
  start(): Promise<StatisticsReport> {
    return this.#periodic?.start() ?? Promise.resolve({ analyzed: [] });
  }

  /** One pass; a pass under way is joined. Never rejects. */
  run(): Promise<StatisticsReport> {
    return this.#periodic?.run() ?? Promise.resolve({ analyzed: [] });
  }

  async close(): Promise<void> {
    await this.#periodic?.close();
  }

  async #runOnce(): Promise<StatisticsReport> {
    const { backend, logger } = this.opts;
    const started = performance.now();
    try {
      const report = await backend.refreshStatistics!();
      if (report.analyzed.length > 0)
        logger.info(
          { seconds: Math.round(performance.now() - started) / 1000, analyzed: report.analyzed },
          "statistics refreshed",
        );
      return report;
    } catch (e) {
      logger.error({ err: e }, "statistics refresh failed; the next pass tries again");
      return { analyzed: [] };
    }
  }
}
