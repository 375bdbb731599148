import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { BACKEND_NAMES } from "../src/backend/backend-registry.ts";
import { loadConfig } from "../src/config.ts";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("./fixtures/open-backend-modules.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const dir = mkdtempSync(join(tmpdir(), "qes-registry-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens a backend in a fresh process and reports which engine libraries it loaded. */
async function modulesLoadedBy(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("QES_")));
  const { stdout } = await run(process.execPath, ["--import", TSX, SCRIPT], {
    env: { ...clean, ...env },
    cwd: dir,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("the backend registry", () => {
  it("knows the three backends by name and refuses another, naming QES_BACKEND", () => {
    expect(BACKEND_NAMES).toEqual(["duckdb", "postgres", "clickhouse"]);
    expect(() => loadConfig({ QES_BACKEND: "mysql" })).toThrow(
      /^QES_BACKEND: "mysql" is not one of duckdb, postgres, clickhouse/,
    );
  });

  it("parses only the chosen backend's variables, in its own package", () => {
    // a bad ClickHouse variable does not stop a DuckDB start, and stops a ClickHouse one
    expect(loadConfig({ QES_CLICKHOUSE_MAX_MEMORY: "lots" }).backend).toBe("duckdb");
    expect(() => loadConfig({ QES_BACKEND: "clickhouse", QES_CLICKHOUSE_MAX_MEMORY: "lots" })).toThrow(
      /^QES_CLICKHOUSE_MAX_MEMORY:/,
    );
    const c = loadConfig({
      QES_BACKEND: "clickhouse",
      QES_CLICKHOUSE_PATH: "/var/lib/qes.chdb",
      QES_CLICKHOUSE_MAX_MEMORY: "2GiB",
      QES_QUERY_TIMEOUT_MS: "5000",
      QES_RETENTION_DAYS: "14,postgres.logs=3",
    });
    expect(c.backendConfig).toEqual({
      path: "/var/lib/qes.chdb",
      maxMemoryBytes: 2 * 1024 ** 3,
      queryTimeoutMs: 5000,
      retention: { defaultDays: 14, perSource: { "postgres.logs": 3 } },
    });
  });

  it.concurrent("the DuckDB default loads neither ClickHouse's engine and client nor the PostgreSQL driver", async () => {
    const loaded = await modulesLoadedBy({
      QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
      QES_DUCKDB_THREADS: "1",
    });
    expect(loaded).toEqual({
      backend: "duckdb",
      libchdb: false,
      chdbModule: false,
      clickhouseClient: false,
      pg: false,
    });
  });

  it.concurrent("QES_BACKEND=clickhouse loads the embedded engine (the same check sees it when it is there)", async () => {
    const loaded = await modulesLoadedBy({
      QES_BACKEND: "clickhouse",
      QES_CLICKHOUSE_PATH: join(dir, "qes.chdb"),
    });
    expect(loaded).toMatchObject({
      backend: "clickhouse",
      libchdb: true,
      chdbModule: true,
      clickhouseClient: true,
      pg: false,
    });
  });
});
