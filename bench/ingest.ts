/**
 * Ingest benchmark (issue 13): the same seeded edge events stored four ways per backend, in one
 * run, on fresh stores:
 *  - plain: the engine's own bulk path with no qes work. DuckDB: `CREATE TABLE … AS SELECT * FROM
 *    read_json_auto(file)`. PostgreSQL: `COPY` into the reference layout `(id, timestamp,
 *    event_message, body jsonb)` (the COPY text is prepared before the clock starts). ClickHouse:
 *    `INSERT … FORMAT JSONEachRow` of the file's lines into a MergeTree `ORDER BY (project,
 *    timestamp)` with `metadata` as the JSON type (the lines are split into bodies beforehand);
 *  - `qes load`: `backend.load` of the file's lines (what the command runs);
 *  - ingest: the file parsed into events by core (`parseJsonText`, `logEventFromJson`), then
 *    `backend.ingest` in batches of `--batch` events (what the HTTP route hands the backend);
 * with each rate as a ratio of plain, the process's peak RSS during each, and the CPU seconds of
 * this process during each (DuckDB's threads included), and on PostgreSQL those of the server's
 * backends serving the path (found by `application_name`; when the server runs on this machine).
 *
 *   node --import tsx bench/ingest.ts [--events 200000] [--batch 5000] [--engines duckdb,postgres,clickhouse]
 *     [--paths load,ingest,http]
 *
 * ClickHouse runs embedded (chDB: one data directory per process, so plain and qes share it in
 * databases of their own); its HTTP ingest row posts to a `qes serve` child with a data directory
 * of its own, as the other engines' rows do.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import { createClickhouseBackend } from "@qes/backend-clickhouse";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import { type Backend, type LogEvent, logEventFromJson, parseJsonText } from "@qes/core";
import pg from "pg";
import { openChdbEngine } from "../packages/backend-clickhouse/src/clickhouse-connection.ts";
import { BENCH_POSTGRES_URL } from "./lib/bench-backends.ts";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile, readLines } from "./lib/data.ts";
import { httpGet, httpPost } from "./lib/http-get.ts";
import { copyRows, duckdbPlainTable, PLAIN_REF_COLUMNS, plainCopyRow } from "./lib/plain-peers.ts";
import { cpuSeconds as processCpuSeconds, samplePostgresBackendCpu, sampleRss } from "./lib/processes.ts";
import { startQesServer } from "./lib/qes-serve.ts";
import { percentile } from "./lib/stats.ts";

/** the one chDB data directory of this process (plain and qes in databases of their own) */
const CHDB_DIR = mkdtempSync(join(tmpdir(), "qes-bench-chdb-"));
process.once("exit", () => rmSync(CHDB_DIR, { recursive: true, force: true }));
let chdbDatabases = 0;

const args = parseArgs({
  options: {
    events: { type: "string", default: "200000" },
    batch: { type: "string", default: "5000" },
    engines: { type: "string", default: "duckdb,postgres" },
    /** concurrent HTTP ingest requests (a shipper's in-flight batches) */
    concurrency: { type: "string", default: "4" },
    /** the measured paths besides plain: load, ingest (Backend.ingest), http */
    paths: { type: "string", default: "load,ingest,http" },
  },
}).values;
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const CONCURRENCY = Number(args.concurrency);
const PATHS = new Set(String(args.paths).split(","));
const INGEST_TOKEN = "bench-ingest-token-0123456789abcdef";

/**
 * CPU seconds of this process (every thread: DuckDB's work too) since `from`. On a machine that
 * other work keeps busy, wall-clock rates swing with the load; CPU time per path does less so.
 * PostgreSQL's own CPU is not in it.
 */
function cpuSeconds(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
}

/** a PostgreSQL URL whose connections carry `application_name` = `app` */
function postgresUrlFor(app: string): string {
  const url = new URL(BENCH_POSTGRES_URL);
  url.searchParams.set("application_name", app);
  return url.toString();
}

/** a fresh `application_name` for one measured path */
let apps = 0;
function benchApp(): string {
  return `qes_bench_${process.pid}_${apps++}`;
}

