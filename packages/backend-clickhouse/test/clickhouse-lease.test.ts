import type { ClickHouseClient } from "@clickhouse/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClickhouseEngine, type ClientPool, openChdbEngine } from "../src/clickhouse-connection.ts";
import { acquireLease, type LeaseTiming } from "../src/clickhouse-lease.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

/** The start-up lease of ClickHouse instances sharing a database (clickhouse-lease.ts). */
const TIMING: LeaseTiming = { beatMs: 100, staleMs: 1_000, pollMs: 50 };
const database = uniqueDatabase("qes_lease");
const layout = { database };
let engine: ClickhouseEngine;
beforeAll(async () => {
  engine = await openChdbEngine(chdbTestPath(), database);
});
afterAll(() => engine.close());

async function leaseTables(name: string): Promise<string> {
  return engine.owner.use(async (c) =>
    (
      await c.query({
        query: `SELECT name FROM system.tables WHERE database = '${database}' AND startsWith(name, 'qes_lease_${name}_') ORDER BY name`,
        format: "TabSeparatedRaw",
      })
    ).text(),
  );
}

describe("ClickHouse lease", () => {
  it("a second instance holds it only after the first released it, though the holder's beats outlast the staleness", async () => {
    const order: string[] = [];
    // 30 beats of slack: a loaded machine delays a beat, never thirty in a row
    const timing = { ...TIMING, staleMs: 3_000 };
    const first = await acquireLease(engine.owner, layout, "t_order", timing);
    const second = acquireLease(engine.owner, layout, "t_order", timing).then((lease) => {
      order.push("second held");
      return lease;
    });
    // longer than the staleness: a live holder's heartbeat keeps its lease
    await new Promise((r) => setTimeout(r, timing.staleMs + 1_000));
    expect(first.held()).toBe(true);
    order.push("first released");
    await first.release();
    const lease = await second;
    expect(order).toEqual(["first released", "second held"]);
    await lease.release();
    expect(await leaseTables("t_order")).toBe("");
  });

  it("a dead holder's lease is taken over once stale, and its table dropped", async () => {
    await engine.owner.use((c) =>
      c.command({
        query: `CREATE TABLE ${database}.qes_lease_t_dead_4 ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
      }),
    );
    const lease = await acquireLease(engine.owner, layout, "t_dead", TIMING);
    expect(await leaseTables("t_dead")).toBe("qes_lease_t_dead_5\n");
    await lease.release();
  });

  it("a lease made a moment ago, its holder's first beat not written yet, is not taken over", async () => {
    const table = `${database}.qes_lease_t_fresh_1`;
    await engine.owner.use((c) =>
      c.command({
        query: `CREATE TABLE ${table} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
      }),
    );
    const acquiring = acquireLease(engine.owner, layout, "t_fresh", { ...TIMING, staleMs: 60_000 });
    const waited = await Promise.race([
      acquiring.then(() => "taken over"),
      new Promise((r) => setTimeout(() => r("still waiting"), 1_500)),
    ]);
    expect(waited).toBe("still waiting");
    // its holder releases it: the waiting instance takes it
    await engine.owner.use((c) => c.command({ query: `DROP TABLE ${table} SYNC` }));
    await (await acquiring).release();
  });

  it("a holder releasing while another instance reads its beats is no error: the waiting one looks again and takes it", async () => {
    // the table goes between the waiting instance's listing and its read of the beats: chDB then
    // answers "Unknown table expression identifier", which ended that instance's start-up
    for (let round = 0; round < 20; round++) {
      const table = `${database}.qes_lease_t_gone_${round + 1}`;
      await engine.owner.use((c) =>
        c.command({
          query: `CREATE TABLE ${table} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
        }),
      );
      const acquiring = acquireLease(engine.owner, layout, "t_gone", {
        ...TIMING,
        staleMs: 60_000,
        pollMs: 1,
      });
      await new Promise((r) => setTimeout(r, round % 5));
      await engine.owner.use((c) => c.command({ query: `DROP TABLE ${table} SYNC` }));
      const lease = await acquiring;
      expect(lease.held()).toBe(true);
      await lease.release();
    }
  });

  it("an instance that found a dead holder's generation does not take the lease beside one that started over from generation 1", async () => {
    const ddl = (query: string) => engine.owner.use((c) => c.command({ query }));
    const lease = (g: number) => `${database}.qes_lease_t_split_${g}`;
    // a dead holder's generation 5, stale by the time the late instance reads it
    await ddl(`CREATE TABLE ${lease(5)} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`);
    await new Promise((r) => setTimeout(r, 2_500));
    // Between the late instance's read of the beats and its CREATE of generation 6, another
    // instance takes generation 6 over, drops 5 and releases 6, and a third, listing none, takes
    // generation 1: the late CREATE of 6 then succeeded, and two instances held the lease.
    let other: Promise<{ release(): Promise<void> }> | undefined;
    const late: ClientPool = {
      use: (fn) =>
        engine.owner.use((c) =>
          fn(
            new Proxy(c, {
              get(target, prop, receiver) {
                if (prop !== "command") return Reflect.get(target, prop, receiver);
                return async (params: { query: string }) => {
                  if (other === undefined && /^CREATE TABLE .*qes_lease_t_split_6\b/.test(params.query)) {
                    await ddl(
                      `CREATE TABLE ${lease(6)} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
                    );
                    await ddl(`DROP TABLE ${lease(5)} SYNC`);
                    await ddl(`DROP TABLE ${lease(6)} SYNC`);
                    other = acquireLease(engine.owner, layout, "t_split", { ...TIMING, staleMs: 60_000 });
                    await other;
                  }
                  return target.command(params as Parameters<ClickHouseClient["command"]>[0]);
                };
              },
            }),
          ),
        ),
      close: async () => {},
    };
    const acquiring = acquireLease(late, layout, "t_split", TIMING);
    const waited = await Promise.race([
      acquiring.then(() => "held beside the other"),
      new Promise((r) => setTimeout(() => r("waiting for the other"), 1_500)),
    ]);
    expect(other, "the interleaving ran").toBeDefined();
    expect(waited).toBe("waiting for the other");
    expect(await leaseTables("t_split")).toBe("qes_lease_t_split_1\n");
    await (await other!).release();
    const held = await acquiring;
    expect(held.held()).toBe(true);
    await held.release();
    expect(await leaseTables("t_split")).toBe("");
  });
});
