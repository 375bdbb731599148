import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { basename } from "node:path";
import {
  type Backend,
  isQesError,
  type LoadSummary,
  type LogSchema,
  QesError,
  type WideningCheck,
} from "@qes/core";
import { exclusiveStoreOf, openBackend } from "../../backend/open-backend.ts";
import { loadConfig, type QesConfig } from "../../config.ts";
import { loadServedEndpoints } from "../../endpoint-dirs.ts";
import { localIngestFile, readLocalIngestFile, writerIsRunning } from "../../ingest/local-ingest-file.ts";
import { namedRefusal, StoredQueryGuard } from "../../ingest/stored-query-guard.ts";
import { ndjsonLines } from "../ndjson-lines.ts";
import { CliError, count, progressPrinter, seconds, UsageError } from "../terminal.ts";
import { loadThroughServer, type ServerTarget } from "./load-through-server.ts";

/**
 * `qes load --source <name> <file.ndjson|->…`: loads NDJSON files (`-` = standard input) into a
 * source, one file per all-or-nothing load. An event whose id the source stores already, or an
 * earlier line had (an event without `id` has one derived from its content), is not stored again:
 * a load re-run after it failed half-way stores each event once. A malformed line refuses its whole file, named with
 * its line number; files loaded before it stay loaded. So does a line whose widening of the
 * source's schema would stop a stored query from compiling — the endpoints `qes serve` would load
 * (built-ins and QES_ENDPOINTS_DIR) — as the ingest API refuses it.
 */
export async function loadCommand(
  source: string | undefined,
  files: string[],
  opts: { url?: string } = {},
): Promise<number> {
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
  if (opts.url !== undefined) return loadThroughServerCommand(urlTarget(opts.url), source, files);
  // loaded before the store is opened: a definition that does not load stops here, as serve stops
  const endpoints = await loadServedEndpoints(config.endpointDirs);
  let backend: Backend;
  try {
    backend = await openBackend(config);
  } catch (e) {
    // the embedded store is held: by a `qes serve` that said where its ingest API is?
    const target = isQesError(e) && e.code === "store_locked" ? await servingProcess(config) : undefined;
    if (target === undefined) throw e;
    process.stderr.write(
      `A qes server holds ${exclusiveStoreOf(config)}: sending the events to it (${target.url}).\n`,
    );
    return loadThroughServerCommand(target, source, files);
  }
  const summaries: LoadSummary[] = [];
  const guard = new StoredQueryGuard({ definitions: () => endpoints.list(), dialect: backend.dialect });
  try {
    for (const file of files) {
      const label = file === "-" ? "standard input" : file;
      const progress = progressPrinter();
      let summary: LoadSummary;
      try {
        summary = await backend.load(source, ndjsonLines(file), {
          checkWidening: storedQueriesKept(guard, source, await backend.schema()),
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
          `(${count(Math.round(summary.eventsPerSecond))} events/s)${skipped(summary.duplicates)}\n`,
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

/** what the line of a load says of events it left out (stored already, or repeated in the file) */
function skipped(duplicates: number): string {
  return duplicates === 0 ? "" : `; ${count(duplicates)} already stored, not stored again`;
}

/**
 * Refuses a widening that would stop a stored query from compiling that compiles against
 * `stored` (the store's schema when the file's load starts), naming the line, field and query.
 */
function storedQueriesKept(guard: StoredQueryGuard, source: string, stored: LogSchema): WideningCheck {
  return (step) => {
    const refusal = guard.refusal(stored, source, step);
    if (refusal !== undefined)
      throw new QesError("invalid_event", `line ${step.line}: ${namedRefusal(refusal)}`, { line: step.line });
  };
}

/**
 * The `qes serve` that holds the embedded store, from the file it wrote beside it; undefined when
 * there is none. A file whose writer no longer runs (a SIGKILLed server) while another process
 * holds the store is an error: its URL may be any program's now. The target re-reads the file
 * when its server stops answering, so a load follows a server restarted meanwhile (a new port, a
 * new token).
 */
async function servingProcess(config: QesConfig): Promise<ServerTarget | undefined> {
  const store = exclusiveStoreOf(config);
  if (store === undefined) return undefined;
  const file = localIngestFile(store);
  const local = await readLocalIngestFile(file);
  if (local === undefined) return undefined;
  if (!writerIsRunning(local))
    throw new CliError(
      `another process holds ${store}, and ${file} was left by a qes serve (pid ${local.pid}) that no longer ` +
        `runs: nothing is sent to ${local.url}, which may be any program now. Load again once the process ` +
        `holding the store has finished (the file is replaced by the next qes serve, or may be removed)`,
    );
  const reread = async () => {
    const now = await readLocalIngestFile(file);
    return now !== undefined && writerIsRunning(now) ? { url: now.url, token: now.token } : undefined;
  };
  return { url: local.url, token: local.token, reread };
}

/** `--url <server>`: the token comes from QES_INGEST_TOKEN, never from the command line (ps shows it) */
function urlTarget(url: string): ServerTarget {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // refused below
  }
  if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || !/^https?:\/\/[^\s/]+/.test(url))
    throw new UsageError(`--url must be an http(s) URL such as http://127.0.0.1:4000`);
  // refused at once, never echoed: fetch cannot send a URL with credentials, and the load retried
  // that as a server not answering for a minute, then printed the password with the error
  if (parsed.username !== "" || parsed.password !== "")
    throw new UsageError("--url must not hold a user or password: the ingest token goes in QES_INGEST_TOKEN");
  // the ingest path is added to the URL: a query or fragment would end up in front of it
  if (parsed.search !== "" || parsed.hash !== "")
    throw new UsageError(
      "--url is the server's address, without ?query or #fragment (such as http://127.0.0.1:4000)",
    );
  const token = process.env.QES_INGEST_TOKEN?.trim();
  if (!token)
    throw new CliError(
      "--url needs an ingest token in QES_INGEST_TOKEN (one of QES_INGEST_KEYS of that server)",
    );
  // the address alone (a path prefix kept, for a proxy): a bare trailing "?" went in front of the path
  return { url: `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`, token };
}

async function loadThroughServerCommand(
  target: ServerTarget,
  source: string,
  files: string[],
): Promise<number> {
  let total = 0;
  let secs = 0;
  for (const file of files) {
    const label = file === "-" ? "standard input" : file;
    const progress = progressPrinter();
    let summary: { events: number; seconds: number };
    try {
      summary = await loadThroughServer(target, source, file, (n) =>
        progress.update(`${basename(label)}: ${count(n)} events sent…`),
      );
    } catch (e) {
      progress.done();
      if (isQesError(e) && e.code === "invalid_event") {
        const where = e.line === undefined ? label : `${label}:${e.line}`;
        process.stderr.write(
          `qes load: ${where}: ${e.message.replace(/^line \d+: /, "")}\nNothing from ${label} was sent.\n`,
        );
        return 1;
      }
      if (e instanceof CliError) {
        process.stderr.write(`qes load: ${label}: ${e.message}\n`);
        return 1;
      }
      throw e;
    }
    progress.done();
    total += summary.events;
    secs += summary.seconds;
    process.stdout.write(
      `${label} → ${source} (through ${target.url}): ${count(summary.events)} events in ${seconds(summary.seconds)} s ` +
        `(${count(Math.round(summary.events / Math.max(summary.seconds, 1e-9)))} events/s)\n`,
    );
  }
  if (files.length > 1) process.stdout.write(`total: ${count(total)} events in ${seconds(secs)} s\n`);
  return 0;
}
