import type { Backend } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, type RunningService, startService } from "@qes/server";
import type { BackendFixture, BackendHandle } from "../../support/backends.ts";
import { NOW } from "./events.ts";

export const TOKEN = "conformance-token-0123456789";

export interface ConformanceServer {
  url: string;
  backend: Backend;
  service: RunningService;
  close(): Promise<void>;
}

/**
 * A real qes server on a loopback port over one backend of test/support/backends.ts, with the
 * events loaded through the backend first and the clock pinned to `NOW` (QES_TEST_NOW).
 */
export async function startConformanceServer(
  fixture: BackendFixture,
  loads: Record<string, string[]>,
  env: Record<string, string> = {},
): Promise<ConformanceServer> {
  const handle: BackendHandle = await fixture.create();
  let service: RunningService | undefined;
  try {
    for (const [source, lines] of Object.entries(loads)) await handle.backend.load(source, lines);
    const config = loadConfig({
      NODE_ENV: "test",
      PORT: "0",
      QES_TEST_NOW: NOW,
      QES_API_KEYS: TOKEN,
      ...env,
    });
    service = await startService({
      config,
      backend: handle.backend,
      keys: parseApiKeys(config.apiKeys ?? ""),
      logger: createLogger({ destination: { write: () => undefined } }),
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

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** GET /api/endpoints/query/<endpoint> with the parameters (and consumer SQL) in the query string */
export async function queryEndpoint(
  server: ConformanceServer,
  endpoint: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${server.url}/api/endpoints/query/${encodeURIComponent(endpoint)}?${qs}`, {
    headers: { "X-API-KEY": TOKEN, "Content-Type": "application/json; charset=utf-8", ...headers },
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}
