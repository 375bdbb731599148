import { join } from "node:path";
import { type Backend, type LogEvent, nowMicros } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { handQuery, tempDir } from "./helpers.ts";

const tmp = tempDir("dedupe");
const path = join(tmp.dir, "qes.duckdb");
let backend: Backend;
const run = { maxRows: 10, timeoutMs: 10_000 };

beforeAll(async () => {
  backend = createDuckdbBackend({ path });
  await backend.init();
});
afterAll(async () => {
  await backend.close();
  tmp.cleanup();
});

function events(ids: string[]): LogEvent[] {
  const timestamp = nowMicros();
  return ids.map((id) => ({ id, timestamp, body: { id, event_message: `m ${id}` } }));
}

async function count(table: string): Promise<number> {
  const r = await backend.execute(
    handQuery(`select count(*) as n from ${table}`, [{ name: "n", type: { kind: "scalar", type: "INT64" } }]),
    [],
    run,
  );
  return r.rows[0]!.n as number;
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("DuckDB ingest dedupe", () => {
  it("skips ids stored by an earlier ingest, by a load, and before a reopen", async () => {
    expect(await backend.ingest([{ source: "dd.src", events: events(range("a", 3000)) }])).toEqual([
      { source: "dd.src", stored: 3000, duplicates: 0 },
    ]);
    // ids a load wrote, which the ingest filter did not see being written
    await backend.load(
      "dd.src",
      range("b", 50).map((id) => JSON.stringify({ id, event_message: "loaded" })),
    );
    const again = [...range("a", 3000).slice(2990), ...range("b", 50), ...range("c", 10)];
    expect(await backend.ingest([{ source: "dd.src", events: events(again) }])).toEqual([
      { source: "dd.src", stored: 10, duplicates: 60 },
    ]);
    expect(await count("src_dd_src")).toBe(3060);

    await backend.close();
    backend = createDuckdbBackend({ path });
    await backend.init();
    expect(
      await backend.ingest([{ source: "dd.src", events: events([...range("c", 10), "d-0", "d-0"]) }]),
    ).toEqual([{ source: "dd.src", stored: 1, duplicates: 11 }]);
    expect(await count("src_dd_src")).toBe(3061);
  });

  it("keeps deduplicating after a rolled-back ingest and after its filter grew", async () => {
    const bad = { id: "x-bad", timestamp: nowMicros(), body: { id: "x-bad", metadata: { a: 1 } } };
    // the second batch fails inside the transaction, after the first was written: nothing stays
    // (a timestamp that is no bigint: writing it throws, as a failing engine would)
    const unstorable = { id: "x-late", timestamp: "never" as unknown as bigint, body: { id: "x-late" } };
    await expect(
      backend.ingest([
        { source: "dd.grow", events: [bad] },
        { source: "dd.grow", events: [unstorable] },
      ]),
    ).rejects.toBeDefined();
    expect(await backend.ingest([{ source: "dd.grow", events: [bad] }])).toEqual([
      { source: "dd.grow", stored: 1, duplicates: 0 },
    ]);
    // beyond the smallest filter's capacity (65,536): the filter is rebuilt larger in between
    for (let i = 0; i < 4; i++) {
      const ids = range(`g${i}`, 20_000);
      expect(await backend.ingest([{ source: "dd.grow", events: events(ids) }])).toEqual([
        { source: "dd.grow", stored: 20_000, duplicates: 0 },
      ]);
    }
    const replay = [...range("g0", 20_000).slice(0, 5), ...range("g3", 20_000).slice(-5), "x-bad"];
    expect(await backend.ingest([{ source: "dd.grow", events: events(replay) }])).toEqual([
      { source: "dd.grow", stored: 0, duplicates: 11 },
    ]);
    expect(await count("src_dd_grow")).toBe(80_001);
  });
});
