/**
 * PostgreSQL ingest as a source keeps more days (issue 13): every ingest commit asks which of its
 * ids the source stores already, and each day is a partition with its own `id` index, so a probe
 * of every id costs one index descent per id per day kept. This benchmark fills a source with
 * `--days` days of `--per-day` events (plain SQL inserts into the partitions, before the clock),
 * then ingests the same `--events` fresh edge events (`Backend.ingest`, batches of `--batch`) two
 * ways, in one run, each into its own copy of the filled source:
 *  - filter: one instance, as `qes serve` ingests: after its first commit, PostgreSQL is asked only
 *    about the ids the instance's filter of the source's ids cannot rule out;
 *  - every id probed: two instances taking turns by batch, so that each commit finds the other's
 *    write and probes every id in every partition, as every commit did before the filter;
 * and then the time to read a filter of the source's ids from its table (a process's first
 * commit to it, or after another writer's).
 *
 *   node --import tsx bench/ingest-dedupe.ts [--days 8,30,90] [--per-day 12500] [--events 100000] [--batch 5000]
 */
import { parseArgs } from "node:util";
import { createPostgresBackend, dropPostgresStorage, type PostgresBackend } from "@qes/backend-postgres";
import { type IngestBatch, type LogEvent, logEventFromJson, parseJsonText } from "@qes/core";
import pg from "pg";
import { PostgresStoredIds } from "../packages/backend-postgres/src/postgres-stored-ids.ts";
import { BENCH_POSTGRES_URL } from "./lib/bench-backends.ts";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile, readLines } from "./lib/data.ts";

const args = parseArgs({
  options: {
    days: { type: "string", default: "8,30,90" },
    "per-day": { type: "string", default: "12500" },
    events: { type: "string", default: "100000" },
    batch: { type: "string", default: "5000" },
  },
}).values;
const PER_DAY = Number(args["per-day"]);
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);
const DAY_MICROS = 86_400_000_000n;

async function readEvents(): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  for await (const line of readLines(await ensureEventsFile(EDGE, EVENTS))) {
    events.push(logEventFromJson(parseJsonText(line), EDGE, BENCH_NOW_MICROS, `event ${events.length}`));
  }
  return events;
}

/** a fresh schema whose edge source holds `days` partitions of `PER_DAY` rows before the events' days */
async function filledSource(
  days: number,
  tag: string,
): Promise<{ schema: string; backends: PostgresBackend[] }> {
  const schema = `qes_bench_dedupe_${process.pid}_${tag}`;
  const backends = [0, 1].map(() => createPostgresBackend({ url: BENCH_POSTGRES_URL, schema, pool: 2 }));
  for (const b of backends) await b.init();
  // one ingested event per old day makes its partition
  const first = BENCH_NOW_MICROS - 10n * DAY_MICROS;
  const seeds: LogEvent[] = Array.from({ length: days }, (_, d) => ({
    id: `seed-${d}`,
    timestamp: first - BigInt(d) * DAY_MICROS,
    body: { event_message: "seed" },
  }));
  await backends[0]!.ingest([{ source: EDGE, events: seeds }]);
  const table = (await backends[0]!.schema()).sources[EDGE]!.table;
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(
      `insert into "${schema}"."${table}" (id, timestamp, event_message)
       select gen_random_uuid()::text, to_timestamp($1::bigint / 1e6) - (d * interval '1 day'), 'old'
       from generate_series(0, $2::int - 1) d, generate_series(1, $3::int) i`,
      [String(first), days, PER_DAY],
    );
    await client.query(`analyze "${schema}"."${table}"`);
  } finally {
    await client.end();
  }
  // the inserts bypassed the write token: the filters start from the table
  for (const b of backends) b["storedIds"].forget(EDGE);
  return { schema, backends };
}

/** seconds to read a fresh filter of the source's ids from its table (as after another writer's commit) */
async function filterReadSeconds(backend: PostgresBackend): Promise<number> {
  const ids = new PostgresStoredIds(backend["ownerPool"], backend["config"].schema);
  const table = (await backend.schema()).sources[EDGE]!.table;
  const client: pg.PoolClient = await backend["ownerPool"].connect();
  try {
    const t = performance.now();
    await ids.check(client, EDGE, table);
    await ids.settled();
    const seconds = (performance.now() - t) / 1000;
    if ((await ids.check(client, EDGE, table)).filter === undefined) throw new Error("no filter was read");
    return seconds;
  } finally {
    client.release();
    await ids.stop();
  }
}

async function ingestAll(events: LogEvent[], take: (batch: number) => PostgresBackend): Promise<number> {
  const t = performance.now();
  for (let i = 0, n = 0; i < events.length; i += BATCH, n++) {
    const batch: IngestBatch = { source: EDGE, events: events.slice(i, i + BATCH) };
    const [result] = await take(n).ingest([batch]);
    if (result!.stored !== batch.events.length)
      throw new Error(`stored ${result!.stored} of ${batch.events.length}`);
  }
  return (performance.now() - t) / 1000;
}

const events = await readEvents();
console.log(
  `# bench/ingest-dedupe: ${EVENTS} edge events in batches of ${BATCH}, ${PER_DAY} stored events per old day`,
);
console.log(
  `load average at start: ${(await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(
  "| days kept | stored events | filter s | every id probed s | every id ÷ filter | reading a filter of the source s |",
);
console.log("|---|---|---|---|---|---|");
for (const days of String(args.days).split(",").map(Number)) {
  const withFilter = await filledSource(days, `f${days}`);
  const probed = await filledSource(days, `p${days}`);
  try {
    const filterSeconds = await ingestAll(events, () => withFilter.backends[0]!);
    const probedSeconds = await ingestAll(events, (n) => probed.backends[n % 2]!);
    const readSeconds = await filterReadSeconds(withFilter.backends[0]!);
    console.log(
      `| ${days} | ${days * PER_DAY} | ${filterSeconds.toFixed(2)} | ${probedSeconds.toFixed(2)} | ${(probedSeconds / filterSeconds).toFixed(2)} | ${readSeconds.toFixed(2)} |`,
    );
  } finally {
    for (const { schema, backends } of [withFilter, probed]) {
      for (const b of backends) await b.close();
      await dropPostgresStorage(BENCH_POSTGRES_URL, schema);
    }
  }
}
console.log(
  `load average at end: ${(await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
