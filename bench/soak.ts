/**
 * Soak under attack (issue 12): a real `qes serve` child process over real HTTP, 100 concurrent
 * clients for 60 s, well-behaved callers (cache hits, uncached stored queries, consumer SQL) mixed
 * with attackers holding one valid token (hostile SQL, NUL bytes, expensive cross joins, requests
 * abandoned mid-flight). During the run the private Redis is killed and restored once and (on
 * PostgreSQL) the private cluster is restarted once (DESIGN.md §9: never the shared servers).
 * The same well-behaved clients run first alone (the unloaded baseline of the same run).
 *
 *   node --import tsx bench/soak.ts --backend duckdb|postgres|clickhouse [--seconds 60] [--clients 100] [--pg-no-parallel]
 *     [--pause 50-150]   each well-behaved client's pause between requests (ms, uniform)
 *     [--client http|fetch]   the clients' HTTP (fetch costs 2.5× the client CPU per request)
 *     [--engine-cpus 1]   (PostgreSQL pinned to these CPUs, this process and the server to the
 *                          others: the database on a machine of its own, as deployed)
 *     [--server-cpu-prof <dir>]   (a V8 CPU profile of the server process, written when it stops)
 *
 * Reports requests served, p50/p99 of the well-behaved requests under attack against the same
 * run unloaded, counts per status and class, 503s inside/outside the outage windows, RSS over time.
 * Not part of the test command.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import pg from "pg";
import {
  createPrivateCluster,
  type PrivateCluster,
} from "../packages/backend-postgres/test/private-cluster.ts";
import { PrivateRedis } from "../test/http/support/private-redis.ts";
import { httpGet } from "./lib/http-get.ts";
import {
  cpuSeconds,
  freePort,
  machineCpuSeconds,
  rssBytes,
  startChild,
  waitForHttp,
} from "./lib/processes.ts";

const { values: args } = parseArgs({
  options: {
    backend: { type: "string", default: "duckdb" },
    seconds: { type: "string", default: "60" },
    clients: { type: "string", default: "100" },
    baseline: { type: "string", default: "20" },
    // the private cluster without parallel query: an attacker's statement then takes one core
    "pg-no-parallel": { type: "boolean", default: false },
    "engine-cpus": { type: "string" },
    // the clients' HTTP: node:http keep-alive (cheap) or fetch (what runs before 2026-11-26 used)
    client: { type: "string", default: "http" },
    "server-cpu-prof": { type: "string" },
    // each well-behaved client's pause between requests, ms, drawn uniformly from [a, b]
    pause: { type: "string", default: "50-150" },
  },
});
const BACKEND = args.backend as "duckdb" | "postgres" | "clickhouse";
if (!["duckdb", "postgres", "clickhouse"].includes(BACKEND))
  throw new Error(`--backend ${BACKEND}: duckdb, postgres or clickhouse`);
const SECONDS = Number(args.seconds);
const CLIENTS = Number(args.clients);
const BASELINE_SECONDS = Number(args.baseline);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);
if (args.client !== "http" && args.client !== "fetch")
  throw new Error(`--client ${args.client}: http or fetch`);
const [PAUSE_FROM, PAUSE_TO] = (args.pause as string).split("-").map(Number) as [number, number];
if (!(PAUSE_FROM >= 0 && PAUSE_TO >= PAUSE_FROM)) throw new Error(`--pause ${args.pause}: from-to in ms`);
const log = (m: string) => process.stderr.write(`[soak ${BACKEND}] ${m}\n`);

/** well-behaved callers: each a token of its own; attackers share one token (they hold one) */
const GOOD_CLIENTS = Math.round(CLIENTS * 0.6);
const ATTACK_CLIENTS = CLIENTS - GOOD_CLIENTS;
const goodToken = (i: number) => `soak-good-${String(i).padStart(3, "0")}-0123456789`;
const ATTACK_TOKEN = "soak-attacker-0123456789abcdef";
const PROJECTS = ["kzbtwfqmxrhyglnpvcas", "pjoqvnwtdhsmylkxefra", "wmcrxagtbzjdnpleuhsq"];

