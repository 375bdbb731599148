/**
 * Follows the edge logs of a project, like `tail -f`: prints the newest lines, then every new one
 * as it arrives, oldest first. Run it against the demo server, which adds events every 3 seconds:
 *
 *   npx -y pnpm@10 qes serve --demo                   # one terminal
 *   npx -y pnpm@10 example log-tail [--project <ref>] [--lines 10] [--every 2000]   # another
 *
 * Each poll asks `logs.all` for the rows after the newest one printed, walking back page by page
 * (`iterateLogs`) when more than a page arrived in between, so a busy project loses no line. The
 * start bound is exclusive, so a poll starts 1 µs before the newest printed row and drops the ids
 * already printed there: rows written later into that same microsecond are not lost either.
 * Ctrl-C stops it.
 */
import { createClient, type LogRow, microsToIso, QesApiError } from "@qes/sdk";
import { connection, flag } from "./connection.ts";
import { describeError } from "./usage-chart.ts";

export function formatLine(row: LogRow): string {
  return `${microsToIso(row.timestamp)}  ${row.event_message}`;
}

export async function main(argv: string[]): Promise<number> {
  const conn = connection();
  const project = flag(argv, "project", conn.project);
  const lines = Math.max(0, Number(flag(argv, "lines", "10")) || 0);
  const every = Math.max(100, Number(flag(argv, "every", "2000")) || 2000);
  const qes = createClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, timeoutMs: 15_000 });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  /** the newest microsecond printed and the ids printed in it */
  let newest: number | undefined;
  let printedAtNewest = new Set<string>();
  const print = (rowsNewestFirst: LogRow[]) => {
    for (const row of [...rowsNewestFirst].reverse()) {
      console.log(formatLine(row));
      if (newest === undefined || row.timestamp > newest) {
        newest = row.timestamp;
        printedAtNewest = new Set();
      }
      if (row.timestamp === newest) printedAtNewest.add(row.id);
    }
  };

  try {
    const { rows } = await qes.logsAll({ project }, { signal: stop.signal });
    console.error(`Following the edge logs of ${project} at ${conn.baseUrl} (Ctrl-C stops)…`);
    print(rows.slice(0, lines));
    if (newest === undefined && rows[0]) {
      newest = rows[0].timestamp; // --lines 0: start after the newest row without printing it
      printedAtNewest = new Set(rows.filter((r) => r.timestamp === newest).map((r) => r.id));
    }
    while (!stop.signal.aborted) {
      await sleep(every, stop.signal);
      if (stop.signal.aborted) break;
      try {
        const fresh: LogRow[] = [];
        const since = newest === undefined ? undefined : microsToIso(newest - 1);
        for await (const row of qes.iterateLogs(
          { project, isoTimestampStart: since },
          { signal: stop.signal },
        )) {
          if (row.timestamp === newest && printedAtNewest.has(row.id)) continue;
          fresh.push(row);
        }
        print(fresh);
      } catch (e) {
        if (stop.signal.aborted) break;
        // keep following through a restart or an outage of the server
        console.error(describeError(e, conn.baseUrl));
        if (e instanceof QesApiError && !e.retryable) return 1;
      }
    }
    return 0;
  } catch (e) {
    if (stop.signal.aborted) return 0;
    console.error(describeError(e, conn.baseUrl));
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
