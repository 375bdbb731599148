import type { QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { QuerySlots } from "../src/admission/query-slots.ts";

const slots = (maxConcurrent: number, perCaller = 2, queuePerCaller = 2, maxWaitMs = 10_000) =>
  new QuerySlots({ maxConcurrent, perCaller, queuePerCaller, maxWaitMs });

async function refusal(p: Promise<unknown>): Promise<QesError> {
  try {
    await p;
  } catch (e) {
    return e as QesError;
  }
  throw new Error("expected a refusal");
}

/** slots with the heavy mark at 15 s and a clock the test moves (`clock.now`, ms) */
function heavyMarkSlots(): { s: QuerySlots; clock: { now: number } } {
  const clock = { now: 0 };
  const s = new QuerySlots({
    maxConcurrent: 10,
    perCaller: 2,
    queuePerCaller: 4,
    maxWaitMs: 60_000,
    heavyUsageMs: 15_000,
    nowMs: () => clock.now,
  });
  return { s, clock };
}

describe("QuerySlots", () => {
  it("never gives one caller every slot: with 2 slots and perCaller 2, a second caller still gets one", async () => {
    const s = slots(2);
    await s.acquire("a");
    const waiting = s.acquire("a");
    // a is at its share (1 of 2): b is admitted at once
    const b = await s.acquire("b");
    expect(s.running).toBe(2);
    b();
    // the freed slot does not go to a: a still runs its share (1 of 2 slots)
    expect(s.running).toBe(1);
    let admitted = false;
    void waiting.then(() => {
      admitted = true;
    });
    await Promise.resolve();
    expect(admitted).toBe(false);
  });

  it("queues a caller at its share (bounded) and refuses beyond with 429 + Retry-After", async () => {
    const s = slots(4, 2, 2);
    const first = await s.acquire("a");
    await s.acquire("a");
    const q1 = s.acquire("a");
    const q2 = s.acquire("a");
    const e = await refusal(s.acquire("a"));
    expect(e.code).toBe("too_many_requests");
    expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    first();
    const release = await q1;
    expect(s.running).toBe(2);
    release();
    (await q2)();
  });

  it("hands freed slots to waiting callers in turn, not to whoever queued most", async () => {
    const s = slots(2, 1, 4);
    const ra = await s.acquire("a");
    const rb = await s.acquire("b");
    const order: string[] = [];
    const wait = (caller: string) =>
      s.acquire(caller).then((r) => {
        order.push(caller);
        return r;
      });
    const pending = [wait("a"), wait("a"), wait("a"), wait("c")];
    ra();
    rb();
    await new Promise((r) => setTimeout(r, 0));
    // a's next and c: one each, though a queued three
    expect(order.sort()).toEqual(["a", "c"]);
    for (const p of pending.slice(0, 1)) (await p)();
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toHaveLength(3);
  });

  it("refuses a wait that outlasts maxWaitMs, and frees a queue place when the client leaves", async () => {
    const s = slots(2, 1, 1, 30);
    await s.acquire("a");
    const e = await refusal(s.acquire("a"));
    expect(e.code).toBe("too_many_requests");
    const leaving = new AbortController();
    const left = s.acquire("a", leaving.signal);
    leaving.abort(new Error("client gone"));
    expect((await refusal(left)).message).toBe("client gone");
    // its place in the queue is free again
    const again = s.acquire("a");
    expect((await refusal(again)).code).toBe("too_many_requests");
  });

  it("a release counts once", async () => {
    const s = slots(3);
    const r = await s.acquire("a");
    r();
    r();
    expect(s.running).toBe(0);
  });

  it("gives a freed slot to the waiting caller that used the least engine time, however often the other asks", async () => {
    let now = 0;
    const s = new QuerySlots({
      maxConcurrent: 2,
      perCaller: 1,
      queuePerCaller: 4,
      maxWaitMs: 60_000,
      nowMs: () => now,
    });
    // the heavy caller has held a slot for 5 s; the light one ran 50 ms queries
    const heavy = await s.acquire("heavy");
    const light = await s.acquire("light");
    now += 50;
    light();
    now += 4950;
    heavy();
    expect(s.usageMs("heavy")).toBeCloseTo(5000, 0);
    expect(s.usageMs("light")).toBeCloseTo(50 * 0.5 ** (4950 / 30_000), 3);

    // both slots busy (two other callers); heavy queues first, light after it
    const o1 = await s.acquire("o1");
    const o2 = await s.acquire("o2");
    const order: string[] = [];
    const heavyNext = s.acquire("heavy").then((r) => {
      order.push("heavy");
      return r;
    });
    const lightNext = s.acquire("light").then((r) => {
      order.push("light");
      return r;
    });
    now += 10;
    o1();
    await new Promise((r) => setTimeout(r, 0));
    // the slot went to light, though heavy waited longer
    expect(order).toEqual(["light"]);
    o2();
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["light", "heavy"]);
    (await heavyNext)();
    (await lightNext)();
  });

  it("forgets engine time as it ages: used long ago, a caller is as new", async () => {
    let now = 0;
    const s = new QuerySlots({
      maxConcurrent: 2,
      perCaller: 1,
      queuePerCaller: 4,
      maxWaitMs: 60_000,
      nowMs: () => now,
    });
    const r = await s.acquire("a");
    now += 8000;
    r();
    now += 10 * 30_000;
    expect(s.usageMs("a")).toBeLessThan(8);
  });

  it("among others, a caller at half the heavy mark runs one query at a time, modestly; alone it keeps its share", async () => {
    const { s, clock } = heavyMarkSlots();
    // two 5 s queries at once: 10 s of engine time, past half of 15 s, short of all of it
    const j1 = await s.acquire("attacker");
    const j2 = await s.acquire("attacker");
    clock.now += 5_000;
    j1();
    j2();
    expect(s.usageMs("attacker")).toBeCloseTo(10_000, 0);
    // alone, it may use the engine as it likes: its full share, at full speed
    expect(s.runsModestly("attacker")).toBe(false);
    const a1 = await s.acquire("attacker");
    const a2 = await s.acquire("attacker");
    a1();
    a2();
    // with another caller's query running, it gets one slot and runs modestly
    const dashboard = await s.acquire("dashboard");
    expect(s.runsModestly("attacker")).toBe(true);
    expect(s.runsModestly("dashboard")).toBe(false);
    const b1 = await s.acquire("attacker");
    let second = false;
    const b2 = s.acquire("attacker").then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(second).toBe(false);
    expect(s.running).toBe(2);
    // the dashboard done, but it asked a moment ago: it still counts as using the engine
    dashboard();
    await new Promise((r) => setTimeout(r, 0));
    expect(second).toBe(false);
    // seconds later, the attacker is alone again: its second query runs at the next release
    clock.now += 3_000;
    b1();
    await new Promise((r) => setTimeout(r, 0));
    (await b2)();
    // a light caller never runs modestly, whoever else is running
    const other = await s.acquire("other");
    expect(s.runsModestly("dashboard")).toBe(false);
    other();
  });

  it("a heavy caller among others starts nothing until its engine time decays below the mark; alone it runs", async () => {
    const { s, clock } = heavyMarkSlots();
    // two 10 s cross joins at once: 20 s of engine time
    const j1 = await s.acquire("attacker");
    const j2 = await s.acquire("attacker");
    clock.now += 10_000;
    j1();
    j2();
    expect(s.usageMs("attacker")).toBeGreaterThanOrEqual(15_000);
    // alone, a heavy caller still has the whole engine
    (await s.acquire("attacker"))();
    // among others it waits, though nine slots are free, and the others' queries go on at once
    const d1 = await s.acquire("dashboard");
    let started = false;
    const next = s.acquire("attacker").then((r) => {
      started = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toBe(false);
    expect(s.running).toBe(1);
    const d2 = await s.acquire("dashboard");
    d1();
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toBe(false);
    // 20 s decays below 15 s in 30 s × log2(20 / 15) ≈ 12.5 s: the next release lets it start, modestly
    clock.now += 13_000;
    expect(s.usageMs("attacker")).toBeLessThan(15_000);
    const d3 = await s.acquire("other");
    d2();
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toBe(true);
    expect(s.runsModestly("attacker")).toBe(true);
    (await next)();
    d3();
  });

  it("two heavy callers waiting with nothing running do not wait for each other: they take turns", async () => {
    let now = 0;
    const s = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 1,
      queuePerCaller: 4,
      maxWaitMs: 60_000,
      heavyUsageMs: 1_000,
      nowMs: () => now,
    });
    const a = await s.acquire("a");
    const b = await s.acquire("b");
    now += 5_000;
    // each one's next request queues behind its own running query
    let aStarted = false;
    let bStarted = false;
    const a2 = s.acquire("a").then((r) => {
      aStarted = true;
      return r;
    });
    const b2 = s.acquire("b").then((r) => {
      bStarted = true;
      return r;
    });
    a();
    b();
    await new Promise((r) => setTimeout(r, 0));
    // both heavy, nobody else: one of them goes (not both: the other is running), modestly
    expect([aStarted, bStarted].filter(Boolean)).toHaveLength(1);
    expect(s.running).toBe(1);
    const first = aStarted ? await a2 : await b2;
    expect(s.runsModestly(aStarted ? "a" : "b")).toBe(true);
    first();
    // its turn over, the other goes
    const second = aStarted ? await b2 : await a2;
    expect(aStarted && bStarted).toBe(true);
    second();
  });

  it("another caller that asked a moment ago still counts: a heavy caller waits until that use ages, then runs", async () => {
    const s = new QuerySlots({
      maxConcurrent: 4,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 10_000,
      heavyUsageMs: 50,
    });
    const j = await s.acquire("attacker");
    await new Promise((r) => setTimeout(r, 120));
    j();
    // a dashboard's query of a millisecond: done before the attacker asks again
    (await s.acquire("dashboard"))();
    const asked = performance.now();
    const next = await s.acquire("attacker");
    // nobody runs or waits, but the dashboard used the engine just now: the attacker waited for
    // that to age (2 s) — and was let in by the timer, with no release to wake it
    expect(performance.now() - asked).toBeGreaterThanOrEqual(1_500);
    expect(s.running).toBe(1);
    next();
  });

  it("counts a query's engine time while it runs: a caller's first long queries make it heavy before they end", async () => {
    const { s, clock } = heavyMarkSlots();
    const dashboard = await s.acquire("dashboard");
    // two cross joins, still running 4 s later: 8 s of slot time, past half the mark
    const j1 = await s.acquire("attacker");
    const j2 = await s.acquire("attacker");
    clock.now += 4_000;
    expect(s.usageMs("attacker")).toBeCloseTo(8_000, 0);
    expect(s.runsModestly("attacker")).toBe(true);
    // 8 s in, 16 s of slot time: held back, though neither has ended
    clock.now += 4_000;
    expect(s.heldBack("attacker")).toBe(true);
    // ended, the time is counted once
    j1();
    j2();
    expect(s.usageMs("attacker")).toBeCloseTo(16_000, 0);
    dashboard();
  });

  it("a query the engine expects to be heavy waits while another caller uses the engine, whatever its caller's history; alone it runs", async () => {
    const { s, clock } = heavyMarkSlots();
    // a new caller with no engine time, alone: its heavy query runs at once
    expect(s.heldBack("newcomer", true)).toBe(false);
    const alone = await s.acquire("newcomer", undefined, undefined, true);
    alone();
    // the engine time of that instant is nothing: not heavy by history
    expect(s.heldBack("newcomer")).toBe(false);
    const dashboard = await s.acquire("dashboard");
    // another caller runs a query: the heavy query waits, the same caller's light query does not
    expect(s.heldBack("newcomer", true)).toBe(true);
    let granted = false;
    const waiting = s.acquire("newcomer", undefined, undefined, true).then((release) => {
      granted = true;
      return release;
    });
    const light = await s.acquire("newcomer");
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toBe(false);
    light();
    dashboard();
    // the dashboard is done, but started a query just now: it still counts until that ages
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toBe(false);
    clock.now += 2_001;
    // a release looks again (the timer would too)
    (await s.acquire("other-light"))();
    clock.now += 2_001;
    (await s.acquire("newcomer"))();
    const release = await waiting;
    expect(granted).toBe(true);
    release();
  });

  it("a heavy query refused after its wait says so as a 429 with Retry-After; warming's caller is never held by an estimate", async () => {
    const s = new QuerySlots({
      maxConcurrent: 10,
      perCaller: 2,
      queuePerCaller: 4,
      maxWaitMs: 50,
      ungated: ["warm"],
    });
    const dashboard = await s.acquire("dashboard");
    const e = (await s.acquire("newcomer", undefined, undefined, true).catch((x: unknown) => x)) as QesError;
    expect(e.code).toBe("too_many_requests");
    expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(s.heldBack("warm", true)).toBe(false);
    (await s.acquire("warm", undefined, undefined, true))();
    dashboard();
  });
  it("two callers' heavy queries waiting do not hold each other back: once the others are done they take turns", async () => {
    const { s, clock } = heavyMarkSlots();
    const dashboard = await s.acquire("dashboard");
    const granted: string[] = [];
    const heavy = (caller: string) =>
      s.acquire(caller, undefined, undefined, true).then((release) => {
        granted.push(caller);
        return release;
      });
    const first = heavy("first");
    const second = heavy("second");
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toEqual([]);
    dashboard();
    clock.now += 2_001;
    // a release looks again: the dashboard is gone, and each other waits only with a heavy query
    (await s.acquire("first"))();
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toEqual(["first"]);
    // the one running holds the other back until it is done and its start has aged
    (await first)();
    clock.now += 2_001;
    (await s.acquire("second"))();
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toEqual(["first", "second"]);
    (await second)();
  });
  it("a caller's light query queued behind its own heavy one held back is granted a freed slot", async () => {
    const s = new QuerySlots({ maxConcurrent: 2, perCaller: 2, queuePerCaller: 4, maxWaitMs: 60_000 });
    const dashboard = await s.acquire("dashboard");
    const other = await s.acquire("other");
    const granted: string[] = [];
    const gone = new AbortController();
    const heavy = s.acquire("user", gone.signal, undefined, true).then((release) => {
      granted.push("heavy");
      return release;
    });
    const light = s.acquire("user").then((release) => {
      granted.push("light");
      return release;
    });
    other();
    await new Promise((r) => setTimeout(r, 10));
    // the heavy one still waits for the dashboard; the light one behind it need not
    expect(granted).toEqual(["light"]);
    (await light)();
    dashboard();
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toEqual(["light"]);
    gone.abort();
    await expect(heavy).rejects.toBeDefined();
  });
});
