import type { IncomingMessage, ServerResponse } from "node:http";
import type { EndpointDefinition } from "@qes/core";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../src/cache/memory-store.ts";
import { ResultCache } from "../src/cache/result-cache.ts";
import { CacheHitPath } from "../src/http/cache-hit-path.ts";
import { Metrics } from "../src/observability/metrics.ts";

/**
 * The hit path's memo on its own (the HTTP behaviour is in test/http/cache-hit-path.test.ts):
 * bounded in routes and in characters, oldest out first, and a forgotten route falls through.
 */
const endpoint = { id: "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63", name: "usage.api-counts", version: "v1" };
const rawHeaders = ["Host", "127.0.0.1", "X-API-KEY", "memo-token-0123456789abcdef"];

function setup(maxRoutes: number) {
  const logger = pino({ level: "silent" });
  const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
  const store = new MemoryStore(100);
  const cache = new ResultCache({ store, metrics, logger, peerWaitMs: 1000 });
  const hits = new CacheHitPath({
    cache,
    trackWarmKey: () => undefined,
    logger,
    metrics,
    backendName: "duckdb",
    corsOrigins: [],
    maxRoutes,
  });
  const remember = (url: string, key: string) => {
    store.set(
      key,
      { body: Buffer.from(`{"result":["${key}"]}`), storedAtMs: Date.now(), rowLimitReached: false },
      60_000,
    );
    hits.remember(
      { method: "GET", originalUrl: url, rawHeaders },
      {
        endpoint: endpoint as unknown as EndpointDefinition,
        principal: { caller: "key:test" },
        key,
        spec: "[]",
        ignored: [],
        urlHasToken: false,
      },
    );
  };
  /** what a request for `url` gets: the body the hit path sent, or "next" when it fell through */
  const ask = (url: string): string => {
    let sent = "next";
    const res = {
      headersSent: false,
      writeHead: () => undefined,
      end: (body: Buffer) => {
        sent = body.toString();
      },
    } as unknown as ServerResponse;
    hits.before(() => undefined)(
      { method: "GET", url, rawHeaders, headers: {} } as unknown as IncomingMessage,
      res,
    );
    return sent;
  };
  return { hits, remember, ask };
}

const url = (n: number) => `/api/endpoints/query/usage.api-counts?interval=hourly&project=p${n}`;

describe("the cache-hit path's memo", () => {
  it("keeps at most maxRoutes requests, dropping the oldest", () => {
    const { hits, remember, ask } = setup(2);
    remember(url(1), "k1");
    remember(url(2), "k2");
    expect(ask(url(1))).toContain("k1");
    remember(url(3), "k3");
    expect(hits.size).toBe(2);
    expect(ask(url(1))).toBe("next");
    expect(ask(url(2))).toContain("k2");
    expect(ask(url(3))).toContain("k3");
  });

  it("bounds the characters it holds, whatever the count", () => {
    const { hits, remember, ask } = setup(10_000);
    // consumer SQL makes URLs long: two of 9M characters do not both fit under 16M
    const long = (n: number) => `${url(n)}&sql=${"x".repeat(9_000_000)}`;
    remember(long(1), "k1");
    remember(long(2), "k2");
    expect(hits.size).toBe(1);
    expect(ask(long(1))).toBe("next");
    expect(ask(long(2))).toContain("k2");
  });

  it("answers the same request again under a new key, and only under it", () => {
    const { hits, remember, ask } = setup(10);
    remember(url(1), "k1");
    remember(url(1), "k1b");
    expect(hits.size).toBe(1);
    expect(ask(url(1))).toContain("k1b");
  });
});
