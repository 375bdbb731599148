import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import {
  call,
  HASHED_TOKEN,
  type HttpServer,
  type Reply,
  SCOPED_TOKEN,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { duckdbStore, type Store } from "./support/stores.ts";

/**
 * Issue 12, a closed loop of refused requests: a client that re-sends as soon as it is refused
 * (hostile SQL, a bad token) gets each answer as fast as the server can refuse, so the cheaper the
 * refusal the more it sends, and the event loop refusing it holds everyone's answers. Beyond
 * QES_REFUSALS_PER_SECOND a caller's refusals are held to the end of the second; other callers
 * are not held.
 */
const PER_SECOND = 5;
const HOSTILE = `/api/endpoints/query/logs.all?project=x&sql=${encodeURIComponent("select * from read_csv('/etc/passwd')")}`;
const CHEAP = "/api/endpoints/query/usage.api-counts?interval=daily&project=gamma";

describe("refusals under a closed-loop flood", () => {
  let store: Store;
  let server: HttpServer;
  beforeAll(async () => {
    store = await duckdbStore({ "cloudflare.logs.prod": EDGE_EVENTS });
    server = await startHttpServer(store.backend, { QES_REFUSALS_PER_SECOND: String(PER_SECOND) });
  });
  afterAll(async () => {
    await server?.close();
    await store?.dispose();
  });

  /** `loops` clients each re-sending at once for `ms`; the statuses of what came back */
  async function loop(path: string, headers: Record<string, string>, loops: number, ms: number) {
    const statuses: number[] = [];
    const until = Date.now() + ms;
    await Promise.all(
      Array.from({ length: loops }, async () => {
        while (Date.now() < until) statuses.push((await call(`${server.url}${path}`, { headers })).status);
      }),
    );
    return statuses;
  }

  it("answers a caller looping on hostile SQL at a bounded pace, each answer still its 422", async () => {
    const statuses = await loop(HOSTILE, { "X-API-KEY": TOKEN }, 20, 3000);
    expect(new Set(statuses)).toEqual(new Set([422]));
    // per second: PER_SECOND at once, then each of the 20 loops once when the second ends; unpaced,
    // refusals of ~1 ms each come back by the thousand
    expect(statuses.length).toBeGreaterThanOrEqual(PER_SECOND);
    expect(statuses.length).toBeLessThanOrEqual(4 * (20 + PER_SECOND));
  });

  it("holds only the flooding caller: another caller's refusal and query are answered meanwhile", async () => {
    const get = (path: string, token: string) =>
      call(`${server.url}${path}`, { headers: { "X-API-KEY": token } });
    let settled = 0;
    const flood = Array.from({ length: 30 }, () =>
      get(HOSTILE, HASHED_TOKEN).then((r) => {
        settled++;
        return r;
      }),
    );
    const refused = await get(HOSTILE, SCOPED_TOKEN);
    const answered = await get(CHEAP, SCOPED_TOKEN);
    const settledMeanwhile = settled;
    expect(refused.status).toBe(403);
    expect(answered.status).toBe(200);
    // the flooder's refusals past its budget wait for the end of its second
    expect(settledMeanwhile).toBeLessThanOrEqual(2 * PER_SECOND);
    const all: Reply[] = await Promise.all(flood);
    expect(all.every((r) => r.status === 422 && r.body.error.code !== undefined)).toBe(true);
  });

  it("paces refusals before authentication by the client's address", async () => {
    const statuses = await loop(
      "/api/endpoints/query/logs.all?project=x",
      { "X-API-KEY": "not-a-token-0123456789" },
      20,
      2000,
    );
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(statuses.length).toBeLessThanOrEqual(3 * (20 + PER_SECOND));
  });

  it("drops a held refusal whose client went away, and keeps serving", async () => {
    const stop = new AbortController();
    const flood = Array.from({ length: 20 }, () =>
      fetch(`${server.url}${HOSTILE}`, { headers: { "X-API-KEY": HASHED_TOKEN }, signal: stop.signal }).catch(
        () => "aborted",
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    expect((await Promise.all(flood)).filter((r) => r === "aborted").length).toBeGreaterThan(0);
    expect((await call(`${server.url}${CHEAP}`, { headers: { "X-API-KEY": TOKEN } })).status).toBe(200);
  });
});