type Kind = "hit" | "stored" | "consumer" | "hostile" | "nul" | "heavy" | "abandoned";
interface Sample {
  kind: Kind;
  good: boolean;
  status: number | "abandoned" | "error";
  ms: number;
  atMs: number;
  /** a 5xx's error message */
  error?: string;
}

const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)] as T;
const q = (endpoint: string, params: Record<string, string>) =>
  `/api/endpoints/query/${endpoint}?${new URLSearchParams(params).toString()}`;

function goodRequest(): { kind: Kind; path: string } {
  const r = Math.random();
  const project = pick(PROJECTS);
  if (r < 0.5) return { kind: "hit", path: q("usage.api-counts", { interval: "hourly", project }) };
  if (r < 0.8) {
    const start = new Date(Date.now() - (1 + Math.floor(Math.random() * 3600)) * 1000).toISOString();
    return { kind: "stored", path: q("logs.all", { project, iso_timestamp_start: start }) };
  }
  return {
    kind: "consumer",
    path: q("logs.all", {
      project,
      sql: `select id, timestamp, event_message from edge_logs where event_message like '%${pick(["GET", "POST", "200", "404"])}%' order by timestamp desc limit 20`,
    }),
  };
}

const HOSTILE = [
  "select * from pg_catalog.pg_tables",
  "select * from read_csv('/etc/passwd')",
  "select 1; drop table x",
  "select pg_sleep(100) as x from edge_logs",
  "with recursive r as (select 1 as n union all select n + 1 from r) select * from r",
];
const HEAVY = (i: number) =>
  `select count(*) as n from edge_logs a, edge_logs b, edge_logs c where length(a.id) + length(b.id) + length(c.id) > ${i}`;

function attackRequest(): { kind: Kind; path: string; abandonAfterMs?: number } {
  const r = Math.random();
  const project = pick(PROJECTS);
  if (r < 0.3) return { kind: "hostile", path: q("logs.all", { project, sql: pick(HOSTILE) }) };
  if (r < 0.4)
    return { kind: "nul", path: q("logs.all", { project, sql: "select 'a\0' as x from edge_logs" }) };
  const heavy = q("logs.all", { project, sql: HEAVY(Math.floor(Math.random() * 1e9)) });
  if (r < 0.6) return { kind: "heavy", path: heavy };
  return { kind: "abandoned", path: heavy, abandonAfterMs: 500 };
}

/** the clients' GET (`--client`) */
async function clientGet(url: string, headers: Record<string, string>, signal: AbortSignal) {
  if (args.client === "http") return httpGet(url, headers, signal);
  const res = await fetch(url, { headers, signal });
  return { status: res.status, body: await res.text() };
}

async function send(
  base: string,
  token: string,
  req: { kind: Kind; path: string; abandonAfterMs?: number },
  good: boolean,
  t0: number,
): Promise<Sample> {
  const started = performance.now();
  const signal = AbortSignal.timeout(req.abandonAfterMs ?? 30_000);
  let status: Sample["status"];
  let error: string | undefined;
  try {
    const res = await clientGet(`${base}${req.path}`, { "X-API-KEY": token }, signal);
    status = res.status;
    if (status >= 500) error = res.body.slice(0, 200);
  } catch {
    status = signal.aborted && req.abandonAfterMs !== undefined ? "abandoned" : "error";
  }
  const sample: Sample = {
    kind: req.kind,
    good,
    status,
    ms: performance.now() - started,
    atMs: started - t0,
  };
  return error === undefined ? sample : { ...sample, error };
}

