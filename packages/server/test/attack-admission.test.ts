import { createDuckdbBackend } from "@qes/backend-duckdb";
import type { QesError } from "@qes/core";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Admission, WARM_CALLER } from "../src/admission/admission.ts";
import { QuerySlots } from "../src/admission/query-slots.ts";
import { refusalKey } from "../src/admission/refusal-pacing.ts";
import { jwtCaller, staticKeyCaller } from "../src/auth/principal.ts";
import { MemoryStore } from "../src/cache/memory-store.ts";
import { ResultCache } from "../src/cache/result-cache.ts";
import { loadServedEndpoints } from "../src/endpoint-dirs.ts";
import { Metrics } from "../src/observability/metrics.ts";
import { QueryService } from "../src/query/query-service.ts";
import { MemoryWarmKeys } from "../src/warming/warm-keys.ts";

// Attacks on the heavy-caller gate (QuerySlots) by a caller holding one token, through the paths
// a request really takes: the cache's single flight, warming's caller, and the recent starts.

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("a heavy caller's single flight and another caller's identical request", () => {
  const duckdb = createDuckdbBackend({ path: ":memory:" });
  beforeAll(async () => {
    await duckdb.init();
  });
  afterAll(async () => {
    await duckdb.close();
  });

  it("a light caller joining a heavy caller's flight that waits for admission is answered, not refused with the heavy caller's 429", async () => {
    let now = 0;
    const slots = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 300,
      heavyUsageMs: 1_000,
      nowMs: () => now,
    });
    const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
    const modest: boolean[] = [];
    const backend = new Proxy(duckdb, {
      get(target, prop) {
        if (prop === "execute")
          return (...args: Parameters<typeof duckdb.execute>) => {
            modest.push(args[2].modest === true);
            return target.execute(...args);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const service = new QueryService({
      backend,
      metrics,
      admission: new Admission({ slots, metrics }),
      cache: new ResultCache({
        store: new MemoryStore(100),
        metrics,
        logger: pino({ level: "silent" }),
        peerWaitMs: 1_000,
      }),
      keyPrefix: "qes-attack",
      queryTimeoutMs: 10_000,
      clock: () => 1_736_942_400_000_000n,
      warmIntervalMs: () => undefined,
    });
    const endpoint = (await loadServedEndpoints([])).get("usage.api-counts")!;
    const ask = (caller: string) =>
      service.answer({
        endpoint,
        params: { interval: "daily", project: "popular" },
        redact: false,
        nowMicros: 0n,
        caller,
      });
    // the attacker's cross join held a slot for 5 s: heavy (the test clock stands still from here)
    const j = await slots.acquire("attacker");
    now += 5_000;
    j();
    // someone else's long query runs: the attacker starts nothing meanwhile
    const other = await slots.acquire("other");
    // the attacker asks first for what a dashboard is about to ask: its flight waits for a slot
    const attackers = ask("attacker").catch((e: QesError) => e);
    await tick();
    // the dashboard, light, with three slots free, asks the same thing: it joins that flight
    const dashboard = await ask("dashboard").catch((e: QesError) => e);
    other();
    expect((dashboard as QesError).code).toBeUndefined();
    expect(dashboard).toMatchObject({ cache: "MISS" });
    // the query ran in the dashboard's slot, as the dashboard's (not modestly, as the attacker's
    // would); the attacker's wait for one ended with it
    expect(modest).toEqual([false]);
    expect(slots.running).toBe(0);
    expect(await attackers).toMatchObject({ cache: "MISS" });
    // its place in its queue is free again: its next ask waits (the dashboard started just now), then is refused
    const again = await slots.acquire("attacker").catch((e: QesError) => e);
    expect((again as QesError).code).toBe("too_many_requests");
    expect(slots.usageMs("attacker")).toBe(5_000);
  });

  it("asks a slot once per other caller: the heavy caller's own identical requests add no asks", async () => {
    let now = 0;
    const slots = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 1,
      maxWaitMs: 200,
      heavyUsageMs: 1_000,
      nowMs: () => now,
    });
    const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
    const cache = new ResultCache({
      store: new MemoryStore(100),
      metrics,
      logger: pino({ level: "silent" }),
      peerWaitMs: 1_000,
    });
    const j = await slots.acquire("attacker");
    now += 5_000;
    j();
    const other = await slots.acquire("other");
    let runs = 0;
    const produce = async () => {
      runs++;
      return { body: Buffer.from("{}"), storedAtMs: Date.now(), rowLimitReached: false };
    };
    const ask = (caller: string) =>
      cache
        .answer("e", "k", 60_000, produce, {
          admit: (signal) => slots.acquire(caller, signal),
          admittedAs: caller,
        })
        .catch((e: QesError) => e);
    // the attacker's queue holds one: were its joins to ask too, they would be refused and counted
    const first = ask("attacker");
    await tick();
    const joins = [ask("attacker"), ask("attacker")];
    const all = await Promise.all([first, ...joins]);
    other();
    expect(all.map((a) => (a as QesError).code)).toEqual([
      "too_many_requests",
      "too_many_requests",
      "too_many_requests",
    ]);
    expect(runs).toBe(0);
  });
});

