import type { CompiledQuery } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_POSTGRES_URL } from "../support/backends.ts";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import {
  dashboard as dashboardOf,
  getAs as get,
  isCrossJoin as isCross,
  metricsOf,
  recordingBackend as recording,
} from "./support/heavy-queries.ts";
import { call, HASHED_TOKEN, SCOPED_TOKEN, startHttpServer, TOKEN } from "./support/in-process.ts";
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
      const others = dashboardOf(server, CHEAP);
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
  it("two callers' heavy queries, refused a start while a dashboard ran, do not hold each other back once it stops", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "8000" });
    const gone = new AbortController();
    try {
      expect((await get(server, CHEAP, HASHED_TOKEN)).status).toBe(200);
      const others = dashboardOf(server, CHEAP);
      const asks = [TOKEN, SCOPED_TOKEN].map((token, i) =>
        get(
          server,
          consumer(`select count(*) as n from requests a, requests b, requests c where ${CROSS} > ${10 + i}`),
          token,
          gone.signal,
        ).catch(() => undefined),
      );
      // both estimated heavy and waiting: then the dashboard is done
      for (
        let i = 0;
        i < 500 && !/qes_heavy_query_estimates_total\{service="qes"\} 2\b/.test(await metricsOf(server));
        i++
      )
        await new Promise((r) => setTimeout(r, 20));
      expect(await metricsOf(server)).toMatch(/qes_heavy_query_estimates_total\{service="qes"\} 2\b/);
      expect(ran.some(isCross)).toBe(false);
      for (const s of await others.stop()) expect(s).toBe(200);
      // the engine is theirs: one of them starts (each used to wait for the other until both were refused)
      const settled = Promise.all(asks);
      let done = false;
      void settled.then(() => {
        done = true;
      });
      while (!done && !ran.some(isCross)) await new Promise((r) => setTimeout(r, 20));
      expect(ran.filter(isCross)).toHaveLength(1);
      // while the other still waits, not once it was refused at the end of its wait
      expect(await metricsOf(server)).not.toMatch(
        /qes_admission_refusals_total\{reason="heavy",service="qes"\} [1-9]/,
      );
      gone.abort();
      await settled;
    } finally {
      gone.abort();
      await server.close();
    }
  });

  it("a client gone while its query is estimated leaves no slot or connection behind", async () => {
    let estimating: () => void = () => undefined;
    const started = new Promise<void>((r) => {
      estimating = r;
    });
    // the estimate is held until the request is gone, then asked of the engine with its signal
    const held = new Proxy(store.backend, {
      get(target, prop) {
        if (prop === "estimateHeavy")
          return (q: CompiledQuery, values: never, opts: { signal?: AbortSignal; timeoutMs: number }) => {
            if (!isCross(q.sql)) return target.estimateHeavy?.(q, values, opts);
            estimating();
            return new Promise((resolve, reject) => {
              opts.signal?.addEventListener("abort", () =>
                target.estimateHeavy?.(q, values, opts).then(resolve, reject),
              );
            });
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { backend, ran } = recording(held);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "3000" });
    const gone = new AbortController();
    try {
      const others = dashboardOf(server, CHEAP);
      while (ran.length === 0) await new Promise((r) => setTimeout(r, 10));
      const asked = get(
        server,
        consumer(`select count(*) as n from requests a, requests b, requests c where ${CROSS} > 3`),
        TOKEN,
        gone.signal,
      ).catch((e: unknown) => e);
      await started;
      gone.abort();
      expect(await asked).toBeInstanceOf(Error);
      for (const s of await others.stop()) expect(s).toBe(200);
      // its slot is free again: the same caller runs a query at once, and nothing is left running
      const light = await get(server, consumer("select count(*) as n from requests"), TOKEN);
      expect(light.status, light.text).toBe(200);
      expect(await metricsOf(server)).toMatch(/qes_running_queries\{service="qes"\} 0\b/);
      expect(ran.some(isCross)).toBe(false);
    } finally {
      gone.abort();
      await server.close();
    }
  });

  it("consumer SQL that fails while planning, among others, is the user's 422 (the estimate says nothing)", async () => {
    const { backend } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "3000" });
    try {
      const others = dashboardOf(server, CHEAP);
      const failing = await get(server, consumer("select 1 / 0 as n from requests"), TOKEN);
      for (const s of await others.stop()) expect(s).toBe(200);
      expect(failing.status, failing.text).toBe(422);
      expect(failing.body.error.code).toBe("sql_invalid");
    } finally {
      await server.close();
    }
  });
  it("consumer SQL whose planning alone outlasts the time limit, among others, is a 504 and is not planned again to run", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "1000" });
    // eight-way joins, each planned on its own: seconds of planning within the token limit
    const branch = (i: number) => {
      const t = "abcdefgh".split("").map((x) => `${x}${i}`);
      const on = t.slice(1).map((x, j) => `${t[j]}.path = ${x}.path`);
      return `select count(*) as n from ${t.map((x) => `requests ${x}`).join(", ")} where ${on.join(" and ")}`;
    };
    const union = Array.from({ length: 150 }, (_, i) => branch(i)).join(" union all ");
    try {
      const others = dashboardOf(server, CHEAP);
      while (ran.length === 0) await new Promise((r) => setTimeout(r, 10));
      // too long for a request line: posted
      const planned = await call(`${server.url}/api/endpoints/query/usage.api-counts`, {
        method: "POST",
        headers: { "X-API-KEY": TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ interval: "daily", project: "alpha", sql: union }),
      });
      for (const s of await others.stop()) expect(s).toBe(200);
      expect(planned.status, planned.text).toBe(504);
      expect(planned.body.error.code).toBe("query_timeout");
      expect(ran.some((sql) => /union all/i.test(sql))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

/** EXPLAIN statements the engine is working on now, in the test database */
async function explaining(): Promise<number> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const r = await client.query(
      "select count(*)::int as n from pg_stat_activity where state = 'active' and query ilike 'explain%'",
    );
    return (r.rows[0] as { n: number }).n;
  } finally {
    await client.end();
  }
}

