import { join } from "node:path";
import type { QueryResult } from "@qes/core";
import { describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { fileBackend, pairsCountQuery, tempDir } from "./helpers.ts";

const NOW = 1_736_899_200_000_000n; // 2025-01-15T00:00:00Z
const { backend } = fileBackend("checkpoint-readers");

/** a cross join of 30,000 ids of `source`: seconds of reading, begun before the caller goes on */
async function slowQuery(source: string): Promise<{ result: Promise<QueryResult>; done(): boolean }> {
  const table = (await backend.schema()).sources[source]!.table;
  let done = false;
  const result = backend
    .execute(pairsCountQuery(table, 30000), [], { maxRows: 10, timeoutMs: 60_000 })
    .finally(() => {
      done = true;
    });
  await new Promise((r) => setTimeout(r, 300));
  return { result, done: () => done };
}

describe("DuckDB checkpoints with queries running", () => {
  it("an ingest that widens a source while a query reads it is acknowledged, and so are the next ones", async () => {
    // the widening's checkpoint (duckdb-storage.ts, checkpointSchemaChange) was refused while a
    // query begun before the ALTER ran: the request failed after its COMMIT, and the process kept
    // the old schema, so the next event with the new field failed ("Column … already exists")
    const events = Array.from({ length: 40_000 }, (_, i) => ({
      id: `a${i}`,
      timestamp: NOW + BigInt(i),
      body: { metadata: { a: i } },
    }));
    await backend.ingest([{ source: "widen.src", events }]);
    const query = await slowQuery("widen.src");
    expect(query.done()).toBe(false);
    const widened = await backend.ingest([
      { source: "widen.src", events: [{ id: "w1", timestamp: NOW, body: { metadata: { a: 1, b: "new" } } }] },
    ]);
    expect(widened).toEqual([{ source: "widen.src", stored: 1, duplicates: 0 }]);
    expect(Number((await query.result).rows[0]?.n)).toBe((30_000 * 29_999) / 2);
    const next = await backend.ingest([
      {
        source: "widen.src",
        events: [{ id: "w2", timestamp: NOW, body: { metadata: { a: 2, b: "again" } } }],
      },
    ]);
    expect(next).toEqual([{ source: "widen.src", stored: 1, duplicates: 0 }]);
  });

  it("a widening whose checkpoint gives up still leaves the process knowing the column it committed", async () => {
    // the ALTER and the rows were committed before the checkpoint: a checkpoint that failed left
    // the process with the schema before it, and every later event with the new field failed
    // ("Column with name … already exists") until a restart
    const tmpHere = tempDir("checkpoint-gives-up");
    const impatient = createDuckdbBackend({ path: join(tmpHere.dir, "qes.duckdb"), checkpointWaitMs: 50 });
    await impatient.init();
    try {
      const table = async () => (await impatient.schema()).sources["giveup.src"]!.table;
      await impatient.ingest([
        {
          source: "giveup.src",
          events: Array.from({ length: 40_000 }, (_, i) => ({
            id: `a${i}`,
            timestamp: NOW + BigInt(i),
            body: { metadata: { a: i } },
          })),
        },
      ]);
      const t = await table();
      const slow = impatient.execute(pairsCountQuery(t, 30000), [], { maxRows: 10, timeoutMs: 60_000 });
      await new Promise((r) => setTimeout(r, 300));
      const widening = impatient.ingest([
        {
          source: "giveup.src",
          events: [{ id: "w1", timestamp: NOW, body: { metadata: { a: 1, b: "new" } } }],
        },
      ]);
      await expect(widening).rejects.toThrow(/CHECKPOINT/);
      await slow;
      const next = await impatient.ingest([
        {
          source: "giveup.src",
          events: [{ id: "w2", timestamp: NOW, body: { metadata: { a: 2, b: "again" } } }],
        },
      ]);
      expect(next).toEqual([{ source: "giveup.src", stored: 1, duplicates: 0 }]);
      // the committed event of the refused request is stored, and a retry of it stores nothing twice
      const retried = await impatient.ingest([
        {
          source: "giveup.src",
          events: [{ id: "w1", timestamp: NOW, body: { metadata: { a: 1, b: "new" } } }],
        },
      ]);
      expect(retried).toEqual([{ source: "giveup.src", stored: 0, duplicates: 1 }]);
    } finally {
      await impatient.close();
      tmpHere.cleanup();
    }
  });
});
