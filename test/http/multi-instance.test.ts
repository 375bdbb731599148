import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { apiKeys, call, JWT_SECRET, type Reply, TEST_NOW, TOKEN } from "./support/in-process.ts";
import { epoch, signJwt } from "./support/jwt.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { type QesProcess, startQes } from "./support/qes-process.ts";
import { postgresStore, type Store, TEST_POSTGRES_URL, unique } from "./support/stores.ts";

/**
 * Two `qes serve` processes on one PostgreSQL schema sharing one Redis (a prefix of their own), as
 * an operator runs several instances: one backend query for 50 identical concurrent misses split
 * across both, one instance's result served by the other, warming once per interval across both
 * (usage.api-counts' 300 s shortened to 1.5 s by QES_WARM_INTERVAL_SCALE), no token in either
 * log, and a graceful SIGTERM.
 */
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";
const PREFIX = `${unique("qes_multi")}:`;
const WARM_MS = 1500;
let store: Store;
let a: QesProcess;
let b: QesProcess;
let redis: Redis;

beforeAll(async () => {
  store = await postgresStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  const env = {
    QES_BACKEND: "postgres",
    QES_POSTGRES_URL: TEST_POSTGRES_URL,
    QES_POSTGRES_SCHEMA: store.schema as string,
    QES_POSTGRES_POOL: "4",
    QES_REDIS_URL: "redis://127.0.0.1:6379",
    QES_REDIS_PREFIX: PREFIX,
    QES_API_KEYS: apiKeys(),
    QES_JWT_SECRET: JWT_SECRET,
    QES_SEED: "false",
    QES_TEST_NOW: TEST_NOW,
    QES_WARM_INTERVAL_SCALE: String(WARM_MS / 300_000),
    LOG_LEVEL: "debug",
  };
  [a, b] = await Promise.all([startQes(env), startQes(env)]);
  redis = new Redis("redis://127.0.0.1:6379");
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop("SIGKILL"), b?.stop("SIGKILL")]);
  await store?.dispose();
  if (redis) {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
});

const usage = (interval: string, project: string) =>
  `/api/endpoints/query/usage.api-counts?interval=${interval}&project=${project}`;
const get = (on: QesProcess, path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }) =>
  call(`${on.url}${path}`, { headers });
const xcache = (r: Reply) => r.headers.get("x-cache");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** a metric summed over both instances */
async function both(name: string, labels: Record<string, string> = {}): Promise<number> {
  const [ta, tb] = await Promise.all([scrape(a.url), scrape(b.url)]);
  return metricSum(ta, name, labels) + metricSum(tb, name, labels);
}

