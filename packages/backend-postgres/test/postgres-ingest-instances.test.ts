import { type IngestBatch, logEventFromJson, nowMicros } from "@qes/core";
import { describe, expect, it } from "vitest";
import { runSql } from "../../../test/support/run-sql.ts";
import { range, storedCounts, twoInstances } from "./stored-ids-support.ts";

const NOW = 1_736_942_400_000_000n;

function batch(source: string, ids: string[]): IngestBatch {
  return {
    source,
    events: ids.map((id, i) =>
      logEventFromJson(
        { id, timestamp: "2025-01-10T10:00:00Z", event_message: "m" },
        source,
        NOW,
        `event ${i}`,
      ),
    ),
  };
}

/** Ingest calls of two instances (two backends on one schema) that create sources at once. */
describe("PostgreSQL ingest of two instances creating sources", () => {
  const instances = twoInstances("ingest_instances");

  it("a call creating two new sources and another instance's call creating the second one never deadlock", async () => {
    // A (a group commit of two requests) held the create lock while it waited for the second
    // source's load lock, which B held while it waited for the create lock: 40P01, a 500
    const failed: string[] = [];
    for (let round = 0; round < 8; round++) {
      const first = `new.first${round}`;
      const second = `new.second${round}`;
      const results = await Promise.allSettled([
        instances.a.ingest([batch(first, ["x"]), batch(second, ["y"])]),
        instances.b.ingest([batch(second, ["y"])]),
      ]);
      for (const r of results) if (r.status === "rejected") failed.push(String(r.reason));
      expect(await storedCounts(instances.a, second, ["y"])).toEqual(new Map([["y", 1]]));
    }
    expect(failed).toEqual([]);
  }, 30_000);

  it("after a commit into a source another instance created or widened a moment before, the model holds it", async () => {
    const { a, b } = instances;
    for (let round = 0; round < 3; round++) {
      const source = `ryw.src${round}`;
      expect((await a.schema()).sources[source]).toBeUndefined();
      await b.ingest([batch(source, ["on-b"])]);
      // A read the model just now and trusts it for half a second; its commit met B's source
      await a.ingest([batch(source, ["on-a"])]);
      expect((await a.schema()).sources[source]).toBeDefined();
    }
  });

  it("retention on both instances at once, while both ingest and query the source: no failure, each event once", async () => {
    const { a, b } = instances;
    const DAY = 86_400_000_000n;
    const now = nowMicros();
    const at = (id: string, micros: bigint): IngestBatch => ({
      source: "ret.both",
      events: [{ id, timestamp: micros, body: { event_message: id } }],
    });
    for (let d = 0; d < 6; d++)
      await a.ingest([at(`old-${d}`, now - BigInt(40 + d) * DAY), at(`new-${d}`, now - BigInt(d) * DAY)]);
    // B knows the source A made within a second
    await new Promise((r) => setTimeout(r, 1_000));
    const policy = { defaultDays: 30, perSource: {} };
    const failures: string[] = [];
    const note = (p: Promise<unknown>) => p.catch((e) => failures.push(String(e)));
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      const on = i % 2 === 0 ? a : b;
      work.push(note(on.applyRetention(policy, now)));
      work.push(note(on.ingest([at(`late-${i}`, now - BigInt(40 + i) * DAY), at(`now-${i}`, now)])));
      work.push(note(runSql(i % 2 === 0 ? b : a, "select count(*) as n from `ret.both`")));
    }
    await Promise.all(work);
    expect(failures).toEqual([]);
    // a run after them all leaves only what lies inside the retention, each once
    await a.applyRetention(policy, now);
    const rows = await runSql(b, "select id from `ret.both` order by id");
    expect(rows.map((r) => r.id)).toEqual([...range("new", 6), ...range("now", 6)].sort());
  }, 30_000);
});
