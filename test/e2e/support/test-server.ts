import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDuckdbBackend, type DuckdbConfig } from "@qes/backend-duckdb";
import type { Backend } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, type RunningService, startService } from "@qes/server";
import type { BackendFixture } from "../../support/backends.ts";

export const TOKEN = "e2e-token-0123456789abcdef";
export const RESTRICTED_TOKEN = "e2e-restricted-0123456789";

export interface TestServer {
  url: string;
  service: RunningService;
  backend: Backend;
  /** every log line the server wrote so far */
  logs(): string;
  close(): Promise<void>;
}

/**
 * A real server over loopback HTTP, with events loaded through the backend first: on a fresh
 * store of `fixture` (one of the shared suites' BACKENDS), else on a real DuckDB file in a temp
 * dir configured from the environment as `qes serve` would be.
 */
export async function startTestServer(opts: {
  loads: Record<string, string[]>;
  env?: Record<string, string>;
  fixture?: BackendFixture;
}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "qes-e2e-"));
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_DUCKDB_MEMORY_LIMIT: "256MB",
    QES_DUCKDB_THREADS: "1",
    QES_TEST_NOW: "2025-01-15T12:00:00Z",
    QES_API_KEYS: `${TOKEN},${RESTRICTED_TOKEN}@usage.api-counts`,
    ...opts.env,
  });
  let backend: Backend;
  let disposeBackend: () => Promise<void>;
  if (opts.fixture) {
    const handle = await opts.fixture.create();
    backend = handle.backend;
    disposeBackend = () => handle.dispose();
  } else {
    const duckdb = createDuckdbBackend(config.backendConfig as DuckdbConfig);
    await duckdb.init();
    backend = duckdb;
    disposeBackend = () => duckdb.close();
  }
  for (const [source, lines] of Object.entries(opts.loads)) await backend.load(source, lines);
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (s: string) => void lines.push(s) } });
  let service: RunningService;
  try {
    service = await startService({
      config,
      backend,
      keys: parseApiKeys(config.apiKeys ?? ""),
      logger,
      host: "127.0.0.1",
    });
  } catch (e) {
    await disposeBackend();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    url: service.url,
    service,
    backend,
    logs: () => lines.join(""),
    close: async () => {
      await service.close();
      await disposeBackend();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