describe("a client gone while the engine plans its query", () => {
  let store: Store;
  beforeAll(async () => {
    store = await postgresStore(LOADS, undefined, { heavyQueryCost: 1_000_000 });
  });
  afterAll(async () => {
    await store?.dispose();
  });

  it("stops the EXPLAIN in the engine before its slot is given back", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "60000" });
    // eleven-way joins: about half a second of planning each, tens of seconds in all
    const branch = (i: number) => {
      const t = "abcdefghijk".split("").map((x) => `${x}${i}`);
      const on = t.slice(1).map((x, j) => `${t[j]}.path = ${x}.path`);
      return `select count(*) as n from ${t.map((x) => `requests ${x}`).join(", ")} where ${on.join(" and ")}`;
    };
    const gone = new AbortController();
    try {
      const others = dashboardOf(server, CHEAP);
      while (ran.length === 0) await new Promise((r) => setTimeout(r, 10));
      const asked = call(`${server.url}/api/endpoints/query/usage.api-counts`, {
        method: "POST",
        headers: { "X-API-KEY": TOKEN, "content-type": "application/json" },
        body: JSON.stringify({
          interval: "daily",
          project: "alpha",
          sql: Array.from({ length: 60 }, (_, i) => branch(i)).join(" union all "),
        }),
        signal: gone.signal,
      }).catch((e: unknown) => e);
      while ((await explaining()) === 0) await new Promise((r) => setTimeout(r, 20));
      for (const s of await others.stop()) expect(s).toBe(200);
      gone.abort();
      expect(await asked).toBeInstanceOf(Error);
      while (!/qes_running_queries\{service="qes"\} 0\b/.test(await metricsOf(server)))
        await new Promise((r) => setTimeout(r, 20));
      expect(await explaining()).toBe(0);
      expect(ran.some((sql) => /union all/i.test(sql))).toBe(false);
    } finally {
      gone.abort();
      await server.close();
    }
  });
});

describe("a consumer query the planner expects to be heavy that is done in a moment", () => {
  let store: Store;
  beforeAll(async () => {
    // a two-way cross join of the events counts as heavy here: it is done in a moment, so it is
    // answered, cached and noted for warming like any consumer query that worked
    store = await postgresStore(LOADS, undefined, { heavyQueryCost: 5_000 });
  });
  afterAll(async () => {
    await store?.dispose();
  });

  it("is not refreshed while others use the engine: warming is no way around the estimate", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_WARM_INTERVAL_SCALE: "1000" });
    const twoWay = (sql: string) => /length\(.*length\(/s.test(sql) && !isCross(sql);
    try {
      // alone: it runs, is cached, and its key is warmed for this caller
      const alone = await get(
        server,
        consumer(
          "select count(*) as n from requests a, requests b where length(a.path) + length(b.path) > 1",
        ),
        TOKEN,
      );
      expect(alone.status, alone.text).toBe(200);
      expect(ran.filter(twoWay)).toHaveLength(1);
      const others = dashboardOf(server, CHEAP);
      while (ran.length < 3) await new Promise((r) => setTimeout(r, 10));
      await server.service.warm("usage.api-counts");
      for (const s of await others.stop()) expect(s).toBe(200);
      expect(ran.filter(twoWay)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("asked by two callers at once among others, runs once for both when the others are done, refused to neither", async () => {
    const { backend, ran } = recording(store.backend);
    const server = await startHttpServer(backend, { QES_QUERY_TIMEOUT_MS: "8000" });
    const twoWay = (sql: string) => /length\(.*length\(/s.test(sql) && !isCross(sql);
    const sql = "select count(*) as n from requests a, requests b where length(a.path) + length(b.path) > 2";
    try {
      const others = dashboardOf(server, CHEAP);
      while (ran.length === 0) await new Promise((r) => setTimeout(r, 10));
      const asks = [TOKEN, SCOPED_TOKEN].map((token) => get(server, consumer(sql), token));
      // both callers' asks for the one flight were estimated heavy and wait
      while (!/qes_heavy_query_estimates_total\{service="qes"\} 2\b/.test(await metricsOf(server)))
        await new Promise((r) => setTimeout(r, 20));
      expect(ran.filter(twoWay)).toHaveLength(0);
      for (const s of await others.stop()) expect(s).toBe(200);
      const [a, b] = await Promise.all(asks);
      expect(a?.status, a?.text).toBe(200);
      expect(b?.status, b?.text).toBe(200);
      expect(b?.body.result).toEqual(a?.body.result);
      expect(ran.filter(twoWay)).toHaveLength(1);
      expect(await metricsOf(server)).not.toMatch(/qes_admission_refusals_total\{reason="heavy"/);
    } finally {
      await server.close();
    }
  });
});
