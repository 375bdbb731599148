import { QesError } from "@qes/core";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { faultyBackend } from "./support/faulty-backend.ts";
import { call, type HttpServer, type Reply, startHttpServer, TOKEN } from "./support/in-process.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { postgresStore, type Store, unique } from "./support/stores.ts";

/**
 * The result cache over HTTP on PostgreSQL and the shared Redis (a prefix of its own): MISS then
 * HIT with the same bytes and an Age, a key built from the declared parameters only, BYPASS where
 * the endpoint does not cache, one backend query for identical concurrent misses, errors never
 * cached.
 */
const PREFIX = `${unique("qes_cache")}:`;
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";
let store: Store;
let faulty: ReturnType<typeof faultyBackend>;
let server: HttpServer;
let redis: Redis;

beforeAll(async () => {
  store = await postgresStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  faulty = faultyBackend(store.backend);
  server = await startHttpServer(faulty.backend, {
    QES_REDIS_URL: "redis://127.0.0.1:6379",
    QES_REDIS_PREFIX: PREFIX,
  });
  redis = new Redis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  await server?.close();
  await store?.dispose();
  if (redis) {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
});

const get = (path: string, headers: Record<string, string> = {}) =>
  call(`${server.url}${path}`, { headers: { "X-API-KEY": TOKEN, ...headers } });
const cacheKeys = async () =>
  (await redis.keys(`${PREFIX}cache:*`)).filter((k) => !k.endsWith(":lock")).length;
const backendQueries = async () =>
  metricSum(await scrape(server.url), "qes_backend_queries_total", { origin: "request" });
const xcache = (r: Reply) => r.headers.get("x-cache");

describe("the result cache", () => {
  it("answers a MISS, then a HIT with the same bytes, an Age, and no backend query", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=alpha";
    const queries = await backendQueries();
    const miss = await get(path);
    expect(miss.status).toBe(200);
    expect(xcache(miss)).toBe("MISS");
    expect(miss.headers.get("age")).toBe("0");
    expect(miss.body.result.length).toBeGreaterThan(0);
    expect(await backendQueries()).toBe(queries + 1);
    const hit = await get(path);
    expect(xcache(hit)).toBe("HIT");
    expect(hit.text).toBe(miss.text);
    expect(hit.headers.get("content-type")).toBe("application/json; charset=utf-8");
    await new Promise((r) => setTimeout(r, 1100));
    const older = await get(path);
    expect(xcache(older)).toBe("HIT");
    expect(Number(older.headers.get("age"))).toBeGreaterThanOrEqual(1);
    expect(await backendQueries()).toBe(queries + 1);
    // stored with the endpoint's lifetime (900 s)
    const [key] = await redis.keys(`${PREFIX}cache:${USAGE_ID}:*`);
    const ttl = await redis.pttl(key as string);
    expect(ttl).toBeGreaterThan(890_000);
    expect(ttl).toBeLessThanOrEqual(900_000);
  });

  it("keys on declared parameters only: unknown ones, order, repeats, the token, UUID or name, GET or POST make no new key", async () => {
    const base = "/api/endpoints/query/usage.api-counts?interval=hourly&project=beta";
    expect(xcache(await get(base))).toBe("MISS");
    const keys = await cacheKeys();
    const queries = await backendQueries();
    const variants = [
      `${base}&utm_source=x&cache_buster=${Date.now()}`,
      "/api/endpoints/query/usage.api-counts?project=beta&interval=hourly",
      `${base}&project=beta`,
      `${base}&api_key=${TOKEN}`,
      `/api/endpoints/query/${USAGE_ID}?interval=hourly&project=beta`,
    ];
    for (const path of variants) {
      const res = await get(path);
      expect(xcache(res), path).toBe("HIT");
    }
    const ignored = await get(`${base}&zzz=1&aaa=2`);
    expect(ignored.headers.get("qes-ignored-params")).toBe("aaa, zzz");
    const posted = await call(`${server.url}/api/endpoints/query/usage.api-counts`, {
      method: "POST",
      headers: { "X-API-KEY": TOKEN, "Content-Type": "application/json" },
      body: JSON.stringify({ interval: "hourly", project: "beta", unknown: "x" }),
    });
    expect(xcache(posted)).toBe("HIT");
    expect(await cacheKeys()).toBe(keys);
    expect(await backendQueries()).toBe(queries);
  });

  it("keys on normalised values: an integer written two ways and its default are one key", async () => {
    expect(xcache(await get("/api/endpoints/query/counts.short?pattern=alpha&limit=010"))).toBe("MISS");
    expect(xcache(await get("/api/endpoints/query/counts.short?pattern=alpha&limit=10"))).toBe("HIT");
    expect(xcache(await get("/api/endpoints/query/counts.short?pattern=alpha"))).toBe("HIT");
    expect(xcache(await get("/api/endpoints/query/counts.short?pattern=alpha&limit=11"))).toBe("MISS");
  });

  it("makes a new key for another declared value, consumer SQL or redaction", async () => {
    const base = "/api/endpoints/query/usage.api-counts?interval=minutely&project=gamma";
    expect(xcache(await get(base))).toBe("MISS");
    expect(xcache(await get(base.replace("gamma", "delta")))).toBe("MISS");
    const sql = encodeURIComponent("select count(*) as n from requests");
    const withSql = await get(`${base}&sql=${sql}`);
    expect(withSql.status).toBe(200);
    expect(xcache(withSql)).toBe("MISS");
    expect(xcache(await get(`${base}&sql=${sql}`))).toBe("HIT");
    expect(xcache(await get(base, { "QES-ENDPOINT-REDACT-PII": "true" }))).toBe("MISS");
    expect(xcache(await get(base, { "QES-ENDPOINT-REDACT-PII": "true" }))).toBe("HIT");
  });

  it("answers BYPASS without Age where the endpoint does not cache (logs.all), querying every time", async () => {
    const queries = await backendQueries();
    for (let i = 0; i < 3; i++) {
      const res = await get("/api/endpoints/query/logs.all?project=alpha");
      expect(xcache(res)).toBe("BYPASS");
      expect(res.headers.get("age")).toBeNull();
    }
    expect(await backendQueries()).toBe(queries + 3);
  });

  it("runs one backend query for 40 identical concurrent misses in one process", async () => {
    const queries = await backendQueries();
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=beta";
    const replies = await Promise.all(Array.from({ length: 40 }, () => get(path)));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(await backendQueries()).toBe(queries + 1);
    // the first ran the query; the rest waited for it or, arriving later, hit what it stored
    expect(replies.filter((r) => xcache(r) === "MISS" || xcache(r) === "HIT")).toHaveLength(40);
    const metrics = await scrape(server.url);
    expect(metricSum(metrics, "qes_cache_coalesced_total", { scope: "process" })).toBeGreaterThanOrEqual(1);
  });

  it("never caches an error: the failed request's successor runs the query", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=delta";
    faulty.failWith(new QesError("backend_unavailable", "PostgreSQL is unavailable"));
    try {
      const failed = await Promise.all([get(path), get(path), get(path)]);
      for (const res of failed) expect(res.status).toBe(503);
    } finally {
      faulty.failWith(undefined);
    }
    const next = await get(path);
    expect(next.status).toBe(200);
    expect(xcache(next)).toBe("MISS");
    expect(xcache(await get(path))).toBe("HIT");
  });

  it("runs the query itself when another instance took the lock and died without a value", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=hourly&project=alpha";
    const first = await get(path);
    expect(xcache(first)).toBe("MISS");
    // the key of this request: the one holding its bytes (after the 9-byte entry header)
    const keys = (await redis.keys(`${PREFIX}cache:${USAGE_ID}:*`)).filter((k) => !k.endsWith(":lock"));
    const values = await Promise.all(keys.map((k) => redis.getBuffer(k)));
    const mine = keys.filter((_, i) => values[i]?.subarray(9).toString() === first.text);
    expect(mine).toHaveLength(1);
    await redis.del(mine[0] as string);
    const queries = await backendQueries();
    // before the lock is set: the lock lapses 1.5 s after this at the earliest
    const started = Date.now();
    // a holder that took the lock and died: no heartbeat, the lock lapses after 1.5 s
    await redis.set(`${mine[0]}:lock`, "dead-instance", "PX", 1500);
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(xcache(res)).toBe("MISS");
    expect(res.text).toBe(first.text);
    // it waited for the lock to lapse, then ran the query once
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await backendQueries()).toBe(queries + 1);
    expect(xcache(await get(path))).toBe("HIT");
  });

  it("keeps at most QES_WARM_MAX_KEYS keys warm per endpoint, the most recently requested", async () => {
    const prefix = `${unique("qes_warmmax")}:`;
    const bounded = await startHttpServer(faulty.backend, {
      QES_REDIS_URL: "redis://127.0.0.1:6379",
      QES_REDIS_PREFIX: prefix,
      QES_WARM_MAX_KEYS: "2",
    });
    try {
      for (const p of ["one", "two", "three"]) {
        const res = await call(`${bounded.url}/api/endpoints/query/counts.short?pattern=${p}`, {
          headers: { "X-API-KEY": TOKEN },
        });
        expect(res.status).toBe(200);
        await new Promise((r) => setTimeout(r, 20));
      }
      // each request is noted in Redis without waiting (fire and forget), in order on one
      // connection: once the last one's note is there, every note is
      const members = async () => {
        const [set] = await redis.keys(`${prefix}warm:*`);
        return set === undefined ? [] : (await redis.zrange(set, 0, -1)).map((m) => JSON.parse(m)[0].pattern);
      };
      let noted = await members();
      while (!noted.includes("three")) {
        await new Promise((r) => setTimeout(r, 20));
        noted = await members();
      }
      expect(noted).toHaveLength(2);
      expect(noted).toEqual(["two", "three"]);
    } finally {
      await bounded.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  });

  it("counts hits, misses and bypasses per endpoint in /metrics", async () => {
    const metrics = await scrape(server.url);
    expect(
      metricSum(metrics, "qes_cache_requests_total", { endpoint: "usage.api-counts", outcome: "HIT" }),
    ).toBeGreaterThan(5);
    expect(
      metricSum(metrics, "qes_cache_requests_total", { endpoint: "usage.api-counts", outcome: "MISS" }),
    ).toBeGreaterThan(3);
    expect(metricSum(metrics, "qes_cache_requests_total", { endpoint: "logs.all", outcome: "BYPASS" })).toBe(
      3,
    );
    expect(metricSum(metrics, "qes_redis_up")).toBe(1);
    expect(
      metricSum(metrics, "qes_http_request_duration_seconds_count", {
        endpoint: "usage.api-counts",
        backend: "postgres",
        cache: "HIT",
      }),
    ).toBeGreaterThan(5);
    expect(
      metricSum(metrics, "qes_query_duration_seconds_count", {
        endpoint: "usage.api-counts",
        backend: "postgres",
      }),
    ).toBeGreaterThan(3);
  });
});
