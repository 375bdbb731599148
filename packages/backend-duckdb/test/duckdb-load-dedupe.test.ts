import { describe, expect, it } from "vitest";
import { fileBackend, handQuery } from "./helpers.ts";

const { backend } = fileBackend("load-dedupe");

const lines = (prefix: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ id: `${prefix}-${from + i}`, timestamp: "2025-01-15T10:00:00Z", event_message: "m" }),
  );

async function counts(): Promise<{ n: number; d: number }> {
  const r = await backend.execute(
    handQuery("select count(*) as n, count(distinct id) as d from src_dd_load", [
      { name: "n", type: { kind: "scalar", type: "INT64" } },
      { name: "d", type: { kind: "scalar", type: "INT64" } },
    ]),
    [],
    { maxRows: 1, timeoutMs: 30_000 },
  );
  return r.rows[0] as { n: number; d: number };
}

/**
 * A long load into a source that holds events: its first batches look their ids up in the engine,
 * then it reads every stored id into a filter and looks up only the few the filter flags (the
 * shared suite's loads are too short to reach the filter on DuckDB).
 */
describe("DuckDB load into a source that holds events", () => {
  it("leaves out the stored ids past the batches it looks up, through the filter of them", async () => {
    await backend.load("dd.load", lines("a", 0, 60_000));
    // the stored ones, some new among them after the looked-up batches, and the last again
    const file = [
      ...lines("a", 0, 50_000),
      ...lines("b", 0, 100),
      ...lines("a", 50_000, 10_000),
      ...lines("b", 99, 1),
    ];
    expect(await backend.load("dd.load", file)).toMatchObject({ events: 60_101, duplicates: 60_001 });
    expect(await counts()).toEqual({ n: 60_100, d: 60_100 });
  }, 60_000);
});
