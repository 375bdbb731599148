import { type Backend, type IngestBatch, logEventFromJson, parseJsonText } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";

/**
 * Attempts to break retention (DESIGN.md §10) on every backend: timestamps far from today, a
 * source emptied by retention and written again.
 */
const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z

function batch(source: string, events: [string, string][]): IngestBatch {
  return {
    source,
    events: events.map(([id, timestamp]) =>
      logEventFromJson(parseJsonText(JSON.stringify({ id, timestamp, event_message: id })), source, NOW),
    ),
  };
}

async function rows(backend: Backend, source: string): Promise<string[]> {
  const found = await runSql(
    backend,
    `select id, format_timestamp('%Y-%m-%dT%H:%M:%S', timestamp) as t from \`${source}\` order by id`,
  );
  return found.map((r) => `${r.id} ${r.t}`);
}

describe.each(BACKENDS)("retention probes on $name", (fixture) => {
  let handle: BackendHandle;
  let backend: Backend;
  beforeAll(async () => {
    handle = await fixture.create();
    backend = handle.backend;
  });
  afterAll(async () => handle?.dispose());

  it("keeps events of far future days and removes those of far past days, as every backend does", async () => {
    await backend.ingest([
      batch("far.days", [
        ["a-0001", "0001-01-01T00:00:00Z"],
        ["b-1960", "1960-06-01T00:00:00Z"],
        ["c-today", "2025-01-15T10:00:00Z"],
        ["d-2140", "2140-01-01T00:00:00Z"],
        ["e-2150", "2150-01-01T00:00:00Z"],
        ["f-9999", "9999-12-31T00:00:00Z"],
      ]),
    ]);
    await backend.applyRetention({ defaultDays: 30, perSource: {} }, NOW);
    expect(await rows(backend, "far.days")).toEqual([
      "c-today 2025-01-15T10:00:00",
      "d-2140 2140-01-01T00:00:00",
      "e-2150 2150-01-01T00:00:00",
      "f-9999 9999-12-31T00:00:00",
    ]);
  });

  it("a source retention empties still answers queries and statistics, and takes events again", async () => {
    await backend.ingest([batch("emptied.src", [["old", "2024-01-01T00:00:00Z"]])]);
    const reports = await backend.applyRetention({ defaultDays: 0, perSource: { "emptied.src": 7 } }, NOW);
    expect(reports.find((r) => r.source === "emptied.src")?.deletedEvents).toBe(1);
    expect(await rows(backend, "emptied.src")).toEqual([]);
    expect((await backend.sourceStats()).find((s) => s.source === "emptied.src")).toMatchObject({
      events: 0,
      oldestMicros: null,
    });
    // the same day again (a late shipper), then today: the old one goes again, today's stays
    await backend.ingest([
      batch("emptied.src", [
        ["old-again", "2024-01-01T00:00:00Z"],
        ["new", "2025-01-15T11:00:00Z"],
      ]),
    ]);
    await backend.applyRetention({ defaultDays: 0, perSource: { "emptied.src": 7 } }, NOW);
    expect(await rows(backend, "emptied.src")).toEqual(["new 2025-01-15T11:00:00"]);
    expect((await backend.sourceStats()).find((s) => s.source === "emptied.src")?.oldestMicros).toBe(
      NOW - 1n * 3_600_000_000n,
    );
  });
});
