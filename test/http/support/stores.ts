import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import {
  createPostgresBackend,
  dropPostgresStorage,
  type PostgresBackendConfig,
} from "@qes/backend-postgres";
import type { Backend } from "@qes/core";
import { BACKENDS, TEST_POSTGRES_URL } from "../../support/backends.ts";

export { TEST_POSTGRES_URL };

let counter = 0;
/** a name unique to this test process and call: schemas, Redis prefixes */
export const unique = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;

export interface Store {
  backend: Backend;
  /** PostgreSQL only: the schema, for `QES_POSTGRES_SCHEMA` of qes processes */
  schema?: string;
  dispose(): Promise<void>;
}

/** a PostgreSQL schema of its own, initialised and loaded; dispose drops schema and reader role */
export async function postgresStore(
  loads: Record<string, string[]>,
  url = TEST_POSTGRES_URL,
  extra: Partial<PostgresBackendConfig> = {},
): Promise<Store> {
  const schema = unique("qes_http");
  const backend = createPostgresBackend({ url, schema, pool: 4, ...extra });
  await backend.init();
  for (const [source, lines] of Object.entries(loads)) await backend.load(source, lines);
  return {
    backend,
    schema,
    async dispose() {
      await backend.close();
      await dropSchema(schema);
    },
  };
}

export async function dropSchema(schema: string): Promise<void> {
  await dropPostgresStorage(TEST_POSTGRES_URL, schema);
}

/** a DuckDB file in a temp dir, loaded */
export async function duckdbStore(loads: Record<string, string[]>): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "qes-http-"));
  const backend = createDuckdbBackend({ path: join(dir, "qes.duckdb"), memoryLimit: "256MB", threads: 1 });
  await backend.init();
  for (const [source, lines] of Object.entries(loads)) await backend.load(source, lines);
  return {
    backend,
    async dispose() {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Embedded ClickHouse (chDB), loaded: the shared suites' fixture (one chDB directory per test
 * process, a database of its own), so a file may open several alongside other suites' stores
 */
export async function clickhouseStore(loads: Record<string, string[]>): Promise<Store> {
  const fixture = BACKENDS.find((b) => b.name === "clickhouse");
  if (!fixture) throw new Error("no clickhouse fixture in BACKENDS");
  const handle = await fixture.create();
  try {
    for (const [source, lines] of Object.entries(loads)) await handle.backend.load(source, lines);
  } catch (e) {
    await handle.dispose();
    throw e;
  }
  return { backend: handle.backend, dispose: () => handle.dispose() };
}

/** a store of each backend, named, for `describe.each`: opened per file, loaded with `loads` */
export function everyStore(loads: Record<string, string[]>): [string, () => Promise<Store>][] {
  return [
    ["duckdb", () => duckdbStore(loads)],
    ["postgres", () => postgresStore(loads)],
    ["clickhouse", () => clickhouseStore(loads)],
  ];
}
