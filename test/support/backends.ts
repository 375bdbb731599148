import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;

/** Every backend the endpoint and SQL tests run on: a new backend joins by adding one entry. */
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
];