/**
 * runs `fn` and samples RSS every 50 ms: seconds, CPU seconds, the peak RSS in MB and, given the
 * `application_name` of its PostgreSQL connections, the CPU seconds of their backends
 */
async function measure(
  fn: () => Promise<unknown>,
  app?: string,
): Promise<{ seconds: number; cpu: number; rssMb: number; pgCpu: number }> {
  const pgCpu = app === undefined ? undefined : samplePostgresBackendCpu(BENCH_POSTGRES_URL, app);
  let peak = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  const t = performance.now();
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  const seconds = (performance.now() - t) / 1000;
  const used = cpuSeconds(cpu);
  return {
    seconds,
    cpu: used,
    rssMb: Math.round(peak / 2 ** 20),
    pgCpu: pgCpu === undefined ? Number.NaN : await pgCpu.stop(),
  };
}

/** seconds and CPU seconds of the engine's own bulk path (and of PostgreSQL's backend) */
interface Plain {
  seconds: number;
  cpu: number;
  pgCpu?: number;
}

async function duckdbPlain(file: string): Promise<Plain> {
  const dir = mkdtempSync(join(tmpdir(), "qes-bench-plain-"));
  const instance = await DuckDBInstance.create(join(dir, "plain.duckdb"), { threads: "2" });
  const conn = await instance.connect();
  try {
    const t = performance.now();
    const cpu = process.cpuUsage();
    await duckdbPlainTable(conn, "t", file);
    return { seconds: (performance.now() - t) / 1000, cpu: cpuSeconds(cpu) };
  } finally {
    conn.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresPlain(file: string): Promise<Plain> {
  // the COPY text is prepared before the clock starts: the rate is the engine's, not JSON.parse's
  const rows: string[] = [];
  for await (const line of readLines(file)) rows.push(plainCopyRow(line));
  const app = benchApp();
  const client = new pg.Client({ connectionString: postgresUrlFor(app) });
  await client.connect();
  try {
    await client.query("drop table if exists qes_bench_plain_ref");
    await client.query(`create table qes_bench_plain_ref ${PLAIN_REF_COLUMNS}`);
    const m = await measure(() => copyRows(client, "qes_bench_plain_ref", rows), app);
    return { seconds: m.seconds, cpu: m.cpu, pgCpu: m.pgCpu };
  } finally {
    await client.query("drop table if exists qes_bench_plain_ref");
    await client.end();
  }
}

/** lines per INSERT body of the plain ClickHouse path */
const CLICKHOUSE_INSERT_LINES = 10_000;

async function clickhousePlain(file: string): Promise<Plain> {
  const bodies: string[] = [];
  let lines: string[] = [];
  for await (const line of readLines(file)) {
    lines.push(line);
    if (lines.length >= CLICKHOUSE_INSERT_LINES) {
      bodies.push(lines.join("\n"));
      lines = [];
    }
  }
  if (lines.length > 0) bodies.push(lines.join("\n"));
  const engine = await openChdbEngine(CHDB_DIR, `plain_${chdbDatabases++}`);
  try {
    await engine.owner.use((c) =>
      c.command({
        query: `CREATE TABLE plain (id String, timestamp DateTime64(6, 'UTC'), event_message String,
          project Nullable(String), metadata JSON) ENGINE = MergeTree ORDER BY (project, timestamp)
          SETTINGS allow_nullable_key = 1`,
      }),
    );
    const t = performance.now();
    const cpu = process.cpuUsage();
    for (const body of bodies) {
      await engine.owner.use((c) =>
        c.command({
          query: `INSERT INTO plain SETTINGS date_time_input_format = 'best_effort', input_format_skip_unknown_fields = 1 FORMAT JSONEachRow\n${body}`,
        }),
      );
    }
    return { seconds: (performance.now() - t) / 1000, cpu: cpuSeconds(cpu) };
  } finally {
    await engine.close();
  }
}

async function freshBackend(
  engine: string,
  app: string,
): Promise<{ backend: Backend; dispose(): Promise<void> }> {
  if (engine === "clickhouse") {
    const backend = createClickhouseBackend({ path: CHDB_DIR, database: `qes_${chdbDatabases++}` });
    await backend.init();
    return { backend, dispose: () => backend.close() };
  }
  if (engine === "duckdb") {
    const dir = mkdtempSync(join(tmpdir(), "qes-bench-ingest-"));
    const backend = createDuckdbBackend({ path: join(dir, "qes.duckdb") });
    await backend.init();
    return {
      backend,
      async dispose() {
        await backend.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `qes_bench_ingest_${process.pid}_${Date.now().toString(36)}`;
  const backend = createPostgresBackend({ url: postgresUrlFor(app), schema, pool: 2 });
  await backend.init();
  return {
    backend,
    async dispose() {
      await backend.close();
      await dropPostgresStorage(BENCH_POSTGRES_URL, schema);
    },
  };
}

async function ingestFile(backend: Backend, file: string): Promise<void> {
  let batch: LogEvent[] = [];
  let index = 0;
  for await (const line of readLines(file)) {
    batch.push(logEventFromJson(parseJsonText(line), EDGE, BENCH_NOW_MICROS, `event ${index++}`));
    if (batch.length >= BATCH) {
      await backend.ingest([{ source: EDGE, events: batch }]);
      batch = [];
    }
  }
  if (batch.length > 0) await backend.ingest([{ source: EDGE, events: batch }]);
}

/**
 * `POST /api/logs` to a real `qes serve` over a fresh store, as a shipper sends: JSON-array bodies
 * of BATCH events, CONCURRENCY in flight, a 429 retried after its Retry-After. The bodies are
 * built from the file's lines before the clock starts (as plain's COPY text is). Rates are the
 * server's; its peak RSS and CPU seconds are the server process's.
 */
async function httpIngest(
  engine: string,
  file: string,
): Promise<{
  seconds: number;
  cpu: number;
  clientCpu: number;
  rssMb: number;
  retries: number;
  pgCpu: number;
  /** how long the server took to answer `GET /health`, asked every 20 ms while it ingested */
  healthMs: number[];
}> {
  // UTF-8 bytes, as a shipper holds a batch it sends: encoding 8 MB strings per request was the
  // client's work on the server's two cores, not the server's
  const bodies: Buffer[] = [];
  let lines: string[] = [];
  for await (const line of readLines(file)) {
    lines.push(line);
    if (lines.length >= BATCH) {
      bodies.push(Buffer.from(`[${lines.join(",")}]`));
      lines = [];
    }
  }
  if (lines.length > 0) bodies.push(Buffer.from(`[${lines.join(",")}]`));
  const dir = mkdtempSync(join(tmpdir(), "qes-bench-http-ingest-"));
  const schema = `qes_bench_http_${process.pid}_${Date.now().toString(36)}`;
  const location =
    engine === "duckdb" ? join(dir, "qes.duckdb") : engine === "clickhouse" ? join(dir, "qes.chdb") : schema;
  const app = benchApp();
  const server = await startQesServer(
    engine as "duckdb" | "postgres" | "clickhouse",
    location,
    `ingest-http-${engine}`,
    {
      QES_INGEST_KEYS: INGEST_TOKEN,
      ...(engine === "postgres" ? { QES_POSTGRES_URL: postgresUrlFor(app) } : {}),
    },
  );
  let retries = 0;
  try {
    const url = server.url;
    const rss = sampleRss(server.pid, 50);
    const pgCpu = engine === "postgres" ? samplePostgresBackendCpu(BENCH_POSTGRES_URL, app) : undefined;
    const cpu0 = processCpuSeconds(server.pid);
    const client0 = process.cpuUsage();
    const t = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        for (;;) {
          const res = await httpPost(`${url}/api/logs?source_name=${encodeURIComponent(EDGE)}`, body, {
            "x-api-key": INGEST_TOKEN,
            "content-type": "application/json",
          });
          if (res.status === 200) break;
          if (res.status !== 429)
            throw new Error(`${engine} ingest: ${res.status} ${res.body.slice(0, 300)}`);
          retries++;
          await new Promise((r) => setTimeout(r, Number(res.retryAfter ?? "1") * 1000));
        }
      }
    };
    // what a query waits for while the server ingests: its main thread's stalls
    const healthMs: number[] = [];
    let ingesting = true;
    const probe = (async () => {
      while (ingesting) {
        const asked = performance.now();
        await httpGet(`${url}/health`, {});
        healthMs.push(performance.now() - asked);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - t) / 1000;
    ingesting = false;
    await probe;
    return {
      seconds,
      cpu: processCpuSeconds(server.pid) - cpu0,
      clientCpu: cpuSeconds(client0),
      rssMb: Math.round(rss.stop() / 2 ** 20),
      retries,
      pgCpu: pgCpu === undefined ? Number.NaN : await pgCpu.stop(),
      healthMs,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    if (engine === "postgres") await dropPostgresStorage(BENCH_POSTGRES_URL, schema);
  }
}

const file = await ensureEventsFile(EDGE, EVENTS);
console.log(`# bench/ingest: ${EVENTS} edge events, ingest batches of ${BATCH}`);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(
  "| backend | path | events/s | × plain | peak RSS MB | CPU s | plain's CPU ÷ this CPU | PostgreSQL CPU s |",
);
console.log("|---|---|---|---|---|---|---|---|");
/** PostgreSQL's CPU seconds as a cell: – on other engines or when the server is elsewhere */
const pgCell = (cpu: number | undefined) => (cpu === undefined || Number.isNaN(cpu) ? "–" : cpu.toFixed(2));
const stalls: string[] = [];
for (const engine of String(args.engines).split(",")) {
  const plain =
    engine === "duckdb"
      ? await duckdbPlain(file)
      : engine === "clickhouse"
        ? await clickhousePlain(file)
        : await postgresPlain(file);
  const plainRate = EVENTS / plain.seconds;
  console.log(
    `| ${engine} | plain | ${Math.round(plainRate)} | 1.00 | – | ${plain.cpu.toFixed(2)} | 1.00 | ${pgCell(plain.pgCpu)} |`,
  );
  for (const [path, run] of [
    ["qes load", (b: Backend) => b.load(EDGE, readLines(file))],
    ["Backend.ingest", (b: Backend) => ingestFile(b, file)],
  ] as const) {
    if (!PATHS.has(path === "qes load" ? "load" : "ingest")) continue;
    const app = benchApp();
    const { backend, dispose } = await freshBackend(engine, app);
    try {
      const m = await measure(() => run(backend), engine === "postgres" ? app : undefined);
      const rate = EVENTS / m.seconds;
      console.log(
        `| ${engine} | ${path} | ${Math.round(rate)} | ${(rate / plainRate).toFixed(2)} | ${m.rssMb} | ` +
          `${m.cpu.toFixed(2)} | ${(plain.cpu / m.cpu).toFixed(2)} | ${pgCell(m.pgCpu)} |`,
      );
    } finally {
      await dispose();
    }
  }
  if (!PATHS.has("http")) continue;
  const h = await httpIngest(engine, file);
  const httpRate = EVENTS / h.seconds;
  console.log(
    `| ${engine} | HTTP ingest (${CONCURRENCY} in flight${h.retries ? `, ${h.retries} retried 429s` : ""}) | ` +
      `${Math.round(httpRate)} | ${(httpRate / plainRate).toFixed(2)} | ${h.rssMb} (server) | ` +
      `${h.cpu.toFixed(2)} (server; client ${h.clientCpu.toFixed(2)}) | ${(plain.cpu / h.cpu).toFixed(2)} | ${pgCell(h.pgCpu)} |`,
  );
  stalls.push(
    `${engine}: GET /health while ingesting over HTTP, ${h.healthMs.length} asks: ` +
      `p50 ${percentile(h.healthMs, 0.5).toFixed(1)} ms, p99 ${percentile(h.healthMs, 0.99).toFixed(1)} ms, ` +
      `max ${Math.max(...h.healthMs).toFixed(1)} ms`,
  );
}
for (const line of stalls) console.log(line);
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
