import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Backend } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, type RunningService, startService } from "@qes/server";

export const TOKEN = "http-token-0123456789abcdef";
/** allowed usage.api-counts and pii.cached only */
export const SCOPED_TOKEN = "http-scoped-0123456789abcdef";
/** given to the server as its SHA-256 only */
export const HASHED_TOKEN = "http-hashed-0123456789abcdef";
export const JWT_SECRET = "http-jwt-secret-0123456789abcdef-0123456789";
export const FIXTURES = fileURLToPath(new URL("../fixtures/endpoints", import.meta.url));
export const TEST_NOW = "2025-01-15T12:00:00Z";

export interface HttpServer {
  url: string;
  service: RunningService;
  /** every log line written so far */
  logs(): string;
  close(): Promise<void>;
}

/**
 * A qes server in this process on real HTTP over loopback, on the given (real) backend; the
 * environment is the service's own configuration (QES_REDIS_URL, QES_REDIS_PREFIX, …).
 */
export async function startHttpServer(
  backend: Backend,
  env: Record<string, string> = {},
): Promise<HttpServer> {
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    QES_TEST_NOW: TEST_NOW,
    QES_ENDPOINTS_DIR: FIXTURES,
    QES_API_KEYS: apiKeys(),
    QES_JWT_SECRET: JWT_SECRET,
    ...env,
  });
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(s) } });
  const service = await startService({
    config,
    backend,
    keys: parseApiKeys(config.apiKeys ?? ""),
    logger,
  });
  return { url: service.url, service, logs: () => lines.join(""), close: () => service.close() };
}

/** `QES_API_KEYS`: the full token, the scoped one, the hashed one as `sha256=` */
export function apiKeys(): string {
  const hash = createHash("sha256").update(HASHED_TOKEN, "utf8").digest("hex");
  return `${TOKEN},${SCOPED_TOKEN}@usage.api-counts|pii.cached,sha256=${hash}`;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** fetch → status, headers, text and parsed JSON body (undefined when not JSON) */
export async function call(url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}
