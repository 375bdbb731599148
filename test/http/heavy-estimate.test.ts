import type { Backend, CompiledQuery } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import { call, HASHED_TOKEN, type HttpServer, startHttpServer, TOKEN } from "./support/in-process.ts";
import { postgresStore, type Store } from "./support/stores.ts";

/**
 * Issue 12 on PostgreSQL: a caller's first expensive queries used to be admitted at its share
 * before it had any engine time on record, and each took a core until the query timeout while
 * others waited (the soak's tail, docs/benchmarks.md). The planner's estimate is asked once a slot
 * is held: a consumer query it expects to be heavy waits while another caller uses the engine,
 * and is refused with 429 when that lasts; alone, it runs.
 */
const LOADS = { "cloudflare.logs.prod": [...EDGE_EVENTS, ...FLOOD_EVENTS] };
const CROSS = "length(a.path) + length(b.path) + length(c.path)";
const heavy = (i: number) =>
  `/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&sql=${encodeURIComponent(
    `select count(*) as n from requests a, requests b, requests c where ${CROSS} > ${i}`,
  )}`;
const LIGHT_SQL = `/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&sql=${encodeURIComponent(
  "select count(*) as n from requests",
)}`;
const CHEAP = "/api/endpoints/query/logs.all?project=beta";

/** the backend, with the SQL of every query it was asked to run */
function recording(backend: Backend): { backend: Backend; ran: string[] } {
  const ran: string[] = [];
  const proxy = new Proxy(backend, {
    get(target, prop) {
      if (prop === "execute")
        return (q: CompiledQuery, ...rest: [never, never]) => {
          ran.push(q.sql);
          return target.execute(q, ...rest);
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { backend: proxy, ran };
}

describe("a consumer query PostgreSQL's planner expects to be heavy", () => {
  let store: Store;
  beforeAll(async () => {
    store = await postgresStore(LOADS, undefined, { heavyQueryCost: 1_000_000 });
  });
  afterAll(async () => {
    await store?.dispose();
  });

  const get = (server: HttpServer, path: string, token: string, signal?: AbortSignal) =>
    call(`${server.url}${path}`, { headers: { "X-API-KEY": token }, ...(signal ? { signal } : {}) });

  it("from a caller with no history, waits while another caller uses the engine and is refused with 429; it never runs", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "3000" });
    const stop = { now: false };
    const others: number[] = [];
    try {
      // another caller's dashboard: one cheap query after another
      expect((await get(server, CHEAP, HASHED_TOKEN)).status).toBe(200);
      const dashboard = (async () => {
        for (let i = 0; !stop.now; i++)
          others.push(
            (await get(server, `${CHEAP}&iso_timestamp_start=2025-01-15T0${i % 10}:00:00Z`, HASHED_TOKEN))
              .status,
          );
      })();
      const refused = await get(server, heavy(1), TOKEN);
      stop.now = true;
      await dashboard;
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body.error.code).toBe("too_many_requests");
      // it says which limit: the estimate, not the caller's share
      expect(refused.body.error.message).toMatch(/expects this query to be heavy/);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // the same caller's light consumer SQL is not held back by that
      const light = await get(server, LIGHT_SQL, TOKEN);
      expect(light.status, light.text).toBe(200);
      expect(
        ran.some(
          (sql) =>
            sql.includes("requests") && sql.includes(" b") && /length\(.*length\(.*length\(/s.test(sql),
        ),
      ).toBe(false);
      expect(others.length).toBeGreaterThan(0);
      for (const s of others) expect(s).toBe(200);
      const metrics = (await call(`${server.url}/metrics`, { headers: { "X-API-KEY": TOKEN } })).text;
      expect(metrics).toMatch(/qes_heavy_query_estimates_total\{service="qes"\} 1\b/);
      expect(metrics).toMatch(/qes_admission_refusals_total\{reason="heavy",service="qes"\} 1\b/);
    } finally {
      stop.now = true;
      await server.close();
    }
  });

  it("alone, runs without an estimate (the engine is its caller's when nobody else wants it)", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "20000" });
    const gone = new AbortController();
    try {
      const asked = get(server, heavy(2), TOKEN, gone.signal).catch(() => undefined);
      // admitted and sent to the engine: then the client leaves (the engine stops it)
      for (let i = 0; i < 500 && !ran.some((sql) => /length\(.*length\(.*length\(/s.test(sql)); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(ran.some((sql) => /length\(.*length\(.*length\(/s.test(sql))).toBe(true);
      gone.abort();
      await asked;
      // alone it is not even estimated: nothing would hold it back
      expect((await call(`${server.url}/metrics`, { headers: { "X-API-KEY": TOKEN } })).text).toMatch(
        /qes_heavy_query_estimates_total\{service="qes"\} 0\b/,
      );
    } finally {
      gone.abort();
      await server.close();
    }
  });
});
