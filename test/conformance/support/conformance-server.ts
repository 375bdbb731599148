import type { BackendFixture } from "../../support/backends.ts";
import { type ServedFixture, serveFixture } from "../../support/serve-fixture.ts";
import { NOW } from "./events.ts";

export const TOKEN = "conformance-token-0123456789";

export type ConformanceServer = ServedFixture;

/**
 * A real qes server on a loopback port over one backend of test/support/backends.ts, with the
 * events loaded through the backend first and the clock pinned to `NOW` (QES_TEST_NOW).
 */
export function startConformanceServer(
  fixture: BackendFixture,
  loads: Record<string, string[]>,
  env: Record<string, string> = {},
): Promise<ConformanceServer> {
  return serveFixture(fixture, loads, { QES_TEST_NOW: NOW, QES_API_KEYS: TOKEN, ...env });
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