async function drive(
  base: string,
  seconds: number,
  good: number,
  attackers: number,
  t0: number,
): Promise<Sample[]> {
  const out: Sample[] = [];
  const until = performance.now() + seconds * 1000;
  const loop = async (i: number, isGood: boolean) => {
    while (performance.now() < until) {
      const req = isGood ? goodRequest() : attackRequest();
      out.push(await send(base, isGood ? goodToken(i) : ATTACK_TOKEN, req, isGood, t0));
      // dashboards pause between requests; attackers do not
      if (isGood)
        await new Promise((r) => setTimeout(r, PAUSE_FROM + Math.random() * (PAUSE_TO - PAUSE_FROM)));
    }
  };
  await Promise.all([
    ...Array.from({ length: good }, (_, i) => loop(i, true)),
    ...Array.from({ length: attackers }, (_, i) => loop(i, false)),
  ]);
  return out;
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] as number;
}

function counts(samples: Sample[]): Record<string, number> {
  const c: Record<string, number> = {};
  for (const s of samples) c[String(s.status)] = (c[String(s.status)] ?? 0) + 1;
  return c;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "qes-soak-"));
  const redis = await PrivateRedis.start();
  let cluster: PrivateCluster | undefined;
  const engineCpus = args["engine-cpus"];
  if (engineCpus !== undefined) {
    if (BACKEND !== "postgres") throw new Error("--engine-cpus needs --backend postgres");
    // this process (the clients) and the server it starts inherit the other CPUs
    const own = new Set(engineCpus.split(",").map(Number));
    const others = cpus()
      .map((_, i) => i)
      .filter((i) => !own.has(i));
    if (others.length === 0) throw new Error(`--engine-cpus ${engineCpus} leaves no CPU for the server`);
    await run("taskset", ["-a", "-p", "-c", others.join(","), String(process.pid)]);
    log(`PostgreSQL on CPU ${engineCpus}; clients and server on CPU ${others.join(",")}`);
  }
  if (BACKEND === "postgres") {
    cluster = await createPrivateCluster(
      {
        max_connections: "100",
        ...(args["pg-no-parallel"] ? { max_parallel_workers_per_gather: "0" } : {}),
      },
      { cpus: engineCpus },
    );
    await cluster.start();
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: "production",
    PORT: String(port),
    QES_HOST: "127.0.0.1",
    QES_BACKEND: BACKEND,
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    // chDB in the server's process, its data in this run's directory
    QES_CLICKHOUSE_PATH: join(dir, "chdb"),
    ...(cluster ? { QES_POSTGRES_URL: cluster.url } : {}),
    QES_REDIS_URL: redis.url,
    QES_API_KEYS: [ATTACK_TOKEN, ...Array.from({ length: GOOD_CLIENTS }, (_, i) => goodToken(i))].join(","),
    QES_QUERY_TIMEOUT_MS: "5000",
    QES_METRICS_TOKEN: "soak-metrics-0123456789",
    LOG_LEVEL: "warn",
  };
  const server = startChild(
    "node",
    [
      ...(args["server-cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${args["server-cpu-prof"]}`] : []),
      "--import",
      "tsx",
      "packages/server/src/cli/main.ts",
      "serve",
    ],
    env,
    join(dir, "server.log"),
  );
  process.chdir(ROOT);
  const rss: { atS: number; mb: number }[] = [];
  const events: { atS: number; what: string }[] = [];
  try {
    await waitForHttp(`${base}/ready`, 180_000, server);
    const pid = server.process.pid as number;
    log(`serving on ${base} (pid ${pid}); warming the hit keys`);
    for (const project of PROJECTS) {
      await httpGet(`${base}${q("usage.api-counts", { interval: "hourly", project })}`, {
        "X-API-KEY": goodToken(0),
      });
    }
    const loadStart = loadavg();

    log(`unloaded: ${GOOD_CLIENTS} well-behaved clients for ${BASELINE_SECONDS} s`);
    // where the machine's CPU goes in each phase: the server, this process (the clients) and the
    // rest (PostgreSQL, on an otherwise idle machine)
    const cpuNow = () => ({
      machine: machineCpuSeconds(),
      server: cpuSeconds(pid),
      clients: process.cpuUsage(),
    });
    const cpuSince = (c: ReturnType<typeof cpuNow>, seconds: number) => {
      const clientsUs = process.cpuUsage(c.clients);
      const server = cpuSeconds(pid) - c.server;
      const clients = (clientsUs.user + clientsUs.system) / 1e6;
      const machine = machineCpuSeconds() - c.machine;
      const cores = (x: number) => `${(x / seconds).toFixed(2)} cores`;
      return {
        machine: cores(machine),
        server: cores(server),
        clients: cores(clients),
        rest: cores(machine - server - clients),
      };
    };
    const t0 = performance.now();
    const cpu0 = cpuNow();
    const baseline = await drive(base, BASELINE_SECONDS, GOOD_CLIENTS, 0, t0);
    const cpuUnloaded = cpuSince(cpu0, BASELINE_SECONDS);
    const cpu1 = cpuNow();

    log(`under attack: ${GOOD_CLIENTS} well-behaved + ${ATTACK_CLIENTS} attackers for ${SECONDS} s`);
    const t1 = performance.now();
    const at = (s: number) => t1 + s * 1000;
    const rssTimer = setInterval(
      () => rss.push({ atS: Math.round((performance.now() - t1) / 1000), mb: rssBytes(pid) / 2 ** 20 }),
      5000,
    );
    const outages: { from: number; to: number; what: string }[] = [];
    const chaos = (async () => {
      await sleepUntil(at(SECONDS * 0.25));
      const redisDown = performance.now() - t1;
      await redis.kill();
      events.push({ atS: redisDown / 1000, what: "redis killed (SIGKILL)" });
      await sleepUntil(at(SECONDS * 0.4));
      await redis.restart();
      events.push({ atS: (performance.now() - t1) / 1000, what: "redis restarted" });
      outages.push({ from: redisDown, to: performance.now() - t1, what: "redis" });
      if (cluster) {
        await sleepUntil(at(SECONDS * 0.6));
        const pgDown = performance.now() - t1;
        events.push({ atS: pgDown / 1000, what: "postgres stopping (pg_ctl -m fast stop)" });
        await cluster.stop();
        await cluster.start();
        events.push({ atS: (performance.now() - t1) / 1000, what: "postgres started" });
        // pooled connections notice the restart on their next use: allow a second
        outages.push({ from: pgDown, to: performance.now() - t1 + 1000, what: "postgres" });
      }
    })();
    // on PostgreSQL, what the engine runs for the attacker each second: its cross joins active in
    // pg_stat_activity and the parallel workers of every query (sampled; the outage has none)
    const pgSamples: {
      atS: number;
      attacker: number;
      workers: number;
      active: number;
      which: string | null;
    }[] = [];
    let sampling = cluster !== undefined;
    const sampler = (async () => {
      if (!cluster) return;
      while (sampling) {
        const c = new pg.Client({ connectionString: cluster.url });
        // the restart ends its session: the next query fails and a new client is made
        c.on("error", () => undefined);
        try {
          await c.connect();
          while (sampling) {
            const r = await c.query(
              "select count(*) filter (where state = 'active' and query like '%length(%length(%length(%' and backend_type = 'client backend' and pid <> pg_backend_pid())::int as attacker, " +
                "count(*) filter (where backend_type = 'parallel worker')::int as workers, " +
                "count(*) filter (where state = 'active' and backend_type = 'client backend' and pid <> pg_backend_pid())::int as active, " +
                "string_agg(case when state = 'active' and query like '%length(%length(%length(%' and pid <> pg_backend_pid() then pid || '@' || to_char(query_start, 'MI:SS.MS') end, ' ') as which from pg_stat_activity",
            );
            const row = r.rows[0] as {
              attacker: number;
              workers: number;
              active: number;
              which: string | null;
            };
            pgSamples.push({ atS: (performance.now() - t1) / 1000, ...row });
            await new Promise((res) => setTimeout(res, 250));
          }
        } catch {
          await new Promise((res) => setTimeout(res, 500));
        } finally {
          await c.end().catch(() => undefined);
        }
      }
    })();
    const loaded = await drive(base, SECONDS, GOOD_CLIENTS, ATTACK_CLIENTS, t1);
    sampling = false;
    await sampler;
    const cpuLoaded = cpuSince(cpu1, SECONDS);
    // the engine's side of the run: queries by outcome and their seconds (both phases)
    const metrics = await httpGet(`${base}/metrics`, { Authorization: "Bearer soak-metrics-0123456789" });
    const engineLines = metrics.body
      .split("\n")
      .filter((l) =>
        /^qes_(backend_queries_total|query_duration_seconds_(sum|count)|admission\w*)\{/.test(l),
      );
    await chaos;
    clearInterval(rssTimer);
    const loadEnd = loadavg();

    const good = (xs: Sample[]) => xs.filter((s) => s.good && s.status === 200).map((s) => s.ms);
    // a request belongs to an outage when it was in flight during it (a query that waited for a
    // slot from 29 s and met the 36 s shutdown is the outage's answer, not the attack's)
    const during = (s: Sample, o: { from: number; to: number }) =>
      s.atMs <= o.to && s.atMs + s.ms >= o.from - 100;
    const outside = (s: Sample) => !outages.some((o) => o.what === "postgres" && during(s, o));
    // in flight during an outage window or while it drained (the 1 s after)
    const calm = (s: Sample) => !outages.some((o) => during(s, { from: o.from, to: o.to + 1000 }));
    const p = (xs: number[]) => ({ p50: percentile(xs, 0.5), p99: percentile(xs, 0.99), n: xs.length });
    const unloadedStats = p(good(baseline));
    const loadedStats = p(good(loaded));
    const loadedOutside = p(good(loaded.filter((s) => outside(s))));
    const loadedCalm = p(good(loaded.filter((s) => calm(s))));
    const s503 = loaded.filter((s) => s.status === 503);
    const s503Outside = s503.filter((s) => outside(s));
    const unexpected = loaded.filter(
      (s) => typeof s.status === "number" && s.status >= 500 && s.status !== 503 && s.status !== 504,
    );
    const byKind: Record<string, Record<string, number>> = {};
    for (const s of loaded) {
      const c = byKind[s.kind] ?? {};
      byKind[s.kind] = c;
      c[String(s.status)] = (c[String(s.status)] ?? 0) + 1;
    }
    const report = {
      backend: BACKEND,
      clients: { wellBehaved: GOOD_CLIENTS, attackers: ATTACK_CLIENTS, pauseMs: args.pause },
      seconds: SECONDS,
      loadAverage: { before: loadStart.map((x) => x.toFixed(2)), after: loadEnd.map((x) => x.toFixed(2)) },
      served: { unloaded: baseline.length, underAttack: loaded.length },
      cpu: { unloaded: cpuUnloaded, underAttack: cpuLoaded },
      wellBehavedMs: {
        unloaded: unloadedStats,
        underAttack: loadedStats,
        underAttackOutsidePgRestart: loadedOutside,
        p99Ratio: loadedStats.p99 / unloadedStats.p99,
        p99RatioOutsidePgRestart: loadedOutside.p99 / unloadedStats.p99,
        // attack alone: Redis and PostgreSQL both up (every hit is a query while Redis is down)
        underAttackOutsideOutages: loadedCalm,
        // by kind, outside outages: which requests make the tail
        underAttackOutsideOutagesByKind: Object.fromEntries(
          (["hit", "stored", "consumer"] as const).map((kind) => [
            kind,
            p(good(loaded.filter((s) => s.kind === kind && calm(s)))),
          ]),
        ),
        unloadedByKind: Object.fromEntries(
          (["hit", "stored", "consumer"] as const).map((kind) => [
            kind,
            p(good(baseline.filter((s) => s.kind === kind))),
          ]),
        ),
        p99RatioOutsideOutages: loadedCalm.p99 / unloadedStats.p99,
      },
      statusUnderAttack: counts(loaded),
      statusWellBehavedUnderAttack: counts(loaded.filter((s) => s.good)),
      statusUnloaded: counts(baseline),
      byKind,
      // where the tail is: 5-second windows of the attack, the well-behaved answers started in each
      // and the attacker's engine time inside it (its heavy and abandoned requests, from their
      // start to their answer, as the client saw them)
      windows: windowsOf(loaded, SECONDS, 5),
      // PostgreSQL, per 5 s: mean attacker cross joins active / parallel workers / active queries
      pgActivity: Array.from({ length: cluster ? Math.ceil(SECONDS / 5) : 0 }, (_, i) => {
        const xs = pgSamples.filter((p) => p.atS >= i * 5 && p.atS < (i + 1) * 5);
        const mean = (k: "attacker" | "workers" | "active") =>
          (xs.reduce((a, p) => a + p[k], 0) / Math.max(1, xs.length)).toFixed(1);
        const which = new Set(xs.flatMap((p) => (p.which ?? "").split(" ").filter(Boolean)));
        return `${i * 5}-${i * 5 + 5}s attacker ${mean("attacker")} workers ${mean("workers")} active ${mean("active")} (${[...which].join(" ")})`;
      }),
      engine: engineLines,
      status503: {
        total: s503.length,
        outsideOutages: s503Outside.length,
        // when they fell (seconds into the attack) and what the server said: their cause is the question
        outsideAt: s503Outside.map((s) => `${(s.atMs / 1000).toFixed(1)}s ${s.kind}: ${s.error ?? ""}`),
      },
      // a timeout is the attacker's cross join's answer; a well-behaved one's says where its time went
      status504: loaded
        .filter((s) => s.status === 504)
        .map(
          (s) =>
            `${(s.atMs / 1000).toFixed(1)}s+${(s.ms / 1000).toFixed(1)}s ${s.kind}${outside(s) ? "" : " (in an outage)"}: ${s.error ?? ""}`,
        ),
      status5xxOther: counts(unexpected),
      events,
      rssMb: rss.map((r) => `${r.atS}s:${r.mb.toFixed(0)}`).join(" "),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (server.process.exitCode !== null || server.process.signalCode !== null) {
      process.stdout.write(
        `THE SERVER EXITED (${server.process.exitCode ?? server.process.signalCode}):\n${server.output()}\n`,
      );
    }
  } finally {
    await server.stop();
    await redis.stop();
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

function windowsOf(samples: Sample[], seconds: number, width: number): string[] {
  const out: string[] = [];
  for (let from = 0; from < seconds; from += width) {
    const [a, b] = [from * 1000, (from + width) * 1000];
    const good = samples
      .filter((s) => s.good && s.status === 200 && s.atMs >= a && s.atMs < b)
      .map((s) => s.ms);
    let attackMs = 0;
    for (const s of samples) {
      if (s.good || (s.kind !== "heavy" && s.kind !== "abandoned")) continue;
      attackMs += Math.max(0, Math.min(b, s.atMs + s.ms) - Math.max(a, s.atMs));
    }
    out.push(
      `${from}-${from + width}s n=${good.length} p50=${percentile(good, 0.5).toFixed(0)} p99=${percentile(good, 0.99).toFixed(0)} attacker in flight ${(attackMs / 1000).toFixed(1)} s`,
    );
  }
  return out;
}

function sleepUntil(t: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));
}

await main();
