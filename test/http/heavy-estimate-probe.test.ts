import type { Backend, CompiledQuery } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import {
  call,
  HASHED_TOKEN,
  type HttpServer,
  SCOPED_TOKEN,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { postgresStore, type Store } from "./support/stores.ts";

/**
 * The planner's estimate at admission (issue 12) on PostgreSQL, as an attacker with one token
 * and as legitimate callers would meet it over HTTP.
 */
const LOADS = { "cloudflare.logs.prod": [...EDGE_EVENTS, ...FLOOD_EVENTS] };
const CROSS = "length(a.path) + length(b.path) + length(c.path)";
const consumer = (sql: string) =>
  `/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&sql=${encodeURIComponent(sql)}`;
const CHEAP = "/api/endpoints/query/logs.all?project=beta";
const isCross = (sql: string) => /length\(.*length\(.*length\(/s.test(sql);

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

const get = (server: HttpServer, path: string, token: string, signal?: AbortSignal) =>
  call(`${server.url}${path}`, { headers: { "X-API-KEY": token }, ...(signal ? { signal } : {}) });

/** another caller's dashboard: one cheap query after another until `stop()` */
function dashboard(server: HttpServer): { stop: () => Promise<number[]> } {
  let stopped = false;
  const statuses: number[] = [];
  const loop = (async () => {
    for (let i = 0; !stopped; i++)
      statuses.push(
        (await get(server, `${CHEAP}&iso_timestamp_start=2025-01-15T0${i % 10}:00:00Z`, HASHED_TOKEN)).status,
      );
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return statuses;
    },
  };
}

async function metricsOf(server: HttpServer): Promise<string> {
  return (await call(`${server.url}/metrics`, { headers: { "X-API-KEY": TOKEN } })).text;
}

describe("the planner's estimate at admission, probed", () => {
  let store: Store;
  beforeAll(async () => {
    store = await postgresStore(LOADS, undefined, { heavyQueryCost: 1_000_000 });
  });
  afterAll(async () => {
    await store?.dispose();
  });

  it("a cross join under LIMIT 1 whose filter never matches is heavy: the Limit node's cost is not the work", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "3000" });
    try {
      expect((await get(server, CHEAP, HASHED_TOKEN)).status).toBe(200);
      const others = dashboard(server);
      // the planner guesses a third of the rows pass, so the first comes almost at once
      const limited = await get(
        server,
        consumer(`select a.path from requests a, requests b, requests c where ${CROSS} < 0 limit 1`),
        TOKEN,
      );
      for (const s of await others.stop()) expect(s).toBe(200);
      expect(limited.status, limited.text).toBe(429);
      expect(ran.some(isCross)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
