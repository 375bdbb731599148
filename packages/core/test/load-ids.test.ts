import { describe, expect, it } from "vitest";
import { LoadIds } from "../src/schema/load-ids.ts";

/**
 * A store as a load sees it, held in memory: what was stored before, and what the load kept and
 * flushed since (the engine's answer to `stored`). The backends' loads run LoadIds against the
 * real engines (test/storage/load-twice.test.ts); this one runs it past sizes those tests reach.
 */
function memoryStore(before: string[] = [], probesBeforeRead = 0) {
  const rows = new Set(before);
  const waiting: string[] = [];
  const asked: number[] = [];
  const store = {
    storedBefore: before.length,
    probesBeforeRead,
    readIds: async (add: (id: string) => void) => {
      for (const id of before) add(id);
    },
    flush: async () => {
      for (const id of waiting.splice(0)) rows.add(id);
    },
    stored: async (ids: string[]) => {
      asked.push(ids.length);
      return new Set(ids.filter((id) => rows.has(id)));
    },
  };
  /** runs a batch through `ids` and writes the kept ones, as a loader does */
  const load = async (ids: LoadIds, batch: string[]) => {
    const keep = await ids.keep(batch);
    const kept = batch.filter((_, i) => keep === undefined || keep[i]);
    waiting.push(...kept);
    return kept;
  };
  return { store, load, rows, waiting, asked };
}

const range = (prefix: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${from + i}`);

describe("LoadIds", () => {
  it("keeps every id of a long load of unique ids, asking the store about almost none", async () => {
    const { store, load, asked } = memoryStore();
    const ids = new LoadIds(store);
    let kept = 0;
    // past the first filter of the load's own ids (65,536), into the third
    for (let i = 0; i < 300_000; i += 10_000) kept += (await load(ids, range("u", i, 10_000))).length;
    expect(kept).toBe(300_000);
    expect(ids.duplicates).toBe(0);
    expect(asked.reduce((n, k) => n + k, 0)).toBeLessThan(20);
  });

  it("leaves out ids repeated in a batch, in later batches past the filters' growth, and stored before", async () => {
    const { store, load, rows, waiting } = memoryStore(range("s", 0, 1_000), 2_000);
    const ids = new LoadIds(store);
    expect(await load(ids, ["n-1", "s-5", "n-1", "n-2"])).toEqual(["n-1", "n-2"]);
    for (let i = 0; i < 150_000; i += 10_000) await load(ids, range("g", i, 10_000));
    // an id of the first batch, of a batch before the growth, stored before (now through the filter read)
    expect(await load(ids, ["n-1", "g-5", "s-999", "g-149999", "new"])).toEqual(["new"]);
    await store.flush();
    expect(ids.duplicates).toBe(6);
    expect(rows.size + waiting.length).toBe(1_000 + 2 + 150_000 + 1);
  });
});
