import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_POSTGRES_URL, type EngineName } from "./bench-backends.ts";
import { BENCH_DIR, BENCH_NOW_ISO } from "./data.ts";
import { httpGet } from "./http-get.ts";
import { type Child, freePort, startChild, waitForHttp } from "./processes.ts";

/**
 * A real `qes serve` child over a store bench-backends loaded, as users run it: its own process,
 * result cache off (every request runs its query), the benchmark clock, no seeding or retention
 * (they would change the store under the measurement).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "packages/server/src/cli/main.ts");
const TOKEN = "bench-endpoints-0123456789abcdef";

export interface QesServer {
  child: Child;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** the server's own log: one JSON line per request with its `ms` (see `serverMs`) */
  logFile: string;
  /** GETs `/api/endpoints/query/<path>`; throws on a non-200 answer */
  get(path: string): Promise<{ ms: number; body: string }>;
  stop(): Promise<void>;
}

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

/** starts the server and waits until /health answers; its output goes to .tmp/bench/<logName>.log */
export async function startQesServer(
  engine: EngineName,
  location: string,
  logName: string,
  extraEnv: Record<string, string> = {},
): Promise<QesServer> {
  const port = await freePort();
  const logFile = join(BENCH_DIR, `${logName}.log`);
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
      // a benchmark measures: at 10M events a PostgreSQL usage query passes the default 30 s
      QES_QUERY_TIMEOUT_MS: "600000",
      ...storeEnv(engine, location),
      ...extraEnv,
    },
    logFile,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/health`, 120_000, child);
  } catch (e) {
    await child.stop();
    throw e;
  }
  return {
    child,
    pid: child.process.pid as number,
    url,
    logFile,
    get: async (path) => {
      const t0 = performance.now();
      const res = await httpGet(`${url}/api/endpoints/query/${path}`, { "X-API-KEY": TOKEN }).catch(
        (e: Error) => {
          // say so when the server is gone: a signal from outside looks like a network error here
          const gone = child.process.signalCode ?? child.process.exitCode;
          throw gone === null ? e : new Error(`${engine} qes serve ended (${gone}) during ${path}`);
        },
      );
      const body = res.body;
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${engine} ${path}: ${res.status} ${body.slice(0, 300)}`);
      return { ms, body };
    },
    stop: () => child.stop(),
  };
}

/**
 * The server's own time per request (its request log's `ms`: from the request's arrival to the
 * response's end), by request URL: the part of the client's time that is not the HTTP round trip
 * and the client's decoding.
 */
export function serverMs(logFile: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { msg?: string; url?: string; ms?: number };
    if (entry.msg !== "request" || entry.url === undefined || entry.ms === undefined) continue;
    const list = out.get(entry.url) ?? [];
    list.push(entry.ms);
    out.set(entry.url, list);
  }
  return out;
}