describe("a flight's admission asked by several callers", () => {
  const entry = { body: Buffer.from("{}"), storedAtMs: 0, rowLimitReached: false };
  const cache = () =>
    new ResultCache({
      store: new MemoryStore(100),
      metrics: new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false }),
      logger: pino({ level: "silent" }),
      peerWaitMs: 1_000,
    });

  it("refused by every ask, each request gets the starter's refusal, never a joiner's own reason", async () => {
    const c = cache();
    let refuseStarter: (e: unknown) => void = () => undefined;
    const starter = c
      .answer("e", "k", 60_000, async () => entry, {
        admit: () =>
          new Promise((_, reject) => {
            refuseStarter = reject;
          }),
        admittedAs: "attacker",
      })
      .catch((e: Error) => e.message);
    await tick();
    const joiner = c
      .answer("e", "k", 60_000, async () => entry, {
        admit: async () => {
          throw new Error("the dashboard's rate");
        },
        admittedAs: "dashboard",
      })
      .catch((e: Error) => e.message);
    await tick();
    refuseStarter(new Error("the attacker's share"));
    expect(await Promise.all([starter, joiner])).toEqual(["the attacker's share", "the attacker's share"]);
  });

  it("a slot granted to a losing ask after the flight has one is given back at once", async () => {
    const c = cache();
    let grantStarter: (release: () => void) => void = () => undefined;
    let starterReleased = 0;
    let joinerReleased = 0;
    const starter = c.answer("e", "k", 60_000, async () => entry, {
      // ignores its signal: grants late, after the joiner's slot won
      admit: () =>
        new Promise((resolve) => {
          grantStarter = resolve;
        }),
      admittedAs: "attacker",
    });
    await tick();
    const joiner = c.answer("e", "k", 60_000, async () => entry, {
      admit: async () => () => {
        joinerReleased++;
      },
      admittedAs: "dashboard",
    });
    await Promise.all([starter, joiner]);
    expect(joinerReleased).toBe(1);
    grantStarter(() => {
      starterReleased++;
    });
    await tick();
    expect(starterReleased).toBe(1);
  });
});

describe("QuerySlots's recent starts under a heavy warming caller", () => {
  const gate = (now: () => number) =>
    new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 60_000,
      heavyUsageMs: 1_000,
      nowMs: now,
    });

  it("a light caller's recent start still holds a heavy caller when warming (heavy now) started after it", async () => {
    let now = 0;
    const s = gate(() => now);
    const j = await s.acquire("attacker");
    now += 5_000;
    j();
    // a dashboard's query of a millisecond, then a warming refresh that holds a slot for 1.5 s
    (await s.acquire("dashboard"))();
    now += 10;
    const w = await s.acquire(WARM_CALLER);
    now += 1_500;
    w();
    expect(s.usageMs(WARM_CALLER)).toBeGreaterThanOrEqual(1_000);
    // the dashboard started 1.51 s ago and is not heavy: the attacker waits for that to age
    let started = false;
    const next = s.acquire("attacker").then((r) => {
      started = true;
      return r;
    });
    await tick();
    expect(started).toBe(false);
    now += 600;
    // the recheck timer (real time) lets it in once the dashboard's start ages
    (await next)();
  });

  it("warming, ungated, still refreshes while light callers use the engine, though heavy: one query at a time, modestly", async () => {
    let now = 0;
    const s = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 200,
      heavyUsageMs: 1_000,
      ungated: [WARM_CALLER],
      nowMs: () => now,
    });
    const w = await s.acquire(WARM_CALLER);
    now += 5_000;
    w();
    // a caller with a query every second: a heavy warming is not held back (its refreshes would stop)
    (await s.acquire("dashboard"))();
    const refresh = await s.acquire(WARM_CALLER);
    expect(s.runsModestly(WARM_CALLER)).toBe(true);
    // but it runs one refresh at a time among others
    let second = false;
    const next = s.acquire(WARM_CALLER).then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(second).toBe(false);
    refresh();
    (await next)();
    expect(second).toBe(true);
    // a gated caller as heavy is held back in the same spot
    const a = await s.acquire("attacker");
    now += 5_000;
    a();
    (await s.acquire("dashboard"))();
    const refused = await s.acquire("attacker").catch((e: QesError) => e);
    expect((refused as QesError).code).toBe("too_many_requests");
  });
});

