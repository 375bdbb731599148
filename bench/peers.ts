/**
 * qes against the plain peers (issue 15): the same seeded edge events in qes's store and stored
 * plainly on the same engine, both endpoints asked of each, in one run. qes is timed end to end
 * over HTTP (a real `qes serve` per backend, result cache off); the peer in-process through the
 * same Node driver qes uses (@duckdb/node-api, pg), with the SQL a person would write on its
 * layout (bench/lib/peer-queries.ts). Each peer's rows are checked equal to qes's first. The
 * DuckDB server's RSS is sampled over its whole run.
 *
 *   node --import tsx bench/peers.ts [--edge 1000000] [--engines duckdb,postgres] [--runs N]
 *   node --import tsx bench/peers.ts --scale [--big]    100k and 1M edge events; --big adds 10M
 *   [--orders file]   the peer in file order only (PostgreSQL's time-order copy is ~2 GB per 1M)
 *   [--requests "logs.all,usage.api-counts hourly"]   only these requests
 *
 * Stores are kept under .tmp/bench and in PostgreSQL (qes: schema qes_bench_<hash>; peers:
 * schema peers_plain) and reused by the next run. QES_BENCH_POSTGRES_URL picks the database.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { SEED_PROJECTS } from "@qes/server";
import { type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_NOW_ISO, EDGE, ensureEventsFile } from "./lib/data.ts";
import {
  clickhousePeer,
  duckdbPeer,
  normalRows,
  type Peer,
  type PeerRequest,
  postgresPeer,
} from "./lib/peer-queries.ts";
import {
  openPlainClickhouse,
  openPlainDuckdb,
  openPlainPostgres,
  type PeerOrder,
} from "./lib/plain-peers.ts";
import { sampleRss } from "./lib/processes.ts";
import { serverMs, startQesServer } from "./lib/qes-serve.ts";
import { isMain, type Section, sectionMarkdown } from "./lib/report.ts";
import { count, median, ms, timeRotating } from "./lib/stats.ts";

/** the busiest seeded project (half of all events), as bench/endpoints.ts asks for */
const PROJECT = SEED_PROJECTS[0];

const REQUESTS: { name: string; request: PeerRequest; path: string }[] = [
  { name: "logs.all", request: { endpoint: "logs.all" }, path: `logs.all?project=${PROJECT}` },
  ...(["hourly", "daily", "minutely"] as const).map((interval) => ({
    name: `usage.api-counts ${interval}`,
    request: { endpoint: "usage.api-counts" as const, interval },
    path: `usage.api-counts?interval=${interval}&project=${PROJECT}`,
  })),
];

/** issue 15's targets: qes time ≤ this × the peer's, per engine and endpoint */
function target(engine: EngineName, request: PeerRequest): number | null {
  if (engine === "duckdb" && request.endpoint === "logs.all") return 0.15;
  if (engine === "postgres" && request.endpoint === "usage.api-counts") return 0.2;
  return null;
}
const DUCKDB_RSS_TARGET_MB = 700;

export interface PeerTiming {
  engine: EngineName;
  edgeEvents: number;
  name: string;
  rows: number;
  /** false when the peer's rows differ from qes's: the times are then not a comparison */
  same: boolean;
  qesMs: number;
  /** qes's own time per request (its request log), without the HTTP round trip */
  serverMs: number;
  /** timed rounds */
  runs: number;
  /** the peer in the generator's row order, and in time order (see plain-peers.ts) */
  peerMs: Record<PeerOrder, number>;
  target: number | null;
}

export interface EngineRun {
  engine: EngineName;
  edgeEvents: number;
  timings: PeerTiming[];
  serverPeakRssMb: number;
  qesLoadSeconds: number | null;
  peerLoadSeconds: number | null;
  peerSql: string[];
}

const ALL_ORDERS: PeerOrder[] = ["file", "time"];
const PEER_ENGINES: EngineName[] = ["duckdb", "postgres", "clickhouse"];

