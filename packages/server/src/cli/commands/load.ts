import { createReadStream } from "node:fs";
import { basename } from "node:path";
import { createInterface } from "node:readline";
import { isQesError, type LoadSummary } from "@qes/core";
import { openBackend } from "../../backend/open-backend.ts";
import { loadConfig } from "../../config.ts";
import { count, progressPrinter, seconds, UsageError } from "../terminal.ts";

/**
 * `qes load --source <name> <file.ndjson|->…`: loads NDJSON files (`-` = standard input) into a
 * source, one file per all-or-nothing load. A malformed line refuses its whole file, named with
 * its line number; files loaded before it stay loaded.
 */
export async function loadCommand(source: string | undefined, files: string[]): Promise<number> {
  if (source === undefined || source === "") throw new UsageError("load needs --source <name>");
  if (files.length === 0) throw new UsageError("load needs at least one file (or - for standard input)");
  const config = loadConfig();
  const backend = await openBackend(config);
  const summaries: LoadSummary[] = [];
  try {
    for (const file of files) {
      const label = file === "-" ? "standard input" : file;
      const progress = progressPrinter();
      let summary: LoadSummary;
      try {
        summary = await backend.load(source, readLines(file), {
          onProgress: (p) =>
            progress.update(
              `${basename(label)}: ${count(p.events)} events, ${(p.bytes / 1e6).toFixed(1)} MB…`,
            ),
        });
      } catch (e) {
        progress.done();
        if (isQesError(e) && e.code === "invalid_event") {
          const where = e.line === undefined ? label : `${label}:${e.line}`;
          process.stderr.write(`qes load: ${where}: ${e.message}\nNothing from ${label} was stored.\n`);
          if (summaries.length > 0)
            process.stderr.write(`Files loaded before it stay loaded (${summaries.length}).\n`);
          return 1;
        }
        throw e;
      }
      progress.done();
      summaries.push(summary);
      process.stdout.write(
        `${label} → ${summary.source}: ${count(summary.events)} events in ${seconds(summary.seconds)} s ` +
          `(${count(Math.round(summary.eventsPerSecond))} events/s)\n`,
      );
    }
    if (summaries.length > 1) {
      const events = summaries.reduce((n, s) => n + s.events, 0);
      const secs = summaries.reduce((n, s) => n + s.seconds, 0);
      process.stdout.write(
        `total: ${count(events)} events in ${seconds(secs)} s (${count(Math.round(events / Math.max(secs, 1e-9)))} events/s)\n`,
      );
    }
    return 0;
  } finally {
    await backend.close();
  }
}

function readLines(file: string): AsyncIterable<string> {
  const input = file === "-" ? process.stdin : createReadStream(file, { encoding: "utf8" });
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}
