import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClickhouseBackend } from "@qes/backend-clickhouse";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import type { Backend } from "@qes/core";
import type { SeedSource } from "@qes/server";
import pg from "pg";
import { BENCH_DIR, readLines } from "./data.ts";

export const BENCH_POSTGRES_URL =
  process.env.QES_BENCH_POSTGRES_URL ??
  process.env.QES_TEST_POSTGRES_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

export interface BenchBackend {
  name: "duckdb" | "postgres" | "clickhouse";
  backend: Backend;
  /** the DuckDB file, the PostgreSQL schema, or the chDB directory */
  location: string;
  /** seconds the load took, or null when an earlier run's store was reused */
  loadSeconds: number | null;
  /** runs SQL on the engine directly, outside the backend (EXPLAIN, sizes) */
  raw(sql: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export type EngineName = BenchBackend["name"];

/**
 * A backend holding the given event files. Loaded stores are kept between runs (a DuckDB file,
 * a PostgreSQL schema named after the data) and reused when a marker says they hold exactly these
 * files; `fresh` drops and reloads them.
 */
export async function openLoadedBackend(
  engine: EngineName,
  files: Partial<Record<SeedSource, string>>,
  opts: { fresh?: boolean; onProgress?: (msg: string) => void } = {},
): Promise<BenchBackend> {
  const tag = Object.values(files)
    .map((p) => p!.replace(/^.*\//, "").replace(/\.ndjson$/, ""))
    .join("|");
  const key = hash(tag);
  mkdirSync(BENCH_DIR, { recursive: true });
  const marker = join(BENCH_DIR, `${engine}-${key}.loaded`);
  const reuse = !opts.fresh && existsSync(marker) && readFileSync(marker, "utf8") === tag;
  let backend: Backend;
  let raw: BenchBackend["raw"];
  let closeRaw = async (): Promise<void> => undefined;
  let location: string;
  if (engine === "duckdb") {
    const path = join(BENCH_DIR, `bench-${key}.duckdb`);
    location = path;
    if (!reuse) {
      rmSync(path, { force: true });
      rmSync(`${path}.wal`, { force: true });
    }
    backend = createDuckdbBackend({ path, memoryLimit: "4GB", threads: 2 });
    raw = async () => {
      throw new Error("raw SQL on DuckDB goes through a second connection: see executor.ts");
    };
  } else if (engine === "clickhouse") {
    // embedded chDB: one data directory per process, kept between runs like the DuckDB file
    const path = join(BENCH_DIR, `bench-${key}.chdb`);
    location = path;
    if (!reuse) rmSync(path, { recursive: true, force: true });
    backend = createClickhouseBackend({ path });
    raw = async () => {
      throw new Error("raw SQL on ClickHouse is not used by the benchmarks");
    };
  } else {
    const schema = `qes_bench_${key}`;
    location = schema;
    if (!reuse) await dropPostgresSchema(schema);
    backend = createPostgresBackend({ url: BENCH_POSTGRES_URL, schema, pool: 10 });
    const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
    await client.connect();
    await client.query(`set search_path to "${schema}"`);
    raw = async (sql) => (await client.query(sql)).rows;
    closeRaw = async () => {
      await client.end();
    };
  }
  await backend.init();
  let loadSeconds: number | null = null;
  if (!reuse) {
    rmSync(marker, { force: true });
    const started = performance.now();
    for (const [source, path] of Object.entries(files)) {
      opts.onProgress?.(`${engine}: loading ${path}`);
      await backend.load(source, readLines(path!));
    }
    loadSeconds = (performance.now() - started) / 1000;
    writeFileSync(marker, tag);
  }
  return {
    name: engine,
    backend,
    location,
    loadSeconds,
    raw,
    close: async () => {
      await closeRaw();
      await backend.close();
    },
  };
}

export async function dropPostgresSchema(schema: string): Promise<void> {
  await dropPostgresStorage(BENCH_POSTGRES_URL, schema);
}

function hash(s: string): string {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h.toString(36);
}
