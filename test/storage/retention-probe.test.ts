import { type Backend, type IngestBatch, retentionCutoffMicros } from "@qes/core";
import { loadConfig } from "@qes/server";
import { describe, expect, it } from "vitest";
import { Metrics } from "../../packages/server/src/observability/metrics.ts";
import { BACKENDS } from "../support/backends.ts";
import { INGEST_NOW, ingestBatch } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/**
 * Attempts to break retention (DESIGN.md §10) on every backend: timestamps far from today, a
 * source emptied by retention and written again.
 */
const NOW = INGEST_NOW; // 2025-01-15T12:00:00Z

/** a batch of events of `[id, timestamp]` */
function batch(source: string, events: [string, string][]): IngestBatch {
  return ingestBatch(
    source,
    events.map(([id, timestamp]) => JSON.stringify({ id, timestamp, event_message: id })),
  );
}

async function rows(backend: Backend, source: string): Promise<string[]> {
  const found = await runSql(
    backend,
    `select id, format_timestamp('%Y-%m-%dT%H:%M:%S', timestamp) as t from \`${source}\` order by id`,
  );
  return found.map((r) => `${r.id} ${r.t}`);
}

describe.each(BACKENDS)("retention probes on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

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

describe("QES_RETENTION_DAYS edge cases", () => {
  const parse = (text: string) => loadConfig({ NODE_ENV: "test", QES_RETENTION_DAYS: text }).retention;

  it("takes 0 as the default with overrides, the largest day count, and any source name spelling", () => {
    expect(parse("0,postgres.logs=7")).toEqual({ defaultDays: 0, perSource: { "postgres.logs": 7 } });
    expect(parse("postgres.logs=7")).toEqual({ defaultDays: 30, perSource: { "postgres.logs": 7 } });
    expect(parse(" 36500 ,\tlögs.ü = 07 ")).toEqual({ defaultDays: 36_500, perSource: { "lögs.ü": 7 } });
    // a name no source can have (a JavaScript property) is an own entry, never the prototype's
    const proto = parse("__proto__=5");
    expect(Object.getPrototypeOf(proto.perSource)).toBe(Object.prototype);
    expect(Object.hasOwn(proto.perSource, "__proto__")).toBe(true);
  });

  it("takes a source name holding , = or quotes written as a JSON string", () => {
    expect(parse(' "eu,west"=7, "a=b" = 3,"  spaced  "=1,"q\\"x\\\\"=2,"\\u00e9t\\u00e9"=4,30')).toEqual({
      defaultDays: 30,
      perSource: { "eu,west": 7, "a=b": 3, "  spaced  ": 1, 'q"x\\': 2, été: 4 },
    });
    // a quoted name is the same source as its plain spelling
    expect(() => parse('postgres.logs=7,"postgres.logs"=8')).toThrow("source postgres.logs is given twice");
    for (const [bad, message] of [
      ['"eu,west=7', /"eu,west=7 is not one JSON string/],
      ['"eu,west" 7', /is not one JSON string/],
      ['"eu,west"', /"eu,west" is a source name without =days/],
      ['"a"b=7', /is not one JSON string/],
      ['"bad\\q"=7', /is not one JSON string/],
      ['""=7', /names no source/],
      ['"x\\ny"=7', /control character/],
      ['"a"=', /not a whole number/],
      ['"a"=7x', /not a whole number/],
    ] as const) {
      expect(() => parse(bad), bad).toThrow(message);
    }
  });

  it("refuses, naming the variable, what is not a whole number of days up to 100 years", () => {
    for (const bad of [
      "36501",
      "1e9",
      "99999999999999999999",
      "+7",
      "7.0",
      "0x10",
      "a=b=7",
      "a=",
      "a=7,a=7",
      "٣",
      // entries one per line (a multi-line value): one override of a source no store can hold
      "30\npostgres.logs=7",
      "30\r\npostgres.logs=7\r\ncloudflare.logs.prod=90",
    ]) {
      expect(() => parse(bad), bad).toThrow(/QES_RETENTION_DAYS/);
    }
    expect(() => parse("30\npostgres.logs=7")).toThrow(
      'QES_RETENTION_DAYS: "30\\npostgres.logs" is no source name (it has a control character); separate entries with commas',
    );
  });

  it("a cutoff 100 years back is an exact whole day (no date overflow)", () => {
    const cutoff = retentionCutoffMicros(36_500, NOW)!;
    expect(cutoff % 86_400_000_000n).toBe(0n);
    expect(new Date(Number(cutoff / 1000n)).toISOString()).toBe("1925-02-09T00:00:00.000Z");
  });
});

describe("per-source metrics", () => {
  it("escape a source name with quotes, backslashes and a second line-looking part in their labels", async () => {
    const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
    const hostile = 'we"ird\\src} qes_fake 1';
    metrics.trackSources(
      async () => [
        { source: hostile, events: 3, bytes: 10, oldestMicros: NOW - 2_000_000n },
        { source: "emptied.src", events: 0, bytes: 0, oldestMicros: null },
      ],
      () => NOW,
    );
    const text = await metrics.registry.metrics();
    expect(text).toContain('qes_source_events{source="we\\"ird\\\\src} qes_fake 1",service="qes"} 3');
    expect(text).toContain(
      'qes_source_oldest_event_age_seconds{source="we\\"ird\\\\src} qes_fake 1",service="qes"} 2',
    );
    expect(text).not.toMatch(/^qes_fake/m);
    expect(text).toContain('qes_source_events{source="emptied.src",service="qes"} 0');
    expect(text).not.toContain('qes_source_oldest_event_age_seconds{source="emptied.src"');
  });

  it("keep the last statistics read when a read fails, instead of dropping every source's gauges", async () => {
    const metrics = new Metrics({ backend: "duckdb", executedQueries: () => 0, redis: false });
    let fail = false;
    metrics.trackSources(
      async () => {
        if (fail) throw new Error("table dropped while read");
        return [{ source: "edge", events: 7, bytes: 10, oldestMicros: NOW - 1_000_000n }];
      },
      () => NOW,
    );
    expect(await metrics.registry.metrics()).toContain('qes_source_events{source="edge",service="qes"} 7');
    fail = true;
    metrics.sourcesChanged(); // the next scrape reads again, and that read fails
    const text = await metrics.registry.metrics();
    expect(text).toContain('qes_source_events{source="edge",service="qes"} 7');
    expect(text).toContain('qes_source_oldest_event_age_seconds{source="edge",service="qes"} 1');
  });
});
