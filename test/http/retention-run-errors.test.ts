import { createLogger, loadConfig, startService } from "@qes/server";
import { expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";

/**
 * `POST /api/retention` answers a failed run with its error status under QES_ERROR_FORMAT=legacy
 * too: the legacy format sends errors as 200, which `qes retention` (and whoever reads its log)
 * took for a run.
 */
it("a failed retention run is a 503 under the legacy error format, not a 200", async () => {
  const token = "qes_local_retention-run-errors-0123456789";
  const handle = await BACKENDS.find((b) => b.name === "duckdb")!.create();
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    QES_ERROR_FORMAT: "legacy",
    QES_RETENTION_DAYS: "7",
  });
  const service = await startService({
    config,
    backend: handle.backend,
    keys: [],
    logger: createLogger({ destination: { write: () => {} } }),
    host: "127.0.0.1",
    retentionToken: token,
  });
  try {
    const run = () =>
      fetch(`${service.url}/api/retention`, { method: "POST", headers: { "X-API-KEY": token } });
    expect((await run()).status).toBe(200);
    // the store is closed under the server: the run fails (backend_unavailable)
    await handle.backend.close();
    const failed = await run();
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe("backend_unavailable");
  } finally {
    await service.close();
    await handle.dispose();
  }
});