async function openPeer(
  engine: EngineName,
  file: string,
  orders: PeerOrder[],
): Promise<{ peers: Record<PeerOrder, Peer>; loadSeconds: number | null; close(): Promise<void> }> {
  if (engine === "duckdb") {
    const db = await openPlainDuckdb(file);
    return {
      peers: { file: duckdbPeer(db, "file"), time: duckdbPeer(db, "time") },
      loadSeconds: db.loadSeconds,
      close: async () => db.close(),
    };
  }
  if (engine === "postgres") {
    const db = await openPlainPostgres(file, { timeOrder: orders.includes("time") });
    return {
      peers: { file: postgresPeer(db, "file"), time: postgresPeer(db, "time") },
      loadSeconds: db.loadSeconds,
      close: () => db.close(),
    };
  }
  if (engine === "clickhouse") {
    const db = await openPlainClickhouse(file);
    return {
      peers: { file: clickhousePeer(db, "file"), time: clickhousePeer(db, "time") },
      loadSeconds: db.loadSeconds,
      close: () => db.close(),
    };
  }
  throw new Error(`no plain peer for ${engine}`);
}

/** one engine at one size: load both stores (or reuse them), check rows, time alternately */
export async function runEngine(
  engine: EngineName,
  edgeEvents: number,
  opts: { runs?: number; orders?: PeerOrder[]; requests?: string[]; log: (msg: string) => void },
): Promise<EngineRun> {
  const { log } = opts;
  const orders = opts.orders ?? ALL_ORDERS;
  const file = await ensureEventsFile(EDGE, edgeEvents);
  const loaded = await openLoadedBackend(engine, { [EDGE]: file }, { onProgress: log });
  const location = loaded.location;
  await loaded.close();
  log(`${engine} ${count(edgeEvents)}: qes store ready (${fmtSeconds(loaded.loadSeconds)}); plain peer…`);
  const peer = await openPeer(engine, file, orders);
  log(`${engine} ${count(edgeEvents)}: plain peer ready (${fmtSeconds(peer.loadSeconds)})`);
  const server = await startQesServer(engine, location, `peers-${engine}-${edgeEvents}`);
  // sampled from the first request to the last, warm-ups included: "during the benchmark"
  const rss = sampleRss(server.pid, 50);
  const timings: PeerTiming[] = [];
  try {
    for (const r of requestsOf(opts.requests)) {
      // qes's time includes JSON.parse, as the peers' include the driver's row conversion:
      // both end with the rows in hand
      const qes = async () => normalRows(r.request, JSON.parse((await server.get(r.path)).body).result);
      const plain = orders.map((o) => () => peer.peers[o].run(r.request, PROJECT, BENCH_NOW_ISO));
      const qesRows = JSON.stringify(await qes());
      let same = true;
      for (const [i, run] of plain.entries()) {
        const peerRows = JSON.stringify(await run());
        if (peerRows === qesRows) continue;
        same = false;
        log(`${engine} ${r.name} (${orders[i]} order): ROWS DIFFER\n qes:  ${qesRows}\n peer: ${peerRows}`);
      }
      // as many rounds as fit in ~15 s, 5 to 15
      const once = await timeRotating([qes, ...plain], { runs: 1, warmup: 0 });
      const round = once.reduce((sum, [x]) => sum + x!, 0);
      const runs = opts.runs ?? Math.max(5, Math.min(15, Math.floor(15_000 / Math.max(round, 1))));
      log(`${engine} ${count(edgeEvents)}: ${r.name} × ${runs}`);
      const [q, ...peerTimes] = await timeRotating([qes, ...plain], { runs });
      // an order not asked for (--orders) reads NaN, printed as "–"
      const peerMs = (o: PeerOrder) => {
        const times = peerTimes[orders.indexOf(o)];
        return times ? median(times) : Number.NaN;
      };
      timings.push({
        engine,
        edgeEvents,
        name: r.name,
        rows: JSON.parse(qesRows).length,
        same,
        qesMs: median(q!),
        serverMs: Number.NaN,
        runs,
        peerMs: { file: peerMs("file"), time: peerMs("time") },
        target: target(engine, r.request),
      });
      const t = timings[timings.length - 1]!;
      log(
        `${engine} ${count(edgeEvents)}: ${r.name}: qes ${ms(t.qesMs)}, peer ${orNone(t.peerMs.file, ms)} / ${orNone(t.peerMs.time, ms)}`,
      );
    }
  } finally {
    await server.stop();
    await peer.close();
  }
  const logged = serverMs(server.logFile);
  for (const [i, r] of requestsOf(opts.requests).entries()) {
    const t = timings[i];
    // the log is in request order: the last `runs` entries are the timed rounds
    if (t) t.serverMs = median((logged.get(`/api/endpoints/query/${r.path}`) ?? []).slice(-t.runs));
  }
  return {
    engine,
    edgeEvents,
    timings,
    serverPeakRssMb: Math.round(rss.stop() / 2 ** 20),
    qesLoadSeconds: loaded.loadSeconds,
    peerLoadSeconds: peer.loadSeconds,
    peerSql: [REQUESTS[0]!, REQUESTS[1]!].map((r) => peer.peers.file.sql(r.request)),
  };
}

