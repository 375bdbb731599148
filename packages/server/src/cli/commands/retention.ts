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
  const backend = await openBackend(config);
  try {
    const reports = await backend.applyRetention(config.retention, requestClock(config.testNowMicros)());
    if (reports.length === 0) {
      process.stdout.write("retention: another process is running it now; nothing done here\n");
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
