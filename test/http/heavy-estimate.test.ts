import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import {
  dashboard,
  getAs as get,
  isCrossJoin,
  metricsOf,
  recordingBackend as recording,
} from "./support/heavy-queries.ts";
import { HASHED_TOKEN, startHttpServer, TOKEN } from "./support/in-process.ts";
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

describe("a consumer query PostgreSQL's planner expects to be heavy", () => {
  let store: Store;
  beforeAll(async () => {
    store = await postgresStore(LOADS, undefined, { heavyQueryCost: 1_000_000 });
  });
  afterAll(async () => {
    await store?.dispose();
  });

  it("from a caller with no history, waits while another caller uses the engine and is refused with 429; it never runs", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "3000" });
    let others: ReturnType<typeof dashboard> | undefined;
    try {
      // another caller's dashboard: one cheap query after another
      expect((await get(server, CHEAP, HASHED_TOKEN)).status).toBe(200);
      others = dashboard(server, CHEAP);
      const refused = await get(server, heavy(1), TOKEN);
      const statuses = await others.stop();
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body.error.code).toBe("too_many_requests");
      // it says which limit: the estimate, not the caller's share
      expect(refused.body.error.message).toMatch(/expects this query to be heavy/);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // the same caller's light consumer SQL is not held back by that
      const light = await get(server, LIGHT_SQL, TOKEN);
      expect(light.status, light.text).toBe(200);
      expect(ran.some(isCrossJoin)).toBe(false);
      expect(statuses.length).toBeGreaterThan(0);
      for (const status of statuses) expect(status).toBe(200);
      const metrics = await metricsOf(server);
      expect(metrics).toMatch(/qes_heavy_query_estimates_total\{service="qes"\} 1\b/);
      expect(metrics).toMatch(/qes_admission_refusals_total\{reason="heavy",service="qes"\} 1\b/);
    } finally {
      await others?.stop();
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
      for (let i = 0; i < 500 && !ran.some(isCrossJoin); i++) await new Promise((r) => setTimeout(r, 20));
      expect(ran.some(isCrossJoin)).toBe(true);
      gone.abort();
      await asked;
      // alone it is not even estimated: nothing would hold it back
      expect(await metricsOf(server)).toMatch(/qes_heavy_query_estimates_total\{service="qes"\} 0\b/);
    } finally {
      gone.abort();
      await server.close();
    }
  });

  it("asks for a plan only for consumer SQL: a stored query among others is never estimated", async () => {
    const estimated: string[] = [];
    const backend = new Proxy(store.backend, {
      get(target, prop) {
        if (prop === "estimateHeavy")
          return (...args: Parameters<NonNullable<typeof target.estimateHeavy>>) => {
            estimated.push(args[0].sql);
            return target.estimateHeavy?.(...args);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "20000" });
    const others = dashboard(server, CHEAP);
    try {
      expect((await get(server, CHEAP, HASHED_TOKEN)).status).toBe(200);
      // the stored queries, uncached (a parameter no one asked before), while the dashboard runs
      const stored = await get(
        server,
        "/api/endpoints/query/usage.api-counts?interval=hourly&project=delta",
        TOKEN,
      );
      expect(stored.status, stored.text).toBe(200);
      expect(estimated).toEqual([]);
      // the same caller's consumer SQL among the same others is estimated (and, light, answered)
      const light = await get(server, LIGHT_SQL, TOKEN);
      expect(light.status, light.text).toBe(200);
      expect(estimated.length).toBe(1);
    } finally {
      await others.stop();
      await server.close();
    }
  });
});