/** the requests named (each a name's prefix, e.g. `logs.all`, `usage.api-counts hourly`), or all */
function requestsOf(names: string[] | undefined): typeof REQUESTS {
  return names === undefined ? REQUESTS : REQUESTS.filter((r) => names.some((n) => r.name.startsWith(n)));
}

/** "–" for a peer order that was not run */
function orNone(x: number, show: (x: number) => string): string {
  return Number.isNaN(x) ? "–" : show(x);
}

function fmtSeconds(s: number | null): string {
  return s === null ? "reused" : `loaded in ${s.toFixed(1)} s`;
}

function verdict(t: PeerTiming): string {
  if (!t.same) return "**rows differ**";
  if (t.target === null) return "–";
  const one = (o: PeerOrder) =>
    Number.isNaN(t.peerMs[o]) ? "–" : t.qesMs / t.peerMs[o] <= t.target! ? "met" : "**missed**";
  return `≤ ${t.target}×: ${one("file")} / ${one("time")}`;
}

/** the per-size section: one table, every engine's requests, and the DuckDB RSS target */
export function peersSection(runs: EngineRun[], load: { before: string; after: string }): Section {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const run of runs) {
    for (const t of run.timings)
      rows.push([
        run.engine,
        t.name,
        String(t.rows),
        ms(t.qesMs),
        ms(t.serverMs),
        orNone(t.peerMs.file, ms),
        orNone(t.qesMs / t.peerMs.file, (r) => `${r.toFixed(3)}×`),
        orNone(t.peerMs.time, ms),
        orNone(t.qesMs / t.peerMs.time, (r) => `${r.toFixed(3)}×`),
        verdict(t),
      ]);
    const rssVerdict =
      run.engine === "duckdb"
        ? run.serverPeakRssMb <= DUCKDB_RSS_TARGET_MB
          ? ` (≤ ${DUCKDB_RSS_TARGET_MB} MB met)`
          : ` (≤ ${DUCKDB_RSS_TARGET_MB} MB **missed**)`
        : "";
    notes.push(
      `${run.engine}: qes server peak RSS ${run.serverPeakRssMb} MB${rssVerdict}; qes store ${fmtSeconds(run.qesLoadSeconds)}, plain peer ${fmtSeconds(run.peerLoadSeconds)}.`,
    );
  }
  notes.push(`Load average (1/5/15 min): ${load.before} before, ${load.after} after.`);
  const size = runs[0]?.edgeEvents ?? 0;
  return {
    title: `qes against the plain peers (${count(size)} edge events)`,
    intro:
      "qes: a real `qes serve` per backend, result cache off, time to the last byte at the client plus JSON.parse; " +
      "of which server: the median the server logs for the timed requests (arrival to response end). " +
      "Peer: the hand-written query on the plain layout in this process through the same driver, rows read into JS; " +
      "its table in the generator's row order (not time order) and sorted by timestamp (the " +
      "order events arrive in, which BRIN and min/max pruning need). " +
      `Rotated run by run; medians. Project \`${PROJECT}\` (half of all events); now = ${BENCH_NOW_ISO}.`,
    header: [
      "engine",
      "request",
      "rows",
      "qes",
      "of which server",
      "peer, file order",
      "qes / peer",
      "peer, time order",
      "qes / peer",
      "issue 15 target (file / time order)",
    ],
    rows,
    notes,
  };
}

