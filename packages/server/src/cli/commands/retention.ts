import { isQesError, type RetentionReport, retentionDaysOf } from "@qes/core";
import { exclusiveStoreOf, openBackend } from "../../backend/open-backend.ts";
import { requestClock } from "../../clock.ts";
import { loadConfig, type QesConfig } from "../../config.ts";
import { localIngestFile, readLocalIngestFile, writerIsRunning } from "../../ingest/local-ingest-file.ts";
import { RETENTION_EVERY_MS } from "../../retention/retention-runner.ts";
import { unheldRetentionWarnings } from "../../retention/retention-warnings.ts";
import { type BoundedAnswer, postBounded } from "../bounded-post.ts";
import { CliError, count, serverText } from "../terminal.ts";

/**
 * The most of a run's answer read: an entry per source of at most ~260 bytes (names of up to 200
 * characters), so room for 60 times the 1,000 sources QES_INGEST_MAX_SOURCES allows by default.
 */
const ANSWER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * `qes retention`: one retention run (QES_RETENTION_DAYS) and a line per source that lost events,
 * for cron. The server runs the same at start-up and hourly; on PostgreSQL a run already under way
 * in another process makes this one skip (and say so). An embedded store a running `qes serve`
 * holds is only that process's to write: the run is asked of it (`POST /api/retention`, with the
 * token it wrote beside the store) and runs with its QES_RETENTION_DAYS.
 */
export async function retentionCommand(): Promise<number> {
  const config = loadConfig();
  let backend: Awaited<ReturnType<typeof openBackend>>;
  try {
    backend = await openBackend(config);
  } catch (e) {
    if (!isQesError(e) || e.code !== "store_locked") throw e;
    return retentionThroughServer(config);
  }
  try {
    // as `qes serve` warns at start-up: a misspelt override (`30;x=1`, `Postgres.Logs=7`) left its
    // source at the default without a word from the cron line
    for (const warning of unheldRetentionWarnings(await backend.schema(), config.retention))
      process.stderr.write(`warning: ${warning}\n`);
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
    printReports(reports);
    return 0;
  } finally {
    await backend.close();
  }
}

/**
 * The run asked of the `qes serve` that holds the embedded store. Without one that still runs (the
 * store is held by another program, or by a server from before this route), nothing is done and
 * the command succeeds, as a cron line must not fail every hour: the server runs retention itself.
 */
async function retentionThroughServer(config: QesConfig): Promise<number> {
  const store = exclusiveStoreOf(config);
  const local = store === undefined ? undefined : await readLocalIngestFile(localIngestFile(store));
  if (local === undefined || !writerIsRunning(local)) {
    process.stdout.write(
      "retention: another process holds the store and no qes serve of it answers for it; nothing done here " +
        "(a qes serve runs retention itself at start-up and hourly)\n",
    );
    return 0;
  }
  const server = `the qes serve holding ${store} (pid ${local.pid}) at ${local.url}`;
  let answer: BoundedAnswer;
  try {
    answer = await postBounded(
      `${local.url.replace(/\/+$/, "")}/api/retention`,
      { headers: { "X-API-KEY": local.token } },
      { withinMs: RETENTION_EVERY_MS, maxBytes: ANSWER_MAX_BYTES },
    );
  } catch (e) {
    throw new CliError(`${server} did not answer: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (answer.kind === "no_answer")
    throw new CliError(
      `${server} did not answer within ${RETENTION_EVERY_MS / 60_000} min (its run may go on; it runs retention hourly itself)`,
    );
  if (answer.kind === "too_large")
    throw new CliError(
      `${server} answered with more than ${ANSWER_MAX_BYTES} bytes, which no qes run report takes`,
    );
  // a redirect is followed nowhere: the token goes to the server in the file only
  const res = answer.kind === "redirect" ? { status: answer.status, text: "" } : answer;
  if (res.status === 404) {
    process.stdout.write(
      `retention: the qes serve holding ${store} (pid ${local.pid}) cannot run it on request (an older version); ` +
        "it runs retention itself at start-up and hourly; nothing done here\n",
    );
    return 0;
  }
  const body = parsedOrUndefined(res.text) as
    | { sources?: { source: string; removed: number; dropped_partitions?: number }[]; error?: unknown }
    | undefined;
  if (res.status !== 200 || !Array.isArray(body?.sources)) {
    const error = body?.error as string | { message?: string } | undefined;
    const message = typeof error === "string" ? error : error?.message;
    const why = typeof message === "string" ? serverText(message) : "no error message";
    throw new CliError(
      `the qes serve holding ${store} (pid ${local.pid}) refused the retention run: ${res.status} ${why}`,
    );
  }
  process.stdout.write(
    `retention: run by the qes serve holding ${store} (pid ${local.pid}), with its QES_RETENTION_DAYS\n`,
  );
  printReports(
    body.sources.map((s) => ({
      source: s.source,
      deletedEvents: s.removed,
      ...(s.dropped_partitions !== undefined ? { droppedPartitions: s.dropped_partitions } : {}),
    })),
  );
  return 0;
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function printReports(reports: readonly RetentionReport[]): void {
  let total = 0;
  let left = 0;
  for (const r of reports) {
    total += r.deletedEvents;
    left += r.leftPartitions ?? 0;
    if (r.deletedEvents === 0 && !r.droppedPartitions && !r.leftPartitions) continue;
    const partitions = r.droppedPartitions ? ` (${r.droppedPartitions} daily partition(s) dropped)` : "";
    const busy = r.leftPartitions ? `; ${r.leftPartitions} daily partition(s) left: the table was busy` : "";
    process.stdout.write(
      `${r.source.padEnd(24)} ${count(r.deletedEvents).padStart(10)} events removed${partitions}${busy}\n`,
    );
  }
  process.stdout.write(`retention: ${count(total)} events older than their source's retention removed\n`);
  // a zero exit still: the next run (hourly in the server, or cron's next line) drops them
  if (left > 0)
    process.stdout.write(
      `retention: ${count(left)} old daily partition(s) left for the next run: a query or a load held their table ` +
        "longer than a drop waits\n",
    );
}
