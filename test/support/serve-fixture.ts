import type { Backend } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, type RunningService, startService } from "@qes/server";
import type { BackendFixture, BackendHandle } from "./backends.ts";

export interface ServedFixture {
  url: string;
  backend: Backend;
  service: RunningService;
  /** stops the server, then disposes of the backend (its file or schema) */
  close(): Promise<void>;
}

/**
 * A real qes server on a loopback port over a fresh backend of `fixture`, with `loads` loaded
 * through the backend first. `env` is the service's configuration (NODE_ENV and PORT are set
 * here). The logger is silent, or pushes each line (parsed) onto `logs`. The backend is disposed of
 * when start-up fails.
 */
export async function serveFixture(
  fixture: BackendFixture,
  loads: Record<string, Iterable<string>>,
  env: Record<string, string>,
  logs?: Record<string, unknown>[],
): Promise<ServedFixture> {
  const handle: BackendHandle = await fixture.create();
  let service: RunningService;
  try {
    for (const [source, lines] of Object.entries(loads)) await handle.backend.load(source, lines);
    const config = loadConfig({ NODE_ENV: "test", PORT: "0", ...env });
    service = await startService({
      config,
      backend: handle.backend,
      keys: parseApiKeys(config.apiKeys ?? ""),
      logger: createLogger({
        destination: { write: (line: string) => void logs?.push(JSON.parse(line)) },
      }),
      host: "127.0.0.1",
    });
  } catch (e) {
    await handle.dispose();
    throw e;
  }
  const running = service;
  return {
    url: running.url,
    backend: handle.backend,
    service: running,
    close: async () => {
      await running.close();
      await handle.dispose();
    },
  };
}
