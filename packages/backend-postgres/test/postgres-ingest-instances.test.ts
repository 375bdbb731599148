import { type IngestBatch, logEventFromJson } from "@qes/core";
import { describe, expect, it } from "vitest";
import { storedCounts, twoInstances } from "./stored-ids-support.ts";

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
});
