/**
 * HTTP benchmark: cache hits of qes (a real `qes serve` process) as throughput and latency against
 * a bare node:http process sending the same bytes, with the in-process cache and with Redis; the
 * uncached path of logs.all for reference; peak RSS of the server under each load.
 *
 *   node --import tsx bench/http.ts [--edge 200000] [--seconds 5] [--repeats 3] [--connections 50]
 *
 * logs.all gets caching from a benchmark endpoint directory (written at run time from the built-in files: the same SQL and id,
 * cacheTtlSeconds 900). The load generator is wrk when installed, else a bounded Node generator
 * (lib/load-generator.ts); everything stays on 127.0.0.1.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { SEED_PROJECTS } from "@qes/server";
import { openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_DIR, BENCH_NOW_ISO, EDGE, ensureEventsFile } from "./lib/data.ts";
import { type LoadResult, loadTool, runLoad } from "./lib/load-generator.ts";
import {
  type Child,
  cpuSeconds,
  freePort,
  rssBytes,
  sampleRss,
  startChild,
  waitForHttp,
} from "./lib/processes.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { median } from "./lib/stats.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "packages/server/src/cli/main.ts");
const BARE = join(ROOT, "bench/lib/bare-server.ts");
const BUILTIN_ENDPOINTS = join(ROOT, "packages/server/endpoints");

/**
 * An endpoint directory holding logs.all with result caching switched on: the built-in SQL and
 * settings, only `cacheTtlSeconds` changed, so the benchmark cannot drift from the product.
 */
function cachedLogsAllDir(): string {
  const dir = join(BENCH_DIR, "endpoints-cached-logs-all");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(BUILTIN_ENDPOINTS, "logs.all.sql"), join(dir, "logs.all.sql"));
  const settings = JSON.parse(readFileSync(join(BUILTIN_ENDPOINTS, "logs.all.json"), "utf8"));
  writeFileSync(join(dir, "logs.all.json"), JSON.stringify({ ...settings, cacheTtlSeconds: 900 }, null, 2));
  return dir;
}
const TOKEN = "bench-token-0123456789abcdef";
const WARMUP_SECONDS = 2;
const PROJECT = SEED_PROJECTS[0];

export interface HttpOptions {
  edgeEvents: number;
  seconds: number;
  repeats: number;
  connections: number;
  log?: (msg: string) => void;
}

interface Target {
  label: string;
  path: string;
  /** a cache hit is expected (X-Cache: HIT after the first request) */
  cached: boolean;
}

const TARGETS = {
  usage: {
    label: "usage.api-counts (hourly)",
    path: `/api/endpoints/query/usage.api-counts?interval=hourly&project=${PROJECT}`,
    cached: true,
  },
  logsCached: {
    label: "logs.all, 100 rows (caching switched on by bench)",
    path: `/api/endpoints/query/logs.all?project=${PROJECT}`,
    cached: true,
  },
  logsUncached: {
    label: "logs.all, 100 rows, uncached (built-in settings)",
    path: `/api/endpoints/query/logs.all?project=${PROJECT}`,
    cached: false,
  },
} satisfies Record<string, Target>;

interface ServerConfig {
  name: string;
  env: Record<string, string>;
  targets: Target[];
}

async function startQes(
  duckdbPath: string,
  extraEnv: Record<string, string>,
  logName: string,
): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "test",
    QES_TEST_NOW: BENCH_NOW_ISO,
    PORT: String(port),
    QES_BACKEND: "duckdb",
    QES_DUCKDB_PATH: duckdbPath,
    QES_API_KEYS: TOKEN,
    QES_SEED: "false",
    ...extraEnv,
  };
  const child = startChild(
    process.execPath,
    ["--import", "tsx", CLI, "serve"],
    env,
    join(BENCH_DIR, `${logName}.log`),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, 60_000, child);
  return { child, url };
}

/** headers Node writes itself on every response, qes's and the bare server's alike */
const NODE_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

async function startBare(body: Buffer, headers: Headers): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const file = join(BENCH_DIR, `bare-body-${port}.json`);
  writeFileSync(file, body);
  const headersFile = join(BENCH_DIR, `bare-headers-${port}.json`);
  writeFileSync(headersFile, JSON.stringify([...headers].filter(([name]) => !NODE_HEADERS.has(name))));
  const child = startChild(
    process.execPath,
    ["--import", "tsx", BARE],
    { PATH: process.env.PATH, BODY_FILE: file, HEADERS_FILE: headersFile, PORT: String(port) },
    join(BENCH_DIR, "bare-server.log"),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, 30_000, child);
  return { child, url };
}

