import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, FLOOD_EVENTS } from "./support/events.ts";
import { call, type HttpServer, SCOPED_TOKEN, startHttpServer, TOKEN } from "./support/in-process.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { everyStore, type Store } from "./support/stores.ts";

/**
 * An attacker holding one token, held back by admission (at its share here; heavy is the same
 * path), asks first for what a dashboard is about to ask: the dashboard's identical request joins
 * the attacker's flight. It must not wait behind the attacker's admission, nor get its 429.
 */
const LOADS = { "cloudflare.logs.prod": [...EDGE_EVENTS, ...FLOOD_EVENTS] };
const CROSS_JOIN = `/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&sql=${encodeURIComponent(
  "select count(*) as n from requests a, requests b, requests c, requests d where length(a.path) + length(b.path) + length(c.path) + length(d.path) > 1",
)}`;
const POPULAR = "/api/endpoints/query/usage.api-counts?interval=daily&project=gamma";

const STORES = everyStore(LOADS);

describe.each(STORES)(
  "a popular request first asked by a caller held back by admission, on %s",
  (_name, open) => {
    let store: Store;
    let server: HttpServer;
    beforeAll(async () => {
      store = await open();
      server = await startHttpServer(store.backend, {
        QES_MAX_CONCURRENT_PER_CALLER: "1",
        QES_QUERY_TIMEOUT_MS: "4000",
      });
    });
    afterAll(async () => {
      await server?.close();
      await store?.dispose();
    });

    it("answers the dashboard at once, in a slot of its own, not after (or refused with) the attacker's wait", async () => {
      const get = (path: string, token: string) =>
        call(`${server.url}${path}`, { headers: { "X-API-KEY": token } });
      let joinEnded = false;
      const join = get(CROSS_JOIN, TOKEN).finally(() => {
        joinEnded = true;
      });
      // the attacker's share is taken by its cross join (once it runs): its ask for the popular
      // request waits, for the join's end (its timeout, 4 s, at the latest)
      while (metricSum(await scrape(server.url), "qes_running_queries") === 0)
        await new Promise((r) => setTimeout(r, 20));
      const attackers = get(POPULAR, TOKEN);
      await new Promise((r) => setTimeout(r, 100));
      const dashboard = await get(POPULAR, SCOPED_TOKEN);
      expect(dashboard.status).toBe(200);
      // answered in a slot of its own while the join still holds the attacker's: not after it
      expect(joinEnded).toBe(false);
      expect((await attackers).status).toBe(200);
      expect([200, 504]).toContain((await join).status);
    });
  },
);
