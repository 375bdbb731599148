/**
 * Both built-in endpoints end to end over real HTTP, uncached, on every backend side by side: a
 * real `qes serve` child per engine over the same seeded edge events (the stores bench/executor.ts
 * loads and keeps under .tmp/bench, reused), requests alternated round by round, medians; the
 * server's peak RSS over the run.
 *
 *   node --import tsx bench/endpoints.ts [--edge 1000000] [--engines duckdb,postgres,clickhouse] [--runs 15]
 */
import { parseArgs } from "node:util";
import { SEED_PROJECTS } from "@qes/server";
import { type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { EDGE, ensureEventsFile } from "./lib/data.ts";
import { sampleRss } from "./lib/processes.ts";
import { startQesServer } from "./lib/qes-serve.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { count, median } from "./lib/stats.ts";

const PROJECT = SEED_PROJECTS[0];

/** the requests timed, by name */
const REQUESTS: [string, string][] = [
  ["logs.all (newest 100 of one project)", `logs.all?project=${PROJECT}`],
  ["usage.api-counts, hourly", `usage.api-counts?interval=hourly&project=${PROJECT}`],
  ["usage.api-counts, daily", `usage.api-counts?interval=daily&project=${PROJECT}`],
  ["usage.api-counts, minutely", `usage.api-counts?interval=minutely&project=${PROJECT}`],
];

export async function runEndpointsBenchmark(opts: {
  edgeEvents: number;
  engines: EngineName[];
  runs: number;
  log?: (msg: string) => void;
}): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const rows: string[][] = [];
  for (const engine of opts.engines) {
    const loaded = await openLoadedBackend(engine, { [EDGE]: file }, { onProgress: log });
    const location = loaded.location;
    await loaded.close();
    const server = await startQesServer(engine, location, `endpoints-${engine}`);
    try {
      const rss = sampleRss(server.pid, 50);
      const get = async (path: string): Promise<number> => (await server.get(path)).ms;
      for (const [, path] of REQUESTS) for (let i = 0; i < 2; i++) await get(path);
      const times = new Map<string, number[]>(REQUESTS.map(([name]) => [name, []]));
      log(`${engine}: ${opts.runs} rounds of ${REQUESTS.length} requests`);
      for (let round = 0; round < opts.runs; round++) {
        for (const [name, path] of REQUESTS) times.get(name)?.push(await get(path));
      }
      const peak = rss.stop();
      for (const [name] of REQUESTS) {
        rows.push([
          engine,
          name,
          `${median(times.get(name) ?? []).toFixed(1)} ms`,
          `${Math.round(peak / 2 ** 20)} MB`,
        ]);
      }
    } finally {
      await server.stop();
    }
  }
  return {
    title: `Both endpoints over HTTP, uncached, on every backend (${count(opts.edgeEvents)} edge events)`,
    intro:
      `A real \`qes serve\` per engine (result cache off: QES_CACHE_MAX_ENTRIES=0) over the store bench/executor.ts ` +
      `loads; ${opts.runs} rounds of the requests below after 2 unmeasured ones each, medians of the time to the last ` +
      `byte at the client; peak RSS of the server over the rounds. Project \`${PROJECT}\` (half of all events).`,
    header: ["engine", "request", "median", "server peak RSS"],
    rows,
    notes: [],
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "1000000" },
      engines: { type: "string", default: "duckdb,postgres,clickhouse" },
      runs: { type: "string", default: "15" },
    },
  });
  const section = await runEndpointsBenchmark({
    edgeEvents: Number(values.edge),
    engines: values.engines!.split(",") as EngineName[],
    runs: Number(values.runs),
    log: (m) => process.stderr.write(`${m}\n`),
  });
  printSection(section);
}