async function startRedis(): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = startChild(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { PATH: process.env.PATH },
    join(BENCH_DIR, "redis.log"),
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.output().includes("Ready to accept connections")) break;
    if (Date.now() > deadline) throw new Error(`redis-server did not start:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: `redis://127.0.0.1:${port}` };
}

const fmtRps = (x: number) => `${Math.round(x).toLocaleString("en-US")}/s`;
const fmtMs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : "n/a");
const mb = (x: number) => `${(x / 1024 / 1024).toFixed(0)} MB`;

export async function runHttpBenchmark(opts: HttpOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  mkdirSync(BENCH_DIR, { recursive: true });
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const store = await openLoadedBackend("duckdb", { [EDGE]: file }, { onProgress: log });
  const duckdbPath = store.location;
  await store.close();

  const redis = await startRedis().catch((e: Error) => {
    log(`redis-server not available: ${e.message}`);
    return undefined;
  });
  const BENCH_ENDPOINTS = cachedLogsAllDir();
  const configs: ServerConfig[] = [
    {
      name: "in-process cache",
      env: { QES_ENDPOINTS_DIR: BENCH_ENDPOINTS },
      targets: [TARGETS.usage, TARGETS.logsCached],
    },
    ...(redis
      ? [
          {
            name: "Redis cache",
            env: {
              QES_ENDPOINTS_DIR: BENCH_ENDPOINTS,
              QES_REDIS_URL: redis.url,
              QES_REDIS_PREFIX: `qesbench${process.pid}:`,
            },
            targets: [TARGETS.usage, TARGETS.logsCached],
          },
        ]
      : []),
    { name: "no cache (built-in logs.all)", env: {}, targets: [TARGETS.logsUncached] },
  ];
  const rows: string[][] = [];
  const notes: string[] = [];
  const misses: string[] = [];
  try {
    for (const config of configs) {
      const qes = await startQes(duckdbPath, config.env, `qes-${config.name.replace(/\W+/g, "-")}`);
      const idleRss = rssBytes(qes.child.process.pid!);
      try {
        for (const target of config.targets) {
          const url = `${qes.url}${target.path}`;
          const headers = { "X-API-KEY": TOKEN };
          // the first request fills the cache; the second must be a hit
          let res = await fetch(url, { headers });
          let body = Buffer.from(await res.arrayBuffer());
          res = await fetch(url, { headers });
          body = Buffer.from(await res.arrayBuffer());
          if (res.status !== 200)
            throw new Error(`${target.label}: ${res.status} ${body.toString().slice(0, 300)}`);
          // after the query that filled the cache: the backend's own memory (DuckDB's buffers) is in
          const filledRss = rssBytes(qes.child.process.pid!);
          const xcache = res.headers.get("x-cache");
          if (target.cached && xcache !== "HIT")
            notes.push(`${config.name} / ${target.label}: X-Cache was ${xcache}, not HIT.`);
          const bare = await startBare(body, res.headers);
          try {
            const q: LoadResult[] = [];
            const b: LoadResult[] = [];
            let peak = 0;
            const qCpu: number[] = [];
            const bCpu: number[] = [];
            /** server CPU µs per answered request during one load */
            const measured = async (pid: number, u: string, into: LoadResult[], cpu: number[]) => {
              const before = cpuSeconds(pid);
              const result = await runLoad(spec(u));
              cpu.push(((cpuSeconds(pid) - before) * 1e6) / Math.max(1, result.requests));
              into.push(result);
            };
            const spec = (u: string) => ({
              url: u,
              headers,
              connections: opts.connections,
              seconds: opts.seconds,
              maxRequests: 2_000_000,
            });
            // unmeasured: both processes reach steady state (JIT, socket buffers) before the rounds
            await runLoad({ ...spec(url), seconds: WARMUP_SECONDS });
            await runLoad({ ...spec(bare.url), seconds: WARMUP_SECONDS });
            for (let i = 0; i < opts.repeats; i++) {
              log(`${config.name}: ${target.label}, round ${i + 1}`);
              const sampler = sampleRss(qes.child.process.pid!);
              await measured(qes.child.process.pid!, url, q, qCpu);
              peak = Math.max(peak, sampler.stop());
              await measured(bare.child.process.pid!, bare.url, b, bCpu);
            }
            const qRps = median(q.map((r) => r.requestsPerSecond));
            const bRps = median(b.map((r) => r.requestsPerSecond));
            const errors = q.reduce((a, r) => a + r.errors, 0) + b.reduce((a, r) => a + r.errors, 0);
            // each round's qes load and bare load run back to back: the median of the rounds' ratios
            // cancels the machine's drift between rounds, which a ratio of medians does not
            const r = median(q.map((x, i) => x.requestsPerSecond / b[i]!.requestsPerSecond));
            const target08 = target.cached && config.name === "in-process cache";
            rows.push([
              config.name,
              target.label,
              `${(body.length / 1024).toFixed(1)} KB`,
              `${xcache ?? "—"}`,
              fmtRps(qRps),
              fmtRps(bRps),
              `${r.toFixed(2)}×`,
              `${Math.round(median(qCpu))} µs / ${Math.round(median(bCpu))} µs (${(median(qCpu) / median(bCpu)).toFixed(2)}×)`,
              `${fmtMs(median(q.map((x) => x.p50Ms)))} / ${fmtMs(median(q.map((x) => x.p99Ms)))}`,
              `${fmtMs(median(b.map((x) => x.p50Ms)))} / ${fmtMs(median(b.map((x) => x.p99Ms)))}`,
              `${mb(idleRss)} → ${mb(filledRss)} → ${mb(peak)}`,
              target08 ? (r >= 0.8 ? "≥ 0.8 ✓" : "**miss**") : "—",
            ]);
            if (errors > 0)
              notes.push(
                `${config.name} / ${target.label}: ${errors} errors or non-200 answers during the load.`,
              );
            if (target08 && r < 0.8) misses.push(`${target.label}: ${r.toFixed(2)}×`);
          } finally {
            await bare.child.stop();
          }
        }
      } finally {
        await qes.child.stop();
      }
    }
  } finally {
    await redis?.child.stop();
  }
  if (misses.length > 0)
    notes.push(`Under the 0.8× target with the in-process cache: ${misses.join("; ")} (analysis below).`);
  if (!redis) notes.push("Redis rows are missing: `redis-server` could not be started on this machine.");
  return {
    title: "HTTP: cache hits against a bare node:http server",
    intro:
      `A real \`qes serve\` process (DuckDB, ${opts.edgeEvents.toLocaleString("en-US")} edge events, request logging at its default ` +
      "level into a file) and a bare `node:http` process that answers with the same bytes (the body and the headers qes sent for the request: X-Request-Id, X-Cache, Age, Content-Type), loaded " +
      `alternately by ${loadTool() === "wrk" ? "`wrk` (1 thread)" : "the Node load generator (bench/lib/load-generator.ts)"} ` +
      `over ${opts.connections} keep-alive connections for ${opts.seconds} s, ${opts.repeats} rounds each after ${WARMUP_SECONDS} s of unmeasured warm-up; medians, ` +
      "and the ratio is the median of each round's qes/bare ratio (the two loads of a round run back to back). " +
      "Both processes share the machine's 2 cores with the load generator (and with whatever else runs), so the " +
      "throughput ratio moves with the machine's load; the server CPU time per answered request (from /proc) does not, " +
      "and is the figure to compare across runs. RSS of the qes process: at start → after the first (uncached) answer → peak under load.",
    header: [
      "cache",
      "request",
      "body",
      "X-Cache",
      "qes",
      "bare",
      "ratio",
      "CPU per request qes / bare",
      "qes p50 / p99",
      "bare p50 / p99",
      "qes RSS: start → filled → peak",
      "target",
    ],
    rows,
    notes,
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "200000" },
      seconds: { type: "string", default: "5" },
      repeats: { type: "string", default: "3" },
      connections: { type: "string", default: "50" },
    },
  });
  const section = await runHttpBenchmark({
    edgeEvents: Number(values.edge),
    seconds: Number(values.seconds),
    repeats: Number(values.repeats),
    connections: Number(values.connections),
    log: (m) => console.error(m),
  });
  printSection(section);
}
