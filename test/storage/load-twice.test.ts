import { type Backend, type LoadSummary, logEventFromJson, parseJsonText } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z

/** n events at `start`…, every third without `id` (its id derived from its content) */
function events(n: number, start = 0): string[] {
  return Array.from({ length: n }, (_, k) => {
    const i = start + k;
    const event: Record<string, unknown> = {
      timestamp: `2025-01-1${i % 3}T10:00:00.${String(i).padStart(6, "0")}Z`,
      event_message: `event ${i}`,
      metadata: { n: i },
    };
    if (i % 3 !== 0) event.id = `e-${i}`;
    return JSON.stringify(event);
  });
}

async function load(backend: Backend, source: string, lines: string[]): Promise<LoadSummary> {
  return backend.load(source, lines, { nowMicros: NOW });
}

async function counts(backend: Backend, source: string): Promise<{ rows: number; ids: number }> {
  const [row] = await runSql(backend, `select count(*) as n, count(distinct id) as d from \`${source}\``);
  return { rows: Number(row!.n), ids: Number(row!.d) };
}

/**
 * `qes load` (each backend's `load`) leaves out events whose id the source stores already, or an
 * earlier line had, as the ingest API does (DESIGN.md §10): a load re-run after it failed
 * half-way stores each event once. An event without `id` gets the id ingest derives from its
 * content. Before, every backend stored the same file twice, and an event without `id` got a new
 * random id at every load.
 */
describe.each(BACKENDS)("qes load twice on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  it("stores a file loaded twice once: events with and without id", async () => {
    const file = events(30);
    const first = await load(backend, "twice.small", file);
    const again = await load(backend, "twice.small", file);
    expect(await counts(backend, "twice.small")).toEqual({ rows: 30, ids: 30 });
    expect(first.duplicates).toBe(0);
    expect(again).toMatchObject({ events: 30, duplicates: 30 });
  });

  it("stores only the new events of a file that holds stored ones (a re-run after a failure)", async () => {
    await load(backend, "twice.rerun", events(40));
    // the re-run's file: the first 40 again, 20 new, and one line twice
    const file = [...events(60), events(1, 50)[0]!];
    expect(await load(backend, "twice.rerun", file)).toMatchObject({ events: 61, duplicates: 41 });
    expect(await counts(backend, "twice.rerun")).toEqual({ rows: 60, ids: 60 });
  });

  it("keeps the first of an id repeated within one file", async () => {
    const file = [
      JSON.stringify({ id: "same", event_message: "first" }),
      JSON.stringify({ id: "other", event_message: "x" }),
      JSON.stringify({ id: "same", event_message: "second" }),
    ];
    expect(await load(backend, "twice.repeat", file)).toMatchObject({ events: 3, duplicates: 1 });
    expect(await runSql(backend, "select id, event_message from `twice.repeat` order by id")).toEqual([
      { id: "other", event_message: "x" },
      { id: "same", event_message: "first" },
    ]);
  });

  it("derives the ids ingest derives: events loaded and then posted are stored once", async () => {
    const file = events(9).map((l) => {
      const { id: _, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(rest);
    });
    await load(backend, "twice.ingested", file);
    const posted = file.map((l, i) =>
      logEventFromJson(parseJsonText(l), "twice.ingested", NOW, `event ${i}`),
    );
    const [result] = await backend.ingest([{ source: "twice.ingested", events: posted }]);
    expect(result).toMatchObject({ stored: 0, duplicates: 9 });
    expect(await counts(backend, "twice.ingested")).toEqual({ rows: 9, ids: 9 });
  });

  it("stores a large file loaded twice once, and half of it then the whole once", async () => {
    // past every loader's batches (and PostgreSQL's load workers, which start past 20,000 lines)
    const file = events(25_000);
    expect(await load(backend, "twice.large", file.slice(0, 12_000))).toMatchObject({ duplicates: 0 });
    expect(await load(backend, "twice.large", file)).toMatchObject({ events: 25_000, duplicates: 12_000 });
    expect(await load(backend, "twice.large", file)).toMatchObject({ duplicates: 25_000 });
    expect(await counts(backend, "twice.large")).toEqual({ rows: 25_000, ids: 25_000 });
    // a file that is another twice over, into a new source
    const doubled = [...events(15_000, 100_000), ...events(15_000, 100_000)];
    expect(await load(backend, "twice.doubled", doubled)).toMatchObject({ duplicates: 15_000 });
    expect(await counts(backend, "twice.doubled")).toEqual({ rows: 15_000, ids: 15_000 });
  }, 120_000);
});
