import { constants, createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { basename } from "node:path";
import { createInterface } from "node:readline";
import { isQesError, type LoadSummary } from "@qes/core";
import { openBackend } from "../../backend/open-backend.ts";
import { loadConfig } from "../../config.ts";
import { CliError, count, progressPrinter, seconds, UsageError } from "../terminal.ts";

/**
 * `qes load --source <name> <file.ndjson|->…`: loads NDJSON files (`-` = standard input) into a
 * source, one file per all-or-nothing load. A malformed line refuses its whole file, named with
 * its line number; files loaded before it stay loaded.
 */
export async function loadCommand(source: string | undefined, files: string[]): Promise<number> {
  if (source === undefined || source === "") throw new UsageError("load needs --source <name>");
  if (files.length === 0) throw new UsageError("load needs at least one file (or - for standard input)");
  for (const file of files) {
    if (file === "-") continue;
    try {
      await access(file, constants.R_OK);
    } catch {
      throw new CliError(`cannot read ${file}`);
    }
  }
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
          const message = e.message.replace(/^line \d+: /, "");
          process.stderr.write(`qes load: ${where}: ${message}\nNothing from ${label} was stored.\n`);
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

/**
 * Lines of a file, read only once the backend starts iterating: a readline interface created
 * earlier would emit lines (and close) before anyone listens, and the load would wait forever.
 */
async function* readLines(file: string): AsyncGenerator<string> {
  const input = file === "-" ? process.stdin : createReadStream(file, { encoding: "utf8" });
  yield* createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}