/** endpoint × backend rows, one column per size: "qes / peer" */
export function scalingSection(runs: EngineRun[]): Section {
  const sizes = [...new Set(runs.map((r) => r.edgeEvents))].sort((a, b) => a - b);
  const engines = [...new Set(runs.map((r) => r.engine))];
  const rows: string[][] = [];
  for (const engine of engines)
    for (const { name } of REQUESTS)
      rows.push([
        engine,
        name,
        ...sizes.map((size) => {
          const t = runs
            .find((r) => r.engine === engine && r.edgeEvents === size)
            ?.timings.find((x) => x.name === name);
          return t ? `${ms(t.qesMs)} / ${orNone(t.peerMs.file, ms)} / ${orNone(t.peerMs.time, ms)}` : "–";
        }),
      ]);
  return {
    title: "Scaling: qes / plain peer by data size",
    intro:
      "Each cell: qes end to end over HTTP / the engine-native query on the plain layout, rows in file order / " +
      "the same in time order (medians).",
    header: ["engine", "request", ...sizes.map((s) => `${count(s)} events`)],
    rows,
    notes: [],
  };
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "1000000" },
      engines: { type: "string", default: "duckdb,postgres" },
      runs: { type: "string" },
      scale: { type: "boolean", default: false },
      big: { type: "boolean", default: false },
      // PostgreSQL's time-order copy doubles the peer's disk (~20 GB more at 10M): --orders file
      orders: { type: "string", default: "file,time" },
      // e.g. "logs.all,usage.api-counts hourly": at 10M a daily jsonb query takes minutes
      requests: { type: "string" },
    },
  });
  const sizes = values.scale
    ? [100_000, 1_000_000, ...(values.big ? [10_000_000] : [])]
    : values.edge!.split(",").map(Number);
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const engines = values.engines!.split(",") as EngineName[];
  // before any load: a 1M qes load takes minutes
  const unknown = engines.filter((e) => !PEER_ENGINES.includes(e));
  if (unknown.length > 0) throw new Error(`no plain peer for ${unknown.join(", ")}: use ${PEER_ENGINES}`);
  const all: EngineRun[] = [];
  for (const size of sizes) {
    const before = loadAverage();
    const runs: EngineRun[] = [];
    for (const engine of engines)
      runs.push(
        await runEngine(engine, size, {
          runs: values.runs ? Number(values.runs) : undefined,
          orders: values.orders!.split(",") as PeerOrder[],
          ...(values.requests ? { requests: values.requests.split(",") } : {}),
          log,
        }),
      );
    all.push(...runs);
    process.stdout.write(`${sectionMarkdown(peersSection(runs, { before, after: loadAverage() }))}\n`);
  }
  if (sizes.length > 1) process.stdout.write(`${sectionMarkdown(scalingSection(all))}\n`);
  process.stdout.write(
    `Peer SQL:\n\n${all
      .filter((r, i) => all.findIndex((x) => x.engine === r.engine) === i)
      .map(
        (r) => `${r.engine}:\n\n${r.peerSql.map((s) => `    ${s.replaceAll("\n", "\n    ")}`).join("\n\n")}`,
      )
      .join("\n\n")}\n`,
  );
}
