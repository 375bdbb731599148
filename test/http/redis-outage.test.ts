import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { call, type HttpServer, type Reply, startHttpServer, TOKEN } from "./support/in-process.ts";
import { PrivateRedis } from "./support/private-redis.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { duckdbStore, type Store } from "./support/stores.ts";

/**
 * A private redis-server (DESIGN.md §9) killed in the middle of the test: qes keeps answering
 * from the backend (BYPASS), says so in /ready and /metrics, and caches again once Redis is back —
 * also when it starts while Redis is down.
 */
let redis: PrivateRedis;
let store: Store;
let server: HttpServer;
let late: HttpServer | undefined;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  store = await duckdbStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  server = await startHttpServer(store.backend, { QES_REDIS_URL: redis.url, QES_REDIS_PREFIX: "outage:" });
});
afterAll(async () => {
  await server?.close();
  await late?.close();
  await store?.dispose();
  await redis?.stop();
});

const PATH = "/api/endpoints/query/usage.api-counts?interval=daily&project=alpha";
const get = (on: HttpServer, path: string) => call(`${on.url}${path}`, { headers: { "X-API-KEY": TOKEN } });
const xcache = (r: Reply) => r.headers.get("x-cache");

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("Redis outage", () => {
  it("caches while Redis is up", async () => {
    expect(xcache(await get(server, PATH))).toBe("MISS");
    expect(xcache(await get(server, PATH))).toBe("HIT");
    expect((await get(server, "/ready")).body).toMatchObject({
      status: "ready",
      redis: "up",
      cache: "redis",
    });
    expect(metricSum(await scrape(server.url), "qes_redis_up")).toBe(1);
  });

  it("answers every request from the backend while Redis is dead, without waiting for it", async () => {
    const good = (await get(server, PATH)).text;
    await redis.kill();
    const started = Date.now();
    const replies: Reply[] = [];
    for (let i = 0; i < 10; i++) replies.push(await get(server, PATH));
    replies.push(...(await Promise.all(Array.from({ length: 10 }, () => get(server, PATH)))));
    // a dead Redis costs at most one failed command, never a hang
    expect(Date.now() - started).toBeLessThan(5000);
    for (const res of replies) {
      expect(res.status).toBe(200);
      expect(res.text).toBe(good);
    }
    expect(replies.slice(-15).every((r) => xcache(r) === "BYPASS")).toBe(true);
    const logs = await get(server, "/api/endpoints/query/logs.all?project=alpha");
    expect(logs.status).toBe(200);
    const ready = await get(server, "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: "ready", redis: "down" });
    const metrics = await scrape(server.url);
    expect(metricSum(metrics, "qes_redis_up")).toBe(0);
    expect(
      metricSum(metrics, "qes_cache_requests_total", { outcome: "BYPASS", endpoint: "usage.api-counts" }),
    ).toBeGreaterThanOrEqual(15);
  });

  it("starts while Redis is down and serves from the backend", async () => {
    late = await startHttpServer(store.backend, { QES_REDIS_URL: redis.url, QES_REDIS_PREFIX: "outage:" });
    const res = await get(late, PATH);
    expect(res.status).toBe(200);
    expect(xcache(res)).toBe("BYPASS");
    expect((await get(late, "/ready")).body.redis).toBe("down");
  });

  it("shuts down without waiting for the dead Redis", async () => {
    const doomed = await startHttpServer(store.backend, {
      QES_REDIS_URL: redis.url,
      QES_REDIS_PREFIX: "outage:",
    });
    expect((await get(doomed, PATH)).status).toBe(200);
    const started = Date.now();
    await doomed.close();
    // a graceful close waits for a running warm job; with Redis gone there is none to wait for
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("caches again once Redis is back (empty after its crash)", async () => {
    await redis.restart();
    for (const on of [server, late as HttpServer]) {
      await until("redis up in /ready", async () => (await get(on, "/ready")).body.redis === "up");
      expect(metricSum(await scrape(on.url), "qes_redis_up")).toBe(1);
    }
    expect(xcache(await get(server, PATH))).toBe("MISS");
    expect(xcache(await get(server, PATH))).toBe("HIT");
    // the instance that started without Redis shares the cache now
    expect(xcache(await get(late as HttpServer, PATH))).toBe("HIT");
    const logs = server.logs();
    expect(logs).toContain("redis connection lost");
    // a line written on behalf of a request names it
    for (const line of logs.split("\n").filter((l) => l.includes('"msg":"redis failed'))) {
      expect(JSON.parse(line).requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(logs.match(/"msg":"redis connected"/g)?.length).toBeGreaterThanOrEqual(2);
    // warming scheduled again on the new (empty) Redis
    await until(
      "warming rescheduled",
      async () => (server.logs().match(/"msg":"warming scheduled"/g)?.length ?? 0) >= 2,
    );
  });
});
