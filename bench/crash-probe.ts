/**
 * The durability promises of DESIGN.md §10 under SIGKILL, probed at chosen moments (issue 13): a real
 * `qes serve` takes requests from 24 clients that behave as Vector's http sink does (the same body
 * resent on 429, 503 and a broken connection; every other body gzipped), to three sources of which
 * one is new each few requests, half the events with an id and half without, every 17th request
 * refused (400) for an event without a valid time. The server is SIGKILLed after a random number of
 * acknowledged requests; after the restart, every acknowledged event must be there once and no
 * event of a refused request at all, and again once every unanswered request was resent.
 *
 *   node --import tsx bench/crash-probe.ts <duckdb|postgres|clickhouse> <mode> <iterations>
 *
 * Modes: `group` (the kill lands on whatever group commit runs), `widen` and `newsource` (most
 * requests bring new fields or go to new sources: the kill lands in a widening, and on DuckDB in
 * the checkpoint after it), `retention` (a run asked of the server, or on PostgreSQL `qes
 * retention` beside it, is under way at the kill; a quarter of the events are 40 days old and
 * removed by it, so they are only checked for duplicates), `big` (20 KB events: DuckDB's WAL
 * checkpoints by size). QUEUE sets QES_INGEST_QUEUE_EVENTS (300: clients meet 429s).
 * Prints one line per iteration and a FINDING line for anything broken.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { spawnCli } from "../test/e2e/support/run-cli.ts";
import { type QesProcess, startQes } from "../test/http/support/qes-process.ts";

const [backend = "duckdb", mode = "group", itersText = "3"] = process.argv.slice(2);
const ITERS = Number(itersText);
const CLIENTS = 24;
const Q = "probe-query-token-0123456789";
const I = "probe-ingest-token-0123456789";
const NOW = Date.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Req {
  source: string;
  body: Buffer;
  gzip: boolean;
  messages: string[];
  bad: boolean;
  old: boolean;
  status?: number;
}

function storeEnv(iter: number): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), `probe-${backend}-`));
  mkdirSync(join(dir, "endpoints"));
  const common = {
    QES_API_KEYS: Q,
    QES_INGEST_KEYS: I,
    QES_SEED: "false",
    QES_INGEST_QUEUE_EVENTS: process.env.QUEUE ?? "300",
    QES_RETENTION_DAYS: "30",
    QES_ENDPOINTS_DIR: join(dir, "endpoints"),
  };
  if (backend === "duckdb")
    return {
      ...common,
      QES_BACKEND: "duckdb",
      QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
      QES_DUCKDB_THREADS: "1",
    };
  if (backend === "clickhouse")
    return { ...common, QES_BACKEND: "clickhouse", QES_CLICKHOUSE_PATH: join(dir, "chdb") };
  return {
    ...common,
    QES_BACKEND: "postgres",
    QES_POSTGRES_URL: "postgres://postgres@127.0.0.1:5432/test",
    QES_POSTGRES_SCHEMA: `probe_${process.pid}_${iter}`,
    QES_POSTGRES_POOL: "4",
  };
}

let reqCounter = 0;
function makeRequest(iter: number, c: number, r: number): Req {
  const k = reqCounter++;
  const old = mode === "retention" && c % 4 === 0;
  const sources = ["probe.a", "probe.b", `probe.n${iter}x${k % 7}`];
  const source = old ? "probe.old" : sources[(c + r) % sources.length]!;
  const n = 1 + ((c * 7 + r * 13) % 40);
  const bad = k % 17 === 5;
  const ts = old
    ? new Date(NOW - 40 * 86400_000).toISOString()
    : new Date(NOW - (k % 3) * 3600_000).toISOString();
  const messages: string[] = [];
  const events = Array.from({ length: n }, (_, i) => {
    const m = `m-${iter}-${c}-${r}-${i}-${k}`;
    messages.push(m);
    const e: Record<string, unknown> = { timestamp: ts, event_message: m, metadata: { c, r } };
    if (i % 2 === 0) e.id = `id-${m}`;
    if (mode === "widen" || mode === "newsource" || r % 5 === 0) e[`f_${c}_${r % 50}`] = i;
    if (mode === "widen" && i === 0) e.metadata = { c, r, [`deep_${k}`]: { v: k } };
    if (bad && i === n - 1) e.timestamp = "not a time";
    if (mode === "big") e.pad = "x".repeat(20_000);
    return e;
  });
  const text = JSON.stringify(events);
  const gzip = k % 2 === 0;
  return { source, body: gzip ? gzipSync(text) : Buffer.from(text), gzip, messages, bad, old };
}

async function send(url: string, q: Req): Promise<number> {
  const res = await fetch(`${url}/api/logs?source_name=${encodeURIComponent(q.source)}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "x-api-key": I,
      ...(q.gzip ? { "Content-Encoding": "gzip" } : {}),
    },
    body: q.body,
  });
  const text = await res.text();
  if (res.status === 429 && !res.headers.get("retry-after")) console.log("429 WITHOUT Retry-After");
  if (res.status !== 200 && res.status !== 429 && res.status !== 503 && !(q.bad && res.status === 400))
    console.log(`UNEXPECTED ${res.status} ${text.slice(0, 300)}`);
  return res.status;
}

const stats = { acked: 0, r429: 0, r503: 0, refused: 0, resets: 0, unanswered: 0 };

async function runIteration(iter: number): Promise<string[]> {
  const env = storeEnv(iter);
  const findings: string[] = [];
  let server: QesProcess = await startQes(env);
  const all: Req[] = [];
  let killed = false;
  let acks = 0;
  const client = async (c: number) => {
    for (let r = 0; !killed; r++) {
      const q = makeRequest(iter, c, r);
      all.push(q);
      // Vector: retry the same body on 429/503/connection error
      while (!killed) {
        try {
          const s = await send(server.url, q);
          if (s === 429 || s === 503) {
            s === 429 ? stats.r429++ : stats.r503++;
            await sleep(50 + Math.random() * 200);
            continue;
          }
          q.status = s;
          if (s === 200) {
            acks++;
            stats.acked++;
          } else stats.refused++;
          break;
        } catch {
          if (killed) break;
          stats.resets++;
          await sleep(50);
        }
      }
    }
  };
  const running = Array.from({ length: CLIENTS }, (_, c) => client(c));
  // side activity
  let side: Promise<unknown> = Promise.resolve();
  const sideProcs: ReturnType<typeof spawnCli>[] = [];
  let retentionInFlight = false;
  let retentionRuns = 0;
  let retentionMs = 50;
  if (mode === "retention") {
    const store = env.QES_DUCKDB_PATH ?? env.QES_CLICKHOUSE_PATH;
    side = (async () => {
      while (!killed) {
        if (store === undefined) {
          const p = spawnCli(["retention"], { env });
          sideProcs.push(p);
          retentionInFlight = true;
          await new Promise((r) => p.on("exit", r));
          retentionInFlight = false;
          retentionRuns++;
        } else {
          const local = JSON.parse(readFileSync(`${store}.serve.json`, "utf8")) as { token: string };
          const t = Date.now();
          retentionInFlight = true;
          try {
            const res = await fetch(`${server.url}/api/retention`, {
              method: "POST",
              headers: { "x-api-key": local.token },
            });
            await res.text();
            if (res.status !== 200) console.log("retention", res.status);
            retentionRuns++;
            retentionMs = Date.now() - t;
          } catch {}
          retentionInFlight = false;
        }
        await sleep(20);
      }
    })();
  }
  const target = 30 + Math.floor(Math.random() * 150);
  while (acks < target) await sleep(5);
  if (mode === "retention") {
    while (!retentionInFlight) await sleep(1);
    await sleep(Math.random() * (env.QES_BACKEND === "postgres" ? 3000 : retentionMs));
  } else await sleep(Math.random() * 400);
  killed = true;
  await server.stop("SIGKILL");
  for (const p of sideProcs) if (p.exitCode === null) p.kill("SIGKILL");
  await Promise.all(running);
  await side;
  if (mode === "retention")
    console.log(`retention runs before the kill: ${retentionRuns} (last took ${retentionMs} ms)`);
  const acked = all.filter((q) => q.status === 200);
  const unanswered = all.filter((q) => q.status === undefined);
  stats.unanswered += unanswered.length;

  // endpoints per source seen
  const sources = [...new Set(all.map((q) => q.source))];
  const epDir = env.QES_ENDPOINTS_DIR!;
  rmSync(epDir, { recursive: true, force: true });
  mkdirSync(epDir, { recursive: true });
  const ackedSources = new Set(acked.map((q) => q.source));
  sources
    .filter((s) => ackedSources.has(s))
    .forEach((s, i) => {
      writeFileSync(
        join(epDir, `probe.s${i}.sql`),
        `select t.event_message, count(*) as n from \`${s}\` as t group by t.event_message`,
      );
      writeFileSync(
        join(epDir, `probe.s${i}.json`),
        JSON.stringify({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          maxRows: 10_000_000,
          params: {},
        }),
      );
    });
  const t0 = Date.now();
  try {
    server = await startQes({
      ...env,
      ...(mode === "retention" ? { QES_RETENTION_DAYS: "30,probe.old=0" } : {}),
    });
  } catch (e) {
    findings.push(`RESTART FAILED: ${String(e).slice(0, 2000)}`);
    return findings;
  }
  const restartMs = Date.now() - t0;
  const count = async (): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    const list = sources.filter((s) => ackedSources.has(s));
    for (let i = 0; i < list.length; i++) {
      const res = await fetch(`${server.url}/api/endpoints/query/probe.s${i}`, {
        headers: { "x-api-key": Q },
      });
      if (res.status !== 200) {
        findings.push(`query ${list[i]} -> ${res.status} ${(await res.text()).slice(0, 300)}`);
        continue;
      }
      for (const row of ((await res.json()) as { result: { event_message: string; n: number }[] }).result)
        out.set(row.event_message, (out.get(row.event_message) ?? 0) + Number(row.n));
    }
    return out;
  };
  const check = (stored: Map<string, number>, label: string, ackedNow: Req[]) => {
    let missing = 0;
    let twice = 0;
    let fromRefused = 0;
    for (const q of ackedNow) {
      if (q.old) continue;
      for (const m of q.messages) if (!stored.has(m)) missing++;
    }
    for (const n of stored.values()) if (n !== 1) twice++;
    for (const q of all.filter((x) => x.status !== undefined && x.status !== 200))
      for (const m of q.messages) if (stored.has(m)) fromRefused++;
    if (missing || twice || fromRefused)
      findings.push(`${label}: missing=${missing} twice=${twice} fromRefused=${fromRefused}`);
    return { missing, twice, fromRefused };
  };
  const first = check(await count(), "after restart", acked);
  // shippers resend unanswered bodies (same bytes)
  for (const q of unanswered) {
    for (;;) {
      const s = await send(server.url, q).catch(() => -1);
      if (s === 429 || s === 503 || s === -1) {
        await sleep(100);
        continue;
      }
      q.status = s;
      if (s !== 200 && !q.bad) findings.push(`resend got ${s}`);
      break;
    }
  }
  const second = check(
    await count(),
    "after resend",
    all.filter((q) => q.status === 200),
  );
  await server.stop("SIGTERM");
  console.log(
    `iter ${iter}: reqs=${all.length} acked=${acked.length} unanswered=${unanswered.length} restart=${restartMs}ms`,
    JSON.stringify({ first, second }),
  );
  return findings;
}

const findings: string[] = [];
for (let i = 0; i < ITERS; i++) {
  const f = await runIteration(i);
  for (const x of f) console.log(`FINDING iter ${i}: ${x}`);
  findings.push(...f);
}
console.log(backend, mode, JSON.stringify(stats), `findings=${findings.length}`);
process.exit(0);
