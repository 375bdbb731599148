import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
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
});
