/**
 * Server memory while a shipper ingests (issue 13: "server memory stays bounded while ingesting:
 * report RSS"). A real `qes serve` on a fresh store takes `--events` seeded edge events over
 * HTTP, as bench/ingest.ts sends them (JSON-array bodies of `--batch`, `--concurrency` in flight,
 * a 429 retried), and the server's RSS is printed every `--every` events, now and at its peak so
 * far: memory that grew with what was stored would show as a climb that never levels off.
 *
 *   node --import tsx bench/ingest-memory.ts [--events 1000000] [--engine duckdb] [--env QES_DUCKDB_MEMORY_LIMIT=256MB]
 *
 * The baseline is the server's own RSS after its first batches: what matters is whether it keeps
 * growing, not its size against another program.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { dropPostgresStorage } from "@qes/backend-postgres";
import { BENCH_POSTGRES_URL } from "./lib/bench-backends.ts";
import { EDGE, ensureEventsFile, readLines } from "./lib/data.ts";
import { httpPost } from "./lib/http-get.ts";
import { rssBytes } from "./lib/processes.ts";
import { startQesServer } from "./lib/qes-serve.ts";

const args = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    batch: { type: "string", default: "5000" },
    concurrency: { type: "string", default: "4" },
    every: { type: "string", default: "100000" },
    engine: { type: "string", default: "duckdb" },
    /** extra server environment, `NAME=value`, repeatable */
    env: { type: "string", multiple: true, default: [] },
  },
}).values;
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const CONCURRENCY = Number(args.concurrency);
const EVERY = Number(args.every);
const engine = args.engine as "duckdb" | "postgres" | "clickhouse";
const TOKEN = "bench-ingest-token-0123456789abcdef";
const extraEnv = Object.fromEntries(
  args.env.map((kv) => {
    const at = kv.indexOf("=");
    return [kv.slice(0, at), kv.slice(at + 1)];
  }),
);

const file = await ensureEventsFile(EDGE, EVENTS);
const dir = mkdtempSync(join(tmpdir(), "qes-bench-memory-"));
const location =
  engine === "duckdb"
    ? join(dir, "qes.duckdb")
    : engine === "clickhouse"
      ? join(dir, "qes.chdb")
      : `qes_bench_memory_${process.pid}`;
const server = await startQesServer(engine, location, `ingest-memory-${engine}`, {
  QES_INGEST_KEYS: TOKEN,
  QES_SEED: "false",
  ...extraEnv,
});
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
console.log(
  `# bench/ingest-memory: ${EVENTS} edge events into ${engine} over HTTP ${JSON.stringify(extraEnv)}`,
);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log("| events | seconds | RSS now MB | peak RSS so far MB |\n|---|---|---|---|");
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, rssBytes(server.pid));
}, 50);
try {
  const post = async (body: Buffer) => {
    for (;;) {
      const res = await httpPost(`${server.url}/api/logs?source_name=${encodeURIComponent(EDGE)}`, body, {
        "x-api-key": TOKEN,
        "content-type": "application/json",
      });
      if (res.status === 200) return;
      if (res.status !== 429) throw new Error(`${res.status} ${res.body.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, Number(res.retryAfter ?? "1") * 1000));
    }
  };
  const inflight = new Set<Promise<void>>();
  const started = performance.now();
  let lines: string[] = [];
  let sent = 0;
  const send = async () => {
    const body = Buffer.from(`[${lines.join(",")}]`);
    sent += lines.length;
    lines = [];
    const p: Promise<void> = post(body).then(() => {
      inflight.delete(p);
    });
    inflight.add(p);
    if (inflight.size >= CONCURRENCY) await Promise.race(inflight);
    if (sent % EVERY === 0 || sent === EVENTS) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`| ${sent} | ${seconds} | ${mb(rssBytes(server.pid))} | ${mb(peak)} |`);
    }
  };
  for await (const line of readLines(file)) {
    lines.push(line);
    if (lines.length >= BATCH) await send();
  }
  if (lines.length > 0) await send();
  await Promise.all(inflight);
  console.log(
    `peak RSS ${mb(peak)} MB; load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  clearInterval(sampler);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  if (engine === "postgres") await dropPostgresStorage(BENCH_POSTGRES_URL, location);
}
