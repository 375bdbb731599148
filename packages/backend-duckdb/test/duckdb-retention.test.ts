import { statSync } from "node:fs";
import { join } from "node:path";
import type { Backend, LogEvent } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSql } from "../../../test/support/run-sql.ts";
import { createDuckdbBackend } from "../src/index.ts";
import { pairsCountQuery, tempDir } from "./helpers.ts";

const DAY = 86_400_000_000n;
const NOW = 1_736_899_200_000_000n; // 2025-01-15T00:00:00Z
const EVENTS = 30_000;
const CYCLES = 12;

const tmp = tempDir("retention");
const file = join(tmp.dir, "qes.duckdb");
let backend: Backend;

beforeAll(async () => {
  backend = createDuckdbBackend({ path: file });
  await backend.init();
});
afterAll(async () => {
  await backend.close();
  tmp.cleanup();
});

/** edge-like events at `at` */
function events(cycle: number, at: bigint): LogEvent[] {
  return Array.from({ length: EVENTS }, (_, i) => ({
    id: `c${cycle}-${i}`,
    timestamp: at + BigInt(i),
    body: {
      event_message: `GET | 200 | /rest/v1/table_${i % 50}?select=*&id=eq.${i}`,
      project: `project${i % 10}`,
      metadata: { request: { method: "GET", path: `/rest/v1/t${i}` }, response: { status_code: 200 } },
    },
  }));
}

describe("DuckDB retention", () => {
  it("deletes old rows and reuses the file's space: the file stops growing over ingest and retention cycles", async () => {
    const sizes: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      // one day per cycle, kept 1 day: each run removes the events of two cycles before, so the
      // store holds about two cycles' events and the checkpoint writes each cycle's to the file
      const now = NOW + BigInt(cycle) * DAY;
      await backend.ingest([{ source: "cycle.src", events: events(cycle, now) }]);
      const reports = await backend.applyRetention({ defaultDays: 1, perSource: {} }, now);
      expect(reports.find((r) => r.source === "cycle.src")?.deletedEvents).toBe(cycle >= 2 ? EVENTS : 0);
      sizes.push(statSync(file).size);
    }
    const stats = (await backend.sourceStats()).find((s) => s.source === "cycle.src");
    expect(stats).toMatchObject({ events: 2 * EVENTS, oldestMicros: NOW + BigInt(CYCLES - 2) * DAY });
    // the first cycles reach the working size; later ones reuse freed blocks (without the
    // deletes the file would grow by a cycle's events each time; with the time index kept through
    // the checkpoint it grew by ~6 MB a cycle: 26 MB after 4 cycles, 65 MB after 16)
    // (the time index is dropped, and rebuilt after the checkpoint, so the working size holds its
    // old and new blocks for a cycle: reached by the sixth cycle instead of the fourth)
    expect(Math.max(...sizes.slice(6))).toBeLessThanOrEqual(Math.max(...sizes.slice(0, 6)) * 1.1);
    // and from the first deletes on it holds steady, not a sawtooth: a row group held the oldest
    // day with the days after it, and kept its blocks until all of them went (12, 15, 24, 31, 18,
    // 18, 25, 31 … MB; now 12–15 MB)
    expect(Math.max(...sizes.slice(2))).toBeLessThanOrEqual((sizes[2] as number) * 1.4);
    console.log(`DuckDB file size per cycle: ${sizes.join(", ")}`);
  });

  it("moves the rows a deleted day shares its row groups with, unchanged, and deletes only the old ones", async () => {
    // one load interleaving old and kept events: every row group holds both kinds, so every group
    // is touched and its kept rows move to the table's end
    const old = NOW - 10n * DAY;
    const lines = Array.from({ length: 9_000 }, (_, i) =>
      JSON.stringify({
        id: `m${i}`,
        timestamp: new Date(Number((i % 3 === 0 ? old : NOW) / 1000n) + i).toISOString(),
        event_message: `line ${i}`,
        project: `p${i % 7}`,
        metadata: { request: { path: `/x/${i}` }, n: i, tags: i % 2 ? ["a", "b"] : [] },
      }),
    );
    await backend.load("moved.src", lines);
    const rows = () =>
      runSql(
        backend,
        "select id, timestamp, event_message, project, metadata[0].request[0].path as path, metadata[0].n as n, array_length(metadata[0].tags) as tags from `moved.src` order by id",
      );
    const before = await rows();
    const reports = await backend.applyRetention({ defaultDays: 1, perSource: {} }, NOW);
    expect(reports.find((r) => r.source === "moved.src")?.deletedEvents).toBe(3_000);
    const after = await rows();
    expect(after).toEqual(before.filter((r) => (r.timestamp as number) >= Number(NOW - DAY)));
    expect(after).toHaveLength(6_000);
  });

  it("runs while a query that began before it still reads the source: the checkpoint waits for it, nothing fails", async () => {
    // a dashboard's query in flight when the hourly run starts: its transaction predates the
    // index drop, and DuckDB refuses a CHECKPOINT then ("there are other write transactions
    // active"): the run failed (a 500 to `qes retention`), the index came back before any
    // checkpoint, and the deleted rows' blocks were never freed
    const at = (i: number) => (i % 4 === 0 ? NOW - 10n * DAY : NOW) + BigInt(i);
    await backend.ingest([
      {
        source: "busy.src",
        events: Array.from({ length: 40_000 }, (_, i) => ({ id: `b${i}`, timestamp: at(i), body: {} })),
      },
    ]);
    const table = (await backend.schema()).sources["busy.src"]!.table;
    let queryDone = false;
    // a cross join of 30,000 ids: seconds of reading
    const query = backend
      .execute(pairsCountQuery(table, 30000), [], { maxRows: 10, timeoutMs: 60_000 })
      .finally(() => {
        queryDone = true;
      });
    await new Promise((r) => setTimeout(r, 300));
    expect(queryDone).toBe(false);
    const reports = await backend.applyRetention({ defaultDays: 1, perSource: {} }, NOW);
    expect(reports.find((r) => r.source === "busy.src")?.deletedEvents).toBe(10_000);
    expect(Number((await query).rows[0]?.n)).toBe((30_000 * 29_999) / 2);
    const stats = (await backend.sourceStats()).find((s) => s.source === "busy.src");
    expect(stats).toMatchObject({ events: 30_000, oldestMicros: NOW + 1n });
  });
});
