import type { Backend } from "@qes/core";
import { runSql } from "../../support/run-sql.ts";
import { signJwt } from "./jwt.ts";

export const QUERY_TOKEN = "ingest-test-query-0123456789";
export const INGEST_TOKEN = "ingest-test-ingest-0123456789";
/** may send events to `only.this` alone */
export const SCOPED_INGEST_TOKEN = "ingest-test-scoped-0123456789";
export const INGEST_JWT_SECRET = "ingest-jwt-secret-0123456789abcdef-0123456789";

/** the service configuration of the ingest tests */
export function ingestEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    QES_API_KEYS: QUERY_TOKEN,
    QES_INGEST_KEYS: `${INGEST_TOKEN},${SCOPED_INGEST_TOKEN}@only.this`,
    QES_JWT_SECRET: INGEST_JWT_SECRET,
    QES_TEST_NOW: "2025-01-15T12:00:00Z",
    ...extra,
  };
}

export function ingestJwt(scope: string): string {
  return signJwt({ scope, exp: Math.floor(Date.now() / 1000) + 600 }, "HS256", INGEST_JWT_SECRET);
}

export interface Posted {
  status: number;
  headers: Headers;
  body: any;
}

/** `POST /api/logs?source_name=…` (the query string is given whole when `source` is an object) */
export async function postLogs(
  url: string,
  source: string | { query: string },
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<Posted> {
  const query = typeof source === "string" ? `source_name=${encodeURIComponent(source)}` : source.query;
  const res = await fetch(`${url}/api/logs?${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-KEY": INGEST_TOKEN, ...headers },
    body,
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** the ids stored in a source, sorted (an unknown source holds none) */
export async function storedIds(backend: Backend, source: string): Promise<string[]> {
  const schema = await backend.schema();
  if (schema.sources[source] === undefined) return [];
  const rows = await runSql(backend, `select id from \`${source}\` order by id`);
  return rows.map((r) => String(r.id));
}

export const event = (id: string | undefined, message: string, extra: Record<string, unknown> = {}) => ({
  ...(id !== undefined ? { id } : {}),
  timestamp: "2025-01-15T11:00:00Z",
  event_message: message,
  ...extra,
});
