import { createDuckdbBackend } from "@qes/backend-duckdb";
import type { Backend, ExecuteOptions } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Admission } from "../src/admission/admission.ts";
import { QuerySlots } from "../src/admission/query-slots.ts";
import { loadServedEndpoints } from "../src/endpoint-dirs.ts";
import { Metrics } from "../src/observability/metrics.ts";
import { QueryService } from "../src/query/query-service.ts";

// The admission rule (query-slots.test.ts) and each engine's modest run (postgres-readonly,
// clickhouse-execution tests) are tested on their own; this holds the wiring between them: the
// request of a heavy caller among others reaches the engine as modest, anyone else's does not.
describe("QueryService runs a heavy caller's query modestly while others use the engine", () => {
  const duckdb = createDuckdbBackend({ path: ":memory:" });
  const seen: { caller: string; modest: boolean }[] = [];
  let current = "";
  // the real engine, its execute options noted on the way
  const backend = new Proxy(duckdb, {
    get(target, prop) {
      if (prop === "execute")
        return (
          q: Parameters<Backend["execute"]>[0],
          v: Parameters<Backend["execute"]>[1],
          o: ExecuteOptions,
        ) => {
          seen.push({ caller: current, modest: o.modest === true });
          return target.execute(q, v, o);
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  let now = 0;
  const slots = new QuerySlots({
    maxConcurrent: 4,
    perCaller: 2,
    queuePerCaller: 4,
    maxWaitMs: 10_000,
    // the attacker's 5 s below: past half of it (modest among others), short of all (no wait)
    heavyUsageMs: 8_000,
    nowMs: () => now,
  });
  const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
  const service = new QueryService({
    backend,
    metrics,
    admission: new Admission({ slots, metrics }),
    keyPrefix: "qes-test",
    queryTimeoutMs: 10_000,
    clock: () => 1_736_942_400_000_000n,
    warmIntervalMs: () => undefined,
  });

  beforeAll(async () => {
    await duckdb.init();
  });
  afterAll(async () => {
    await duckdb.close();
  });

  async function ask(caller: string): Promise<void> {
    const endpoint = (await loadServedEndpoints([])).get("logs.all")!;
    current = caller;
    await service.answer({ endpoint, params: { project: "p" }, redact: false, nowMicros: 0n, caller });
  }

  it("passes modest to the engine only for the heavy caller, and only while another is active", async () => {
    // the attacker's earlier query held a slot for 5 s (the test clock): modest among others from here on
    const release = await slots.acquire("attacker");
    now += 5_000;
    release();
    await ask("attacker");
    // alone: the whole engine
    expect(seen.at(-1)).toEqual({ caller: "attacker", modest: false });
    const other = await slots.acquire("dashboard");
    await ask("attacker");
    expect(seen.at(-1)).toEqual({ caller: "attacker", modest: true });
    await ask("light");
    expect(seen.at(-1)).toEqual({ caller: "light", modest: false });
    other();
  });
});
