import { isQesError, retentionDaysOf } from "@qes/core";
import { openBackend } from "../../backend/open-backend.ts";
import { requestClock } from "../../clock.ts";
import { loadConfig } from "../../config.ts";
import { count } from "../terminal.ts";

/**
 * `qes retention`: one retention run (QES_RETENTION_DAYS) and a line per source that lost events,
 * for cron. The server runs the same at start-up and hourly; on PostgreSQL a run already under way
 * in another process makes this one skip (and say so).
 */
export async function retentionCommand(): Promise<number> {
  const config = loadConfig();
  let backend: Awaited<ReturnType<typeof openBackend>>;
  try {
    backend = await openBackend(config);
  } catch (e) {
    // an embedded store a running server holds: that server runs retention itself, so a cron
    // line written for the README's "qes retention" must not fail every hour
    if (!isQesError(e) || e.code !== "store_locked") throw e;
    process.stdout.write(
      "retention: a running qes serve holds the store and runs retention itself (at start-up and hourly, " +
        "with its own QES_RETENTION_DAYS); nothing done here\n",
    );
    return 0;
  }
  try {
    const reports = await backend.applyRetention(config.retention, requestClock(config.testNowMicros)());
    if (reports.length === 0) {
      // backends report only the sources retention applies to: none of them is no other process
      const limited = Object.keys((await backend.schema()).sources).some(
        (source) => retentionDaysOf(config.retention, source) !== 0,
      );
      process.stdout.write(
        limited
          ? "retention: another process is running it now; nothing done here\n"
          : "retention: every source keeps its events forever (QES_RETENTION_DAYS 0); nothing to remove\n",
      );
      return 0;
    }
    let total = 0;
    for (const r of reports) {
      total += r.deletedEvents;
      if (r.deletedEvents === 0 && !r.droppedPartitions) continue;
      const partitions = r.droppedPartitions ? ` (${r.droppedPartitions} daily partition(s) dropped)` : "";
      process.stdout.write(
        `${r.source.padEnd(24)} ${count(r.deletedEvents).padStart(10)} events removed${partitions}\n`,
      );
    }
    process.stdout.write(`retention: ${count(total)} events older than their source's retention removed\n`);
    return 0;
  } finally {
    await backend.close();
  }
}
