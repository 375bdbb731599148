/**
 * PostgreSQL backend benchmark: load of seeded edge events through `backend.load` (COPY), and the
 * `logs.all` query shape (newest 100 rows of one project) timed natively next to the backend's
 * execution path. Results go to stdout as a markdown table for docs/benchmarks.md.
 *
 *   node --import tsx bench/postgres-load.ts [--events 1000000] [--url postgres://…/test]
 *        [--compare-json 200000] [--keep]
 *
 * The events file is generated once (deterministic seed) into .tmp/bench/ and reused.
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { createPostgresBackend, readerRoleFor } from "@qes/backend-postgres";
import type { CompiledQuery, OutputColumn } from "@qes/core";
import { generateEvents } from "@qes/server";
import pg from "pg";

const { values: args } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    url: {
      type: "string",
      default: process.env.QES_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    },
    runs: { type: "string", default: "50" },
    "compare-json": { type: "string", default: "0" },
    keep: { type: "boolean", default: false },
  },
});

const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
const NOW = 1_736_931_600_000_000n; // 2025-01-15T09:00:00Z: a fixed clock keeps the file identical
const SEED = 42;
const EDGE = "cloudflare.logs.prod";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function eventsFile(): Promise<string> {
  mkdirSync(".tmp/bench", { recursive: true });
  const path = `.tmp/bench/edge-${EVENTS}-seed${SEED}.ndjson`;
  if (existsSync(path)) return path;
  const started = performance.now();
  const out = createWriteStream(path);
  let buffer = "";
  for (const line of generateEvents(EDGE, EVENTS, SEED, NOW)) {
    buffer += line + "\n";
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((r) => out.once("drain", () => r()));
      buffer = "";
    }
  }
  await new Promise<void>((r) => out.end(buffer, r));
  console.error(`generated ${path} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return path;
}

/** CPU seconds (user + system) a server process has used, when it runs on this machine. */
function backendCpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // fields after the command: state is [0], utime [11], stime [12], in clock ticks (100 Hz)
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function time(fn: () => Promise<unknown>, runs = RUNS): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm caches and connections
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const file = await eventsFile();
  const schema = `qes_bench_${process.pid}`;
  const backend = createPostgresBackend({ url: args.url!, schema, pool: 4 });
  await backend.init();
  const rows: [string, string][] = [];
  try {
    // --- load, as `qes load` reads a file
    const monitor = new pg.Client({ connectionString: args.url });
    await monitor.connect();
    let copyPid: number | null = null;
    const loadAvgBefore = loadavg()[0]!;
    const cpuBefore = process.cpuUsage();
    const input = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    const summary = await backend.load(EDGE, input, {
      onProgress: (p) => {
        if (p.events % 100_000 === 0) console.error(`  ${p.events} events`);
        if (copyPid === null && p.events >= Math.min(100_000, EVENTS / 2)) {
          copyPid = 0;
          void monitor
            .query(
              "select pid from pg_stat_activity where application_name = 'qes-owner' and query ilike 'copy %'",
            )
            .then((r) => {
              copyPid = r.rows[0]?.pid ?? null;
            });
        }
      },
    });
    const cpu = process.cpuUsage(cpuBefore);
    await monitor.end();
    rows.push([
      `load ${summary.events} seeded edge events (COPY, one transaction)`,
      `${summary.seconds.toFixed(1)} s`,
    ]);
    rows.push(["load rate", `${Math.round(summary.eventsPerSecond)} events/s`]);
    const pgCpu = copyPid ? backendCpuSeconds(copyPid) : null;
    rows.push([
      "CPU used by the load: node (read, parse, widen, flatten, encode) / PostgreSQL backend (COPY, index build, ANALYZE)",
      `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s / ${pgCpu === null ? "n/a" : pgCpu.toFixed(1) + " s"}`,
    ]);
    rows.push([
      "machine: cores / 1-min load average before → after the load",
      `${cpus().length} / ${loadAvgBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
    ]);
    console.error(rows.map((r) => r.join(": ")).join("\n"));

    const logSchema = await backend.schema();
    const edge = logSchema.sources[EDGE]!;
    const table = `"${schema}"."${edge.table}"`;
    const metadata = edge.fields.metadata!;
    const owner = new pg.Client({ connectionString: args.url });
    await owner.connect();
    const { rows: sizes } = await owner.query(
      `select pg_size_pretty(pg_total_relation_size($1::regclass)) as total, pg_size_pretty(pg_relation_size($1::regclass)) as heap`,
      [table],
    );
    rows.push(["table size (total / heap)", `${sizes[0].total} / ${sizes[0].heap}`]);
    const { rows: top } = await owner.query(
      `select project, count(*)::int as n from ${table} group by project order by n desc limit 1`,
    );
    const project = top[0].project as string;

    // --- logs.all shape: newest 100 rows of one project
    const nativeSql = `select id, "timestamp", event_message, "${metadata.column}" as metadata from ${table}
      where project = $1 order by "timestamp" desc limit 100`;
    const reader = new pg.Client({ connectionString: backend.config.queryUrl });
    await reader.connect();
    const native = await time(() => reader.query(nativeSql, [project]));
    rows.push([
      `native: newest 100 rows of project ${project} (${top[0].n} rows), pg client`,
      `${native.toFixed(2)} ms`,
    ]);

    const columns: OutputColumn[] = [
      { name: "id", type: { kind: "scalar", type: "STRING" } },
      { name: "timestamp", type: { kind: "scalar", type: "TIMESTAMP" } },
      { name: "event_message", type: { kind: "scalar", type: "STRING" } },
      { name: "metadata", type: { kind: "record", node: metadata, repeated: true } },
    ];
    const hand: CompiledQuery = {
      sql: nativeSql,
      params: [{ name: "project", type: "STRING", kind: "endpoint" }],
      columns,
      schemaVersion: logSchema.version,
      dialect: "postgres",
      patternParams: [],
    };
    const viaBackend = await time(() =>
      backend.execute(hand, [project], { maxRows: 1000, timeoutMs: 30_000 }),
    );
    rows.push([
      "same SQL through backend.execute (reader pool, row cap, wire values)",
      `${viaBackend.toFixed(2)} ms (${(viaBackend / native).toFixed(2)}× native)`,
    ]);

    // --- usage-counter shape over the last day, typed columns, for reference
    const request = metadata.fields?.request;
    const url = request?.fields?.url?.column;
    const path = request?.fields?.path?.column;
    if (url && path) {
      const usage = `select date_trunc('hour', "timestamp") as bucket,
          count(*) filter (where "${path}" ~ '/rest') as rest, count(*) filter (where "${path}" ~ '/auth') as auth
        from ${table} where "${url}" ~ $1 and "timestamp" >= $2::timestamptz - interval '1 day'
        group by 1 order by 1`;
      const usageMs = await time(() => reader.query(usage, [project, "2025-01-15 09:00:00+00"]), 10);
      rows.push([
        "native: usage counters per hour over the last day (regex on typed columns)",
        `${usageMs.toFixed(1)} ms`,
      ]);
    }
    await reader.end();

    const compare = Number(args["compare-json"]);
    if (compare > 0)
      rows.push(...(await compareJsonTypes(owner, schema, edge.table, metadata.column!, compare)));
    await owner.end();
  } finally {
    await backend.close();
    if (!args.keep) {
      const client = new pg.Client({ connectionString: args.url });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.query(`drop owned by "${readerRoleFor(schema)}"`).catch(() => undefined);
      await client.query(`drop role if exists "${readerRoleFor(schema)}"`).catch(() => undefined);
      await client.end();
    }
  }
  console.log("| measurement | result |\n|---|---|");
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
}

/**
 * The JSON text columns as `json`, `jsonb` or plain `text`: the same COPY data ingested into
 * each (server-side COPY from a file the server writes), then two reads: 100 rows' JSON text,
 * and one field below an array over every row.
 */
async function compareJsonTypes(
  owner: pg.Client,
  schema: string,
  source: string,
  column: string,
  n: number,
): Promise<[string, string][]> {
  const out: [string, string][] = [];
  const table = `"${schema}"."${source}"`;
  const dump = `/tmp/qes-bench-${process.pid}.copy`;
  await owner.query(`copy (select * from ${table} limit ${n}) to '${dump}'`);
  for (const type of ["json", "jsonb", "text"]) {
    const t = `"${schema}"."${source}_${type}"`;
    await owner.query(`create table ${t} (like ${table})`);
    await owner.query(`alter table ${t} alter column "${column}" type ${type} using "${column}"::${type}`);
    await owner.query("set default_toast_compression = 'lz4'");
    const started = performance.now();
    await owner.query(`copy ${t} from '${dump}'`);
    const copyMs = performance.now() - started;
    await owner.query(`create index on ${t} ("timestamp")`);
    await owner.query(`analyze ${t}`);
    const asJson = type === "text" ? `"${column}"::json` : `"${column}"`;
    const read100 = await time(
      () => owner.query(`select "${column}"::text from ${t} order by "timestamp" desc limit 100`),
      10,
    );
    const elements = type === "jsonb" ? "jsonb_array_elements" : "json_array_elements";
    const cast = type === "text" ? "::json" : "";
    const underArray = await time(
      () =>
        owner.query(
          `select count(*) from ${t}, ${elements}(coalesce(("${column}"${cast} -> 'request' -> 'cf' -> 'botManagement') -> 'detectionIds', '[]')) as e`,
        ),
      3,
    );
    const fieldPath = await time(
      () => owner.query(`select count(*) from ${t} where (${asJson} -> 'request' ->> 'method') = 'POST'`),
      3,
    );
    const { rows } = await owner.query(
      "select pg_size_pretty(pg_total_relation_size($1::regclass)) as size",
      [t],
    );
    out.push([
      `metadata as ${type}: COPY ${n} rows / 100 rows' text / a nested field over all rows / unnest an array / size`,
      `${(copyMs / 1000).toFixed(1)} s / ${read100.toFixed(2)} ms / ${fieldPath.toFixed(0)} ms / ${underArray.toFixed(0)} ms / ${rows[0].size}`,
    ]);
    await owner.query(`drop table ${t}`);
  }
  return out;
}

await main();
