import { join } from "node:path";
import type { SourceSchema, SourceStats } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceStatsCache } from "../src/duckdb-stats-cache.ts";
import { createDuckdbBackend } from "../src/index.ts";
import { tempDir } from "./helpers.ts";

const DAY = 86_400_000_000n;
const NOW = 1_790_000_000_000_000n;

const source = (name: string) => ({ name }) as SourceSchema;
const stat = (name: string, events: number): SourceStats => ({
  source: name,
  events,
  bytes: 0,
  oldestMicros: null,
});

describe("SourceStatsCache", () => {
  it("reads only the sources written since the last read, and all of them after a write to every source", async () => {
    const cache = new SourceStatsCache();
    const sources = ["a", "b", "c"].map(source);
    const reads: string[][] = [];
    let events = 1;
    const read = async (stale: SourceSchema[]) => {
      reads.push(stale.map((s) => s.name));
      return stale.map((s) => stat(s.name, events));
    };
    expect((await cache.get(sources, read)).map((s) => s.source)).toEqual(["a", "b", "c"]);
    expect(await cache.get(sources, read)).toHaveLength(3);
    events = 2;
    cache.wrote(["b"]);
    expect((await cache.get(sources, read)).map((s) => s.events)).toEqual([1, 2, 1]);
    cache.wrote();
    await cache.get(sources, read);
    expect(reads).toEqual([["a", "b", "c"], ["b"], ["a", "b", "c"]]);
  });

  it("does not keep statistics read while a write ended: they may predate it", async () => {
    const cache = new SourceStatsCache();
    const sources = [source("a")];
    let n = 0;
    const racing = async (stale: SourceSchema[]) => {
      n++;
      // the write commits after the read began: what was read may or may not hold it
      cache.wrote(["a"]);
      return stale.map((s) => stat(s.name, n));
    };
    expect((await cache.get(sources, racing))[0]?.events).toBe(1);
    expect((await cache.get(sources, async (stale) => stale.map((s) => stat(s.name, 7))))[0]?.events).toBe(7);
  });
});

describe("DuckDB per-source statistics after this process's writes", () => {
  const tmp = tempDir("source-stats");
  const backend = createDuckdbBackend({ path: join(tmp.dir, "stats.duckdb"), threads: 1 });
  const events = (n: number, ageDays: bigint, tag: string) =>
    Array.from({ length: n }, (_, i) => ({
      id: `${tag}-${i}`,
      timestamp: NOW - ageDays * DAY - BigInt(i),
      body: { event_message: `${tag} ${i}` },
    }));
  const eventsOf = async (name: string) =>
    (await backend.sourceStats()).find((s) => s.source === name)?.events;

  beforeAll(async () => {
    await backend.init();
    await backend.ingest([
      { source: "stats.a", events: events(3, 1n, "a") },
      { source: "stats.b", events: events(5, 10n, "b") },
    ]);
  });
  afterAll(async () => {
    await backend.close();
    tmp.cleanup();
  });

  it("follow ingest, load and retention, source by source", async () => {
    expect(await eventsOf("stats.a")).toBe(3);
    expect(await eventsOf("stats.b")).toBe(5);
    await backend.ingest([{ source: "stats.a", events: events(4, 1n, "a2") }]);
    expect(await eventsOf("stats.a")).toBe(7);
    expect(await eventsOf("stats.b")).toBe(5);
    const lines = events(2, 2n, "loaded").map((e) =>
      JSON.stringify({ id: e.id, timestamp: new Date(Number(e.timestamp / 1000n)).toISOString(), ...e.body }),
    );
    await backend.load("stats.b", lines);
    expect(await eventsOf("stats.b")).toBe(7);
    // stats.b's first five are 10 days old
    await backend.applyRetention({ defaultDays: 5, perSource: {} }, NOW);
    expect(await eventsOf("stats.b")).toBe(2);
    expect(await eventsOf("stats.a")).toBe(7);
  });

  it("count in their bytes the rows no checkpoint has written yet, and lose bytes at retention", async () => {
    const bytesOf = async (name: string) =>
      (await backend.sourceStats()).find((s) => s.source === name)!.bytes;
    await backend.ingest([{ source: "stats.bytes", events: events(1, 0n, "first") }]);
    const first = await bytesOf("stats.bytes");
    // 30,000 events of 100-character messages, a third of them 10 days old: ~5 MB of WAL, under
    // the 16 MB that makes DuckDB checkpoint, so their rows are in no block of the file yet
    const message = (i: number) => `${i}`.padStart(100, "m");
    const more = Array.from({ length: 30_000 }, (_, i) => ({
      id: `more-${i}`,
      timestamp: NOW - (i % 3 === 0 ? 10n * DAY : 0n) - BigInt(i),
      body: { event_message: message(i) },
    }));
    await backend.ingest([{ source: "stats.bytes", events: more }]);
    const ingested = await bytesOf("stats.bytes");
    expect(ingested - first).toBeGreaterThanOrEqual(30_000 * 100);
    // the run's checkpoint writes the 20,000 kept: fewer bytes than the 30,000 before, not more
    await backend.applyRetention({ defaultDays: 5, perSource: {} }, NOW);
    expect(await eventsOf("stats.bytes")).toBe(20_001);
    expect(await bytesOf("stats.bytes")).toBeLessThan(ingested);
  });
});
