import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { BUILTIN_SOURCES } from "@qes/core";
import { eventsPerSource, generateEvents, type SeedSource } from "@qes/server";

/**
 * The benchmark data: deterministic NDJSON files per source from the seed generator
 * (@qes/server's `generateEvents`), written once under .tmp/bench/ and reused. The same seed,
 * count and clock give byte-identical files on every machine.
 */

/** the benchmark clock: events lie before it, windows are measured from it */
export const BENCH_NOW_MICROS = 1_736_931_600_000_000n; // 2025-01-15T09:00:00Z
export const BENCH_NOW_ISO = "2025-01-15T09:00:00Z";
export const BENCH_SEED = 42;
export const EDGE: SeedSource = "cloudflare.logs.prod";
export const BENCH_DIR = ".tmp/bench";

/** path of one source's events file (shared with bench/postgres-load.ts for the edge source) */
export function eventsPath(source: SeedSource, count: number, seed = BENCH_SEED): string {
  const name = source === EDGE ? "edge" : source.replace(/[^A-Za-z0-9]+/g, "-");
  return join(BENCH_DIR, `${name}-${count}-seed${seed}.ndjson`);
}

/** writes the file when missing (atomically, so an interrupted run never leaves half a file) */
export async function ensureEventsFile(
  source: SeedSource,
  count: number,
  seed = BENCH_SEED,
): Promise<string> {
  const path = eventsPath(source, count, seed);
  if (existsSync(path)) return path;
  mkdirSync(BENCH_DIR, { recursive: true });
  const partial = `${path}.partial-${process.pid}`;
  const out = createWriteStream(partial);
  let buffer = "";
  for (const line of generateEvents(source, count, seed, BENCH_NOW_MICROS)) {
    buffer += `${line}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((r) => out.once("drain", () => r()));
      buffer = "";
    }
  }
  await new Promise<void>((r) => out.end(buffer, () => r()));
  renameSync(partial, path);
  return path;
}

/**
 * Files for all nine sources: `edgeEvents` edge events and the other sources in the seed's
 * proportions (SOURCE_SHARES), so a total of edge / 0.55 events.
 */
export async function ensureAllSources(
  edgeEvents: number,
  seed = BENCH_SEED,
): Promise<Record<SeedSource, string>> {
  const total = Math.round(edgeEvents / 0.55);
  const counts = eventsPerSource(total);
  counts[EDGE] = edgeEvents;
  const out = {} as Record<SeedSource, string>;
  for (const source of BUILTIN_SOURCES) out[source] = await ensureEventsFile(source, counts[source], seed);
  return out;
}

/** the lines of an events file, streamed */
export function readLines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
}
