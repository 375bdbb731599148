import { mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Backend } from "@qes/core";
import type { QesConfig } from "../config.ts";

/**
 * The backend chosen by `QES_BACKEND`, created and initialised (the nine sources exist
 * afterwards). Each backend package is imported only when chosen.
 */
export async function openBackend(config: QesConfig): Promise<Backend> {
  const backend = await createBackend(config);
  try {
    await backend.init();
  } catch (e) {
    await backend.close().catch(() => {});
    throw e;
  }
  return backend;
}

async function createBackend(config: QesConfig): Promise<Backend> {
  if (config.backend === "postgres") {
    const { createPostgresBackend } = await import("@qes/backend-postgres");
    return createPostgresBackend({
      url: config.postgres.url,
      schema: config.postgres.schema,
      pool: config.postgres.pool,
      statementTimeoutMs: config.queryTimeoutMs,
      ...(config.postgres.queryUrl !== undefined ? { queryUrl: config.postgres.queryUrl } : {}),
    });
  }
  const path = resolve(config.duckdb.path);
  await mkdir(dirname(path), { recursive: true });
  const { createDuckdbBackend } = await import("@qes/backend-duckdb");
  return createDuckdbBackend({
    path,
    memoryLimit: config.duckdb.memoryLimit,
    threads: config.duckdb.threads,
  });
}
