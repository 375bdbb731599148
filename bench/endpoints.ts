/**
 * Both built-in endpoints end to end over real HTTP, uncached, on every backend side by side: a
 * real `qes serve` child per engine over the same seeded edge events (the stores bench/executor.ts
 * loads and keeps under .tmp/bench, reused), requests alternated round by round, medians; the
 * server's peak RSS over the run.
 *
 *   node --import tsx bench/endpoints.ts [--edge 1000000] [--engines duckdb,postgres,clickhouse] [--runs 15]
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { SEED_PROJECTS } from "@qes/server";
import { BENCH_POSTGRES_URL, type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_DIR, BENCH_NOW_ISO, EDGE, ensureEventsFile } from "./lib/data.ts";
import { freePort, sampleRss, startChild, waitForHttp } from "./lib/processes.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { count, median } from "./lib/stats.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "packages/server/src/cli/main.ts");
const TOKEN = "bench-endpoints-0123456789abcdef";
const PROJECT = SEED_PROJECTS[0];

/** the requests timed, by name */
const REQUESTS: [string, string][] = [
  ["logs.all (newest 100 of one project)", `logs.all?project=${PROJECT}`],
  ["usage.api-counts, hourly", `usage.api-counts?interval=hourly&project=${PROJECT}`],
  ["usage.api-counts, daily", `usage.api-counts?interval=daily&project=${PROJECT}`],
  ["usage.api-counts, minutely", `usage.api-counts?interval=minutely&project=${PROJECT}`],
];

/** how `qes serve` finds the store bench-backends loaded, per engine */
function storeEnv(engine: EngineName, location: string): Record<string, string> {
  switch (engine) {
    case "duckdb":
      return { QES_BACKEND: "duckdb", QES_DUCKDB_PATH: location };
    case "postgres":
      return { QES_BACKEND: "postgres", QES_POSTGRES_URL: BENCH_POSTGRES_URL, QES_POSTGRES_SCHEMA: location };
    case "clickhouse":
      return { QES_BACKEND: "clickhouse", QES_CLICKHOUSE_PATH: location };
  }
}

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
    const port = await freePort();
    const child = startChild(
      process.execPath,
      ["--import", "tsx", CLI, "serve"],
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "test",
        QES_TEST_NOW: BENCH_NOW_ISO,
        PORT: String(port),
        QES_API_KEYS: TOKEN,
        QES_SEED: "false",
        // uncached: every request runs its query
        QES_CACHE_MAX_ENTRIES: "0",
        QES_RETENTION_DAYS: "0",
        ...storeEnv(engine, location),
      },
      join(BENCH_DIR, `endpoints-${engine}.log`),
    );
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${url}/health`, 120_000, child);
      const rss = sampleRss(child.process.pid as number, 50);
      const get = async (path: string): Promise<number> => {
        const t0 = performance.now();
        const res = await fetch(`${url}/api/endpoints/query/${path}`, { headers: { "X-API-KEY": TOKEN } });
        const body = await res.text();
        const elapsed = performance.now() - t0;
        if (res.status !== 200) throw new Error(`${engine} ${path}: ${res.status} ${body.slice(0, 300)}`);
        return elapsed;
      };
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
      await child.stop();
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
