/**
 * PostgreSQL's CPU for COPY of the same qes rows in different ways (docs/benchmarks.md, "Issue 13
 * on PostgreSQL"): a source is loaded once to make its table and day partitions, its rows are
 * encoded as the loader encodes them, and then, round after round, the table is emptied and each
 * variant COPYs them, timed by the CPU seconds of its PostgreSQL backend (/proc; the server must
 * run on this machine). Modes: `idx` with the source's three indexes, `noidx` without them.
 * Variants: `parent` / `parentSorted` / `perDay` / `perDaySorted` (all rows; `--chunk N` COPYs a
 * day once it holds N rows, as a load does) and `bParent` / `bParentSorted` / `bPerDay` /
 * `bPerDaySorted` (in batches of `--batch` rows, as ingest does); `plain` (always run) COPYs the
 * events into the reference layout `(id, timestamp, event_message, body jsonb)`, unindexed.
 *
 *   node --import tsx bench/postgres-copy-variants.ts --rounds 4 --modes idx \
 *     --variants bParent,bParentSorted,bPerDay,bPerDaySorted
 *   node --import tsx bench/postgres-copy-variants.ts --rounds 4 --modes noidx --chunk 2000 \
 *     --variants parent,perDay,parentSorted,perDaySorted
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import { parseEvent } from "@qes/core";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { createCopyRowEncoder } from "../packages/backend-postgres/src/postgres-copy-row.ts";
import { listPartitions } from "../packages/backend-postgres/src/postgres-partitions.ts";
import { ident, qualified } from "../packages/backend-postgres/src/postgres-sql.ts";
import { readSource } from "../packages/backend-postgres/src/postgres-storage.ts";
import { BENCH_POSTGRES_URL } from "./lib/bench-backends.ts";
import { EDGE, ensureEventsFile, readLines } from "./lib/data.ts";
import { plainCopyRow } from "./lib/plain-peers.ts";

const args = parseArgs({
  options: {
    events: { type: "string", default: "100000" },
    rounds: { type: "string", default: "2" },
    variants: { type: "string", default: "" },
    chunk: { type: "string", default: "0" },
    batch: { type: "string", default: "5000" },
    modes: { type: "string", default: "noidx,idx" },
  },
}).values;
const EVENTS = Number(args.events);
const file = await ensureEventsFile(EDGE, EVENTS);
const schema = `qes_exp_${process.pid}`;
const backend = createPostgresBackend({ url: BENCH_POSTGRES_URL, schema, pool: 2 });
await backend.init();
await backend.load(EDGE, readLines(file));
const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
await client.connect();
await client.query("set timezone = 'UTC'");
const source = (await readSource(client, schema, EDGE))!;
const parent = qualified(schema, source.table);
const parts = new Map((await listPartitions(client, schema, source.table)).map((p) => [p.day, p.name]));
const enc = createCopyRowEncoder(source);
const cols = enc.columns.map((c) => ident(c.column)).join(", ");
interface Row {
  text: string;
  day: number;
  ts: bigint;
}
const rows: Row[] = [];
const plainRows: string[] = [];
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (!line) continue;
  const e = parseEvent(line, 1, 0n, "test")!;
  enc.timestamps.format(e.timestamp);
  rows.push({ text: `${enc.encode(e)}\n`, day: enc.timestamps.day, ts: e.timestamp });
  plainRows.push(plainCopyRow(line));
}
const sorted = [...rows].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
const { rows: idx } = await client.query<{ indexdef: string; indexname: string }>(
  "select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = $2",
  [schema, source.table],
);
const indexDefs = idx.map((r) => r.indexdef.replace(" ON ONLY ", " ON "));
console.log(
  `rows ${rows.length}, columns ${enc.columns.length}, avg bytes ${Math.round(rows.reduce((n, r) => n + r.text.length, 0) / rows.length)}, indexes ${indexDefs.length}`,
);

const pid = (await client.query<{ p: number }>("select pg_backend_pid() as p")).rows[0]!.p;
function serverCpu(): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function copy(table: string, columns: string, texts: string[]): Promise<void> {
  const stream = client.query(copyFrom(`copy ${table} (${columns}) from stdin`, { highWaterMark: 1 << 22 }));
  const done = new Promise<void>((res, rej) => {
    stream.on("finish", () => res());
    stream.on("error", rej);
  });
  let chunk = "";
  for (const t of texts) {
    chunk += t;
    if (chunk.length > 1 << 18) {
      if (!stream.write(chunk)) await new Promise((r) => stream.once("drain", r));
      chunk = "";
    }
  }
  if (chunk) stream.write(chunk);
  stream.end();
  await done;
}

const CHUNK = Number(args.chunk);
async function perDay(list: Row[]): Promise<void> {
  if (CHUNK > 0) {
    // per-day buffers flushed at CHUNK rows, as a streaming loader would
    const bufs = new Map<number, string[]>();
    for (const r of list) {
      let b = bufs.get(r.day);
      if (!b) {
        b = [];
        bufs.set(r.day, b);
      }
      b.push(r.text);
      if (b.length >= CHUNK) {
        await copy(qualified(schema, parts.get(r.day)!), cols, b);
        bufs.set(r.day, []);
      }
    }
    for (const [day, b] of bufs) if (b.length) await copy(qualified(schema, parts.get(day)!), cols, b);
    return;
  }
  const by = new Map<number, string[]>();
  for (const r of list) {
    let b = by.get(r.day);
    if (!b) {
      b = [];
      by.set(r.day, b);
    }
    b.push(r.text);
  }
  for (const [day, b] of by) await copy(qualified(schema, parts.get(day)!), cols, b);
}

const BATCH = Number(args.batch);
function byTs(a: Row, b: Row): number {
  return a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0;
}
async function batched(sort: boolean, split: boolean): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    let b = rows.slice(i, i + BATCH);
    if (sort) b = b.sort(byTs);
    if (!split) {
      await copy(
        parent,
        cols,
        b.map((r) => r.text),
      );
      continue;
    }
    const by = new Map<number, string[]>();
    for (const r of b) {
      let l = by.get(r.day);
      if (!l) {
        l = [];
        by.set(r.day, l);
      }
      l.push(r.text);
    }
    for (const [day, l] of by) await copy(qualified(schema, parts.get(day)!), cols, l);
  }
}
const variants: Record<string, (indexes: boolean) => Promise<void>> = {
  bParent: () => batched(false, false),
  bParentSorted: () => batched(true, false),
  bPerDay: () => batched(false, true),
  bPerDaySorted: () => batched(true, true),
  parent: () =>
    copy(
      parent,
      cols,
      rows.map((r) => r.text),
    ),
  parentSorted: () =>
    copy(
      parent,
      cols,
      sorted.map((r) => r.text),
    ),
  perDay: () => perDay(rows),
  perDaySorted: () => perDay(sorted),
};

await client.query(
  'create table if not exists qes_exp_plain (id text, "timestamp" timestamptz, event_message text, body jsonb)',
);
const names = String(args.variants || Object.keys(variants).join(",")).split(",");
for (let round = 0; round < Number(args.rounds); round++) {
  for (const indexes of String(args.modes)
    .split(",")
    .map((m) => m === "idx")) {
    for (const name of [...names, "plain"]) {
      await client.query(`truncate ${parent}`);
      await client.query("truncate qes_exp_plain");
      for (const r of idx) await client.query(`drop index if exists ${qualified(schema, r.indexname)}`);
      await client.query("drop index if exists qes_exp_plain_ts");
      if (indexes) {
        for (const d of indexDefs) await client.query(d);
      }
      await client.query("checkpoint");
      await client.query("begin");
      await client.query("set local default_toast_compression = 'lz4'");
      const c0 = serverCpu();
      const t = performance.now();
      if (name === "plain") await copy("qes_exp_plain", 'id, "timestamp", event_message, body', plainRows);
      else await variants[name]!(indexes);
      const copyS = (performance.now() - t) / 1000;
      const c1 = serverCpu();
      await client.query("commit");
      const s = (performance.now() - t) / 1000;
      console.log(
        `round ${round} ${indexes ? "idx  " : "noidx"} ${name.padEnd(13)} wall ${s.toFixed(2)} s (copy ${copyS.toFixed(2)}) server cpu ${(c1 - c0).toFixed(2)} s`,
      );
    }
  }
}
await client.query("drop table qes_exp_plain");
await client.end();
await backend.close();
await dropPostgresStorage(BENCH_POSTGRES_URL, schema);
