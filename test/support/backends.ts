import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ClickhouseConfig, createClickhouseBackend } from "@qes/backend-clickhouse";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import type { Backend } from "@qes/core";

/** Shared PostgreSQL server of the test machine (scripts/ensure-services.sh starts it). */
export const TEST_POSTGRES_URL =
  process.env.QES_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface BackendHandle {
  backend: Backend;
  dispose(): Promise<void>;
}

export interface BackendFixture {
  name: string;
  /** a fresh, initialised, empty store isolated from every other test */
  create(): Promise<BackendHandle>;
}

/**
 * chDB binds one data directory per process: every ClickHouse fixture of a test process shares
 * this one, each in a database of its own; the directory goes when the process exits.
 */
const CHDB_TEST_PATH = join(tmpdir(), `qes-chdb-test-${process.pid}`);
let chdbCleanup = false;

let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;

/**
 * Every backend the shared suites (SQL cases, conformance, sandbox, HTTP) run on, in the README's
 * test command: a new backend joins by adding one entry.
 */
export const BACKENDS: BackendFixture[] = [
  {
    name: "duckdb",
    async create() {
      const dir = mkdtempSync(join(tmpdir(), "qes-test-"));
      const backend = createDuckdbBackend({ path: join(dir, "qes.duckdb") });
      await backend.init();
      return {
        backend,
        async dispose() {
          await backend.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "postgres",
    async create() {
      const schema = unique("qes_t");
      const backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 4 });
      await backend.init();
      return {
        backend,
        async dispose() {
          await backend.close();
          await dropPostgresStorage(TEST_POSTGRES_URL, schema);
        },
      };
    },
  },
  clickhouseFixture(),
];

/**
 * Embedded ClickHouse (chDB) in this process's test directory, a database of its own per store;
 * `config` adds settings (the backend's, as `clickhouseConfigFromEnv` reads them).
 */
export function clickhouseFixture(config: Omit<ClickhouseConfig, "path" | "database"> = {}): BackendFixture {
  return {
    name: "clickhouse",
    async create() {
      if (!chdbCleanup) {
        chdbCleanup = true;
        process.once("exit", () => rmSync(CHDB_TEST_PATH, { recursive: true, force: true }));
      }
      const backend = createClickhouseBackend({ ...config, path: CHDB_TEST_PATH, database: unique("qes_t") });
      await backend.init();
      return {
        backend,
        async dispose() {
          await backend.close();
        },
      };
    },
  };
}
