import { request as httpRequest } from "node:http";
import type { BackendFixture } from "../../support/backends.ts";
import { type ServedFixture, serveFixture } from "../../support/serve-fixture.ts";

export const TOKEN = "sandbox-token-0123456789abcdef";
export const NOW = "2025-01-15T12:00:00Z";

/** the project every request asks for */
export const PROJECT = "alpha";
/** an event of another project: consumer SQL that reaches the physical table would see it */
export const SECRET = "SECRET-of-project-beta";

function edge(id: string, timestamp: string, project: string, message: string, status: number): string {
  return JSON.stringify({
    id,
    timestamp,
    project,
    event_message: message,
    metadata: {
      request: { method: "GET", path: "/rest/v1/todos", headers: { x_real_ip: "203.0.113.7" } },
      response: { status_code: status },
    },
  });
}

/** a few edge events of `alpha` and one of `beta` whose message no alpha query may see */
export const SANDBOX_LOADS: Record<string, string[]> = {
  "cloudflare.logs.prod": [
    edge("a-1", "2025-01-15T11:59:00Z", PROJECT, "GET | 200 | /rest/v1/todos", 200),
    edge("a-2", "2025-01-15T11:58:00Z", PROJECT, "GET | 404 | /rest/v1/missing", 404),
    edge("a-3", "2025-01-15T11:00:00Z", PROJECT, "POST | 500 | /auth/v1/token", 500),
    edge("b-1", "2025-01-15T11:59:30Z", "beta", SECRET, 200),
  ],
  "postgres.logs": [
    JSON.stringify({
      id: "p-1",
      timestamp: "2025-01-15T11:30:00Z",
      project: PROJECT,
      event_message: "connection received",
      metadata: { parsed: { error_severity: "LOG" } },
    }),
  ],
};

export interface SandboxServer extends ServedFixture {
  /** `qes_backend_executed_queries` as /metrics publishes it */
  metricExecuted(): Promise<number>;
}

/**
 * A real qes server on a loopback port over one backend of test/support/backends.ts (DuckDB file
 * in a temp dir, PostgreSQL in a schema of its own), with the events above loaded through the
 * backend, the clock pinned and the result cache off, so every query that is not refused runs on
 * the backend exactly once. Refusals are not paced: these suites send hundreds of hostile queries
 * in a row from one token, which is what the pacing slows (it has tests of its own:
 * test/http/refusal-pacing.test.ts).
 */
export async function startSandboxServer(
  fixture: BackendFixture,
  env: Record<string, string> = {},
): Promise<SandboxServer> {
  const served = await serveFixture(fixture, SANDBOX_LOADS, {
    QES_TEST_NOW: NOW,
    QES_API_KEYS: TOKEN,
    QES_CACHE_MAX_ENTRIES: "0",
    QES_QUERY_TIMEOUT_MS: "10000",
    QES_REFUSALS_PER_SECOND: "0",
    ...env,
  });
  return {
    ...served,
    async metricExecuted() {
      const text = await (await fetch(`${served.url}/metrics`, { headers: { "X-API-KEY": TOKEN } })).text();
      const line = text.split("\n").find((l) => l.startsWith("qes_backend_executed_queries"));
      if (!line) throw new Error("/metrics has no qes_backend_executed_queries");
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    },
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** parsed JSON, or the text when the body is not JSON */
  body: any;
}

/**
 * One HTTP request with node:http (no client-side limits or rewriting: the raw body, any method,
 * any length of URL), answered with status, headers and the body parsed as JSON when it is.
 */
export function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: opts.method ?? "GET",
        headers: {
          "X-API-KEY": TOKEN,
          ...(opts.body !== undefined ? { "Content-Length": String(Buffer.byteLength(opts.body)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const ENDPOINT_PATH = "/api/endpoints/query/";

/** GET with every parameter in the query string */
export function getQuery(server: { url: string }, endpoint: string, params: Record<string, string>) {
  const qs = new URLSearchParams(params).toString();
  return send(`${server.url}${ENDPOINT_PATH}${encodeURIComponent(endpoint)}?${qs}`);
}

/** POST with a JSON body (and optionally some parameters in the query string) */
export function postQuery(
  server: { url: string },
  endpoint: string,
  body: unknown,
  opts: { query?: Record<string, string>; headers?: Record<string, string>; raw?: string } = {},
) {
  const qs = opts.query ? `?${new URLSearchParams(opts.query).toString()}` : "";
  return send(`${server.url}${ENDPOINT_PATH}${encodeURIComponent(endpoint)}${qs}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...opts.headers },
    body: opts.raw ?? JSON.stringify(body),
  });
}