describe("a heavy caller's consumer SQL and warming", () => {
  const duckdb = createDuckdbBackend({ path: ":memory:" });
  beforeAll(async () => {
    await duckdb.init();
  });
  afterAll(async () => {
    await duckdb.close();
  });

  /**
   * a QueryService over DuckDB whose every query holds its slot 2 s on the test clock (the
   * attacker's cross join, in short), with the attacker's consumer SQL on usage.api-counts (cached,
   * warmed and sandboxable) asked once and noted for warming
   */
  async function attackerAsked() {
    let now = 0;
    const backend = new Proxy(duckdb, {
      get(target, prop) {
        if (prop === "execute")
          return (...args: Parameters<typeof duckdb.execute>) => {
            now += 2_000;
            return target.execute(...args);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const slots = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 200,
      heavyUsageMs: 1_000,
      nowMs: () => now,
    });
    const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
    const warmKeys = new MemoryWarmKeys(100);
    const service = new QueryService({
      backend,
      metrics,
      admission: new Admission({ slots, metrics }),
      cache: new ResultCache({
        store: new MemoryStore(100),
        metrics,
        logger: pino({ level: "silent" }),
        peerWaitMs: 1_000,
      }),
      warmKeys,
      keyPrefix: "qes-attack",
      queryTimeoutMs: 10_000,
      clock: () => 1_736_942_400_000_000n,
      warmIntervalMs: () => 300_000,
    });
    const endpoint = (await loadServedEndpoints([])).get("usage.api-counts")!;
    const ask = () =>
      service.answer({
        endpoint,
        params: { interval: "daily", project: "x" },
        consumerSql: "select count(*) as n from requests",
        redact: false,
        nowMicros: 0n,
        caller: "attacker",
      });
    await ask();
    expect(slots.usageMs("attacker")).toBeGreaterThanOrEqual(2_000);
    return { slots, service, endpoint, warmKeys, ask };
  }

  it("warming does not re-run what a heavy caller held back asked for: the refresh is skipped, the key kept", async () => {
    const { slots, service, endpoint, warmKeys, ask } = await attackerAsked();
    // others use the engine: the attacker, heavy, starts nothing of its own
    const other = await slots.acquire("dashboard");
    expect(
      await ask().then(
        (a) => a.cache,
        (e: QesError) => e.code,
      ),
    ).toBe("HIT");
    const [spec] = await warmKeys.due(endpoint);
    expect(spec).toBeDefined();
    // warming's round: not the attacker's query again, as the warm caller, while it is held back
    const refreshed = await service.refresh(endpoint, spec as string).then(
      () => "ran",
      (e: QesError) => e.code,
    );
    other();
    // skipped as busy: the warmer keeps the key (warmer.ts) and warming used no engine time
    expect(refreshed).toBe("too_many_requests");
    expect(slots.usageMs(WARM_CALLER)).toBe(0);
  });

  it("a refresh done while its asker is not held back is charged to the asker", async () => {
    const { slots, service, endpoint, warmKeys } = await attackerAsked();
    const before = slots.usageMs("attacker");
    const [spec] = await warmKeys.due(endpoint);
    // nobody else uses the engine: the refresh runs, in warming's slot, and its 2 s are the asker's
    await service.refresh(endpoint, spec as string);
    // (what it had decays a little over those 2 s of the test clock)
    expect(slots.usageMs("attacker")).toBeGreaterThan(before * 0.5 ** (2_000 / 30_000) + 1_999);
    expect(slots.usageMs(WARM_CALLER)).toBeGreaterThanOrEqual(2_000 - 1);
  });
});

describe("names a token holder can choose (a JWT's subject) never collide with another's", () => {
  const hash = Buffer.alloc(32, 7);
  it("a subject shaped like an address, a static key or warming is its own caller", () => {
    expect(refusalKey(jwtCaller("address:127.0.0.1", hash), "10.0.0.1")).not.toBe(
      refusalKey(undefined, "127.0.0.1"),
    );
    expect(jwtCaller(`key:${hash.toString("hex")}`, hash)).not.toBe(staticKeyCaller(hash));
    expect(jwtCaller("warm", hash)).not.toBe(WARM_CALLER);
    expect(jwtCaller(WARM_CALLER, hash)).toBe("jwt:warm");
  });
});
