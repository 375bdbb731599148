import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import {
  call,
  HASHED_TOKEN,
  type HttpServer,
  type Reply,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { everyStore, postgresStore, type Store, unique } from "./support/stores.ts";

/**
 * Issue 12, admission control over real HTTP: one caller flooding the engine gets 429
 * too_many_requests with Retry-After while another caller's cheap query is admitted at once and
 * cache hits keep answering; QES_RATE_LIMIT_PER_MINUTE is one budget per caller across instances
 * sharing Redis. On PostgreSQL, a busy pool is never a 503 to the innocent caller.
 */
const LOADS = { "cloudflare.logs.prod": [...EDGE_EVENTS, ...FLOOD_EVENTS] };
const heavy = (i: number) =>
  `/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&sql=${encodeURIComponent(
    `select count(*) as n from requests a, requests b, requests c where length(a.path) + length(b.path) + length(c.path) > ${i}`,
  )}`;
const CHEAP = "/api/endpoints/query/logs.all?project=beta";
const HIT = "/api/endpoints/query/usage.api-counts?interval=daily&project=gamma";

const STORES = everyStore(LOADS);

describe.each(STORES)("a flood from one caller on %s", (_name, open) => {
  let store: Store;
  let server: HttpServer;
  beforeAll(async () => {
    store = await open();
    // the default QES_MAX_CONCURRENT_QUERIES (the engine's threads or pool) and per-caller 2
    server = await startHttpServer(store.backend, { QES_QUERY_TIMEOUT_MS: "20000" });
  });
  afterAll(async () => {
    await server?.close();
    await store?.dispose();
  });

  it("is refused with 429 + Retry-After beyond its share; others are admitted at once; hits still answer", async () => {
    const get = (path: string, token: string, signal?: AbortSignal) =>
      call(`${server.url}${path}`, { headers: { "X-API-KEY": token }, ...(signal ? { signal } : {}) });
    // the flooder's cache entry, stored before the flood
    expect((await get(HIT, TOKEN)).status).toBe(200);

    const stop = new AbortController();
    const flood = Array.from({ length: 12 }, (_, i) =>
      get(heavy(i), TOKEN, stop.signal).catch(() => undefined),
    );
    const refused = await Promise.race(
      flood.map(async (p) => {
        const r = await p;
        if (r?.status === 429) return r;
        return new Promise<Reply>(() => undefined);
      }),
    );
    try {
      expect(refused.body.error.code).toBe("too_many_requests");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

      // while the flood's queries hold the flooder's share, another caller is admitted at once: it
      // is answered while every query of the flood still runs (they end only at their 20 s
      // timeout, or when the flood is stopped below), not once one of them has ended. An order
      // of events, not a bound on wall time, which the shared machine running the tests decides
      let floodQueryEnded = false;
      for (const p of flood)
        void p.then((r) => {
          if (r !== undefined && r.status !== 429) floodQueryEnded = true;
        });
      for (let i = 0; i < 3; i++) {
        const cheap = await get(CHEAP, HASHED_TOKEN);
        expect(cheap.status, cheap.text).toBe(200);
        expect(floodQueryEnded).toBe(false);
      }
      // and the flooder's own cache hit is not held back
      const hit = await get(HIT, TOKEN);
      expect(hit.status).toBe(200);
      expect(hit.headers.get("x-cache")).toBe("HIT");
    } finally {
      stop.abort();
      await Promise.all(flood);
    }
    const statuses = (await Promise.all(flood)).filter((r) => r !== undefined).map((r) => r.status);
    // nothing but refusals among the answers: never a 503 or 504 for overload
    for (const s of statuses) expect(s).toBe(429);
  });
});

describe("QES_RATE_LIMIT_PER_MINUTE across instances sharing Redis", () => {
  let store: Store;
  let a: HttpServer;
  let b: HttpServer;
  const prefix = `${unique("qes_rate")}:`;
  beforeAll(async () => {
    store = await postgresStore(LOADS);
    const env = {
      QES_REDIS_URL: "redis://127.0.0.1:6379",
      QES_REDIS_PREFIX: prefix,
      QES_RATE_LIMIT_PER_MINUTE: "4",
    };
    a = await startHttpServer(store.backend, env);
    b = await startHttpServer(store.backend, env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.dispose();
    const redis = new Redis("redis://127.0.0.1:6379");
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  const get = (on: HttpServer, path: string, token: string) =>
    call(`${on.url}${path}`, { headers: { "X-API-KEY": token } });

  it("counts one budget per caller on every instance; other callers and cache hits are not counted", async () => {
    // a cache entry, stored by the other caller
    expect((await get(a, HIT, HASHED_TOKEN)).status).toBe(200);
    // four uncached queries of one caller, spread over both instances
    for (const on of [a, b, a, b]) expect((await get(on, CHEAP, TOKEN)).status).toBe(200);
    for (const on of [a, b]) {
      const refused = await get(on, CHEAP, TOKEN);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("too_many_requests");
      expect(refused.body.error.message).toContain("QES_RATE_LIMIT_PER_MINUTE");
      const wait = Number(refused.headers.get("retry-after"));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
    }
    // a cache hit needs no engine: not held back, not counted
    const hit = await get(b, HIT, TOKEN);
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    // the other caller has a budget of its own
    expect((await get(b, CHEAP, HASHED_TOKEN)).status).toBe(200);
  });
});