describe("two instances sharing Redis", () => {
  it("run one backend query for 50 identical concurrent misses split across both", async () => {
    const requestQueries = await both("qes_backend_queries_total", { origin: "request" });
    const allQueries = await both("qes_backend_queries_total");
    const executed = await both("qes_backend_executed_queries");
    const path = usage("daily", "alpha");
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => get(i % 2 === 0 ? a : b, path)));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(replies[0]?.body.result.length).toBeGreaterThan(0);
    expect(replies.filter((r) => xcache(r) === "MISS").length).toBeGreaterThanOrEqual(1);
    expect(await both("qes_backend_queries_total", { origin: "request" })).toBe(requestQueries + 1);
    // the backends' own count agrees with the metric (warming may have run meanwhile)
    expect((await both("qes_backend_executed_queries")) - executed).toBe(
      (await both("qes_backend_queries_total")) - allQueries,
    );
  });

  it("serve on one instance what the other cached", async () => {
    const path = usage("hourly", "beta");
    const miss = await get(a, path);
    expect(xcache(miss)).toBe("MISS");
    const hit = await get(b, path);
    expect(xcache(hit)).toBe("HIT");
    expect(hit.text).toBe(miss.text);
    const byId = await get(b, `/api/endpoints/query/${USAGE_ID}?project=beta&interval=hourly`);
    expect(xcache(byId)).toBe("HIT");
  });

  it("refresh each requested key once per warm interval in total, over three intervals", async () => {
    for (const [on, interval, project] of [
      [a, "hourly", "gamma"],
      [b, "minutely", "delta"],
      [a, "daily", "beta"],
    ] as const) {
      expect((await get(on, usage(interval, project))).status).toBe(200);
    }
    const tracked = await redis.zcard((await redis.keys(`${PREFIX}warm:${USAGE_ID}:*`))[0] as string);
    // the two keys of the tests above and the three just requested
    expect(tracked).toBe(5);
    const keys = (await redis.keys(`${PREFIX}cache:${USAGE_ID}:*`)).filter((k) => !k.endsWith(":lock"));
    expect(keys).toHaveLength(5);

    // A run is counted (qes_warm_runs_total) when it starts and writes its debug line "warming
    // run" once it has stored every key it refreshes: with as many lines as runs counted, none is
    // under way. The window starts and ends at such quiet moments, seen from the runs themselves
    // rather than from the clock: on a loaded machine a run may start or finish late enough to
    // land on either side of any fixed instant (CI saw a late run's last refresh counted before
    // the window and stored in it: four changes of a key against three runs)
    const runsStarted = () => both("qes_warm_runs_total", { endpoint: "usage.api-counts" });
    const runsFinished = () =>
      [a, b].reduce(
        (n, on) =>
          n + (on.output().match(/"endpoint":"usage\.api-counts"[^\n]*"msg":"warming run"/g)?.length ?? 0),
        0,
      );
    /** when each cached value was produced (its first 8 bytes) */
    const producedNow = async () => {
      const at = new Map<string, number>();
      for (const key of keys) at.set(key, (await redis.getrangeBuffer(key, 0, 7)).readDoubleBE(0));
      return at;
    };
    /** the values, runs and refreshes at a moment no run is under way, nor starts while they are read */
    const quietMoment = async () => {
      for (;;) {
        const runs = await runsStarted();
        if (runsFinished() >= runs) {
          const refreshes = await both("qes_warm_refreshes_total", { endpoint: "usage.api-counts" });
          const values = await producedNow();
          if ((await runsStarted()) === runs) return { at: Date.now(), runs, refreshes, values };
        }
        await sleep(20);
      }
    };
    const first = await quietMoment();
    // every change of each value in between, sampled every 50 ms
    const producedAt = new Map<string, Set<number>>(keys.map((k) => [k, new Set()]));
    const note = (values: Map<string, number>) => {
      for (const [key, at] of values) if (at !== first.values.get(key)) producedAt.get(key)?.add(at);
    };
    while (Date.now() < first.at + 3 * WARM_MS) {
      note(await producedNow());
      await sleep(50);
    }
    const last = await quietMoment();
    note(last.values);
    const runsDone = last.runs - first.runs;
    const refreshed = last.refreshes - first.refreshes;
    const perKey = keys.map((k) => producedAt.get(k)?.size ?? 0);
    // BullMQ puts the jobs of an `every` scheduler on multiples of the interval, and adds the next
    // job when the current one starts, on the next multiple after that: at most one run per
    // multiple in the window, and the one due at the multiple before the window if it started
    // late, after the window began. One run per instance and interval would be twice that.
    const multiples = Math.floor(last.at / WARM_MS) - Math.floor(first.at / WARM_MS) + 1;
    expect(runsDone).toBeLessThanOrEqual(multiples);
    // the window spans three intervals or more: three runs at least, two if a run started more than
    // an interval late (two busy loops on two cores did it) and so skipped a slot
    expect(runsDone).toBeGreaterThanOrEqual(2);
    expect(refreshed).toBe(runsDone * 5);
    for (const n of perKey) expect(n).toBe(runsDone);
    expect(await both("qes_warm_failures_total")).toBe(0);
  });

  it("write no token, JWT or api_key value to either log", async () => {
    const jwt = signJwt({ scope: "query", exp: epoch(300) }, "HS256", JWT_SECRET);
    const expired = signJwt({ scope: "query", exp: epoch(-300) }, "HS256", JWT_SECRET);
    const secrets = [TOKEN, jwt, expired, "wrong-token-0123456789abcdef"];
    const answered = (on: QesProcess) => on.output().match(/"msg":"request"/g)?.length ?? 0;
    const before = new Map([a, b].map((on) => [on, answered(on)]));
    for (const on of [a, b]) {
      expect((await get(on, `${usage("daily", "alpha")}&api_key=${TOKEN}`, {})).status).toBe(200);
      expect((await get(on, `/api/endpoints/query/logs.all?project=alpha&api_key=${jwt}`, {})).status).toBe(
        200,
      );
      expect((await get(on, usage("daily", "alpha"), { Authorization: `Bearer ${jwt}` })).status).toBe(200);
      expect((await get(on, usage("daily", "alpha"), { "X-API-KEY": expired })).status).toBe(401);
      expect((await get(on, `${usage("daily", "alpha")}&api_key=${secrets[3]}`, {})).status).toBe(401);
    }
    // each process writes a request's line when it is answered, to a pipe read here later: wait
    // for the five lines of each
    for (const on of [a, b]) while (answered(on) < (before.get(on) as number) + 5) await sleep(20);
    for (const on of [a, b]) {
      const log = on.output();
      expect(log).toContain('"status":401');
      expect(log).toContain("/api/endpoints/query/logs.all?project=alpha");
      for (const secret of secrets) expect(log.includes(secret)).toBe(false);
      expect(log).not.toContain("api_key");
      expect(log).not.toContain(JWT_SECRET);
    }
  });

  it("stop gracefully on SIGTERM: the request in flight completes, then the process exits 0", async () => {
    // a consumer query that takes a while on PostgreSQL
    const joins = Array.from({ length: 11 }, (_, i) => `edge_logs as e${i}`).join(" cross join ");
    const slow = get(
      b,
      `/api/endpoints/query/logs.all?project=alpha&sql=${encodeURIComponent(`select count(*) as n from ${joins}`)}`,
    );
    let answeredAlready = false;
    const answer = () => {
      answeredAlready = true;
    };
    slow.then(answer, answer);
    // stopped while its query runs (not before the request arrived, on a loaded machine)
    while (!answeredAlready && metricSum(await scrape(b.url), "qes_running_queries") === 0) await sleep(20);
    const code = b.stop("SIGTERM");
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.body.result[0].n).toBe(4 ** 11);
    expect(await code).toBe(0);
    expect(b.output()).toContain('"msg":"stopped"');
    // the other instance still answers, from the shared cache
    expect(xcache(await get(a, usage("hourly", "beta")))).toBe("HIT");
  });
});
