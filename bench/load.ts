/**
 * Load benchmark: `backend.load` of seeded NDJSON (all nine sources, the edge source dominant)
 * into a fresh store, per backend, medians of several runs; baselines measured in the same run:
 * the engine's own bulk ingest of the same files with no schema work (DuckDB `read_json` into a
 * table; PostgreSQL `COPY` of each line into a `jsonb` column), and the floor of any loader in
 * Node (reading the lines and `JSON.parse` of each).
 *
 *   node --import tsx bench/load.ts [--edge 100000] [--runs 3]
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { BENCH_POSTGRES_URL, type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { ensureAllSources, readLines } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { count, median } from "./lib/stats.ts";

export interface LoadOptions {
  edgeEvents: number;
  runs: number;
  engines: EngineName[];
  log?: (msg: string) => void;
}

async function countLines(files: string[]): Promise<number> {
  let n = 0;
  for (const f of files) for await (const _ of readLines(f)) n++;
  return n;
}

async function nodeParseFloor(files: string[]): Promise<number> {
  const t = performance.now();
  for (const f of files) for await (const line of readLines(f)) JSON.parse(line);
  return (performance.now() - t) / 1000;
}

async function duckdbNative(files: string[]): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:", { threads: "2", memory_limit: "4GB" });
  const conn = await instance.connect();
  try {
    const t = performance.now();
    for (const [i, f] of files.entries()) {
      await conn.run(
        `CREATE TABLE t${i} AS SELECT * FROM read_json('${resolve(f)}', format = 'newline_delimited', sample_size = -1, maximum_object_size = 16777216)`,
      );
    }
    return (performance.now() - t) / 1000;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function postgresNative(files: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await client.connect();
  const schema = `qes_bench_native_${process.pid}`;
  try {
    await client.query(`create schema "${schema}"`);
    const t = performance.now();
    await client.query("begin");
    for (const [i, f] of files.entries()) {
      await client.query(`create table "${schema}".t${i} (doc jsonb)`);
      // each line as one field: CSV with quote and delimiter characters that never occur in NDJSON
      await client.query(
        `copy "${schema}".t${i} (doc) from '${resolve(f)}' with (format csv, quote e'\\x01', delimiter e'\\x02')`,
      );
    }
    await client.query("commit");
    return (performance.now() - t) / 1000;
  } finally {
    await client.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await client.end();
  }
}

export async function runLoadBenchmark(opts: LoadOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const bySource = await ensureAllSources(opts.edgeEvents);
  const files = Object.values(bySource);
  const events = await countLines(files);
  const bytes = files.reduce((a, f) => a + statSync(f).size, 0);
  const rows: string[][] = [];
  const floor = median(await Promise.all([nodeParseFloor(files)]));
  for (const engine of opts.engines) {
    const ours: number[] = [];
    const native: number[] = [];
    for (let i = 0; i < opts.runs; i++) {
      log(`${engine}: load round ${i + 1}`);
      const b = await openLoadedBackend(engine, bySource, { fresh: true });
      ours.push(b.loadSeconds!);
      await b.close();
      native.push(engine === "duckdb" ? await duckdbNative(files) : await postgresNative(files));
    }
    const o = median(ours);
    const n = median(native);
    rows.push([
      engine,
      `${count(events)} events (${(bytes / 1e6).toFixed(0)} MB), 9 sources`,
      `${o.toFixed(2)} s`,
      `${count(events / o)} events/s`,
      `${n.toFixed(2)} s (${engine === "duckdb" ? "read_json → table" : "COPY → jsonb"})`,
      `${(o / n).toFixed(2)}×`,
      `${(o / floor).toFixed(2)}×`,
    ]);
  }
  return {
    title: "Load throughput",
    intro:
      `\`backend.load\` of every source's seeded NDJSON into a fresh store (schema inference, widening, flattening ` +
      `into typed columns, indexes), medians of ${opts.runs} runs; baselines from the same run: the engine's own bulk ` +
      "ingest of the same files without any of that work, and Node reading and `JSON.parse`-ing every line " +
      `(${floor.toFixed(2)} s here), the floor of any loader written in Node.`,
    header: [
      "backend",
      "data",
      "backend.load",
      "throughput",
      "engine-native ingest",
      "ratio vs native",
      "ratio vs JSON.parse floor",
    ],
    rows,
    notes: [],
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "100000" },
      runs: { type: "string", default: "3" },
      engines: { type: "string", default: "duckdb,postgres" },
    },
  });
  printSection(
    await runLoadBenchmark({
      edgeEvents: Number(values.edge),
      runs: Number(values.runs),
      engines: values.engines!.split(",") as EngineName[],
      log: (m) => console.error(m),
    }),
  );
}
