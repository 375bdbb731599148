import { type Backend, type LogEvent, nowMicros } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

/**
 * The retention TTL of a source's table outside ClickHouse's Date (1970-01-01…2149-06-06, wrapping
 * around past either end): a TTL merge must neither drop an event of 2150 (its TTL wrapped into
 * 1970) nor keep one of 1960 for ever.
 */
let engine: ClickhouseEngine;
const database = uniqueDatabase("qes_ttl");
beforeAll(async () => {
  engine = await openChdbEngine(chdbTestPath(), database);
});
afterAll(async () => engine.close());

async function text(query: string): Promise<string> {
  return engine.owner.use(async (c) => (await c.query({ query, format: "TabSeparatedRaw" })).text());
}

const at = (id: string, iso: string): LogEvent => ({
  id,
  timestamp: BigInt(Date.parse(iso)) * 1000n,
  body: { event_message: id },
});

describe("the retention TTL on ClickHouse", () => {
  it("keeps an event dated past 2149 through a TTL merge, and expires one dated before 1970", async () => {
    const db = uniqueDatabase("qes_ttl_range");
    let backend: Backend | undefined = createClickhouseBackend({
      path: chdbTestPath(),
      database: db,
      retention: { defaultDays: 30, perSource: {} },
    });
    try {
      await backend.init();
      const today = new Date(Number(nowMicros() / 1000n)).toISOString();
      await backend.ingest([
        {
          source: "far.logs",
          events: [
            at("future", "2150-01-01T00:00:00Z"),
            at("past", "1960-06-01T00:00:00Z"),
            at("today", today),
          ],
        },
      ]);
      const table = (await backend.schema()).sources["far.logs"]!.table;
      await engine.owner.use((c) => c.command({ query: `OPTIMIZE TABLE ${db}.${table} FINAL` }));
      const ids = await text(`SELECT id FROM ${db}.${table} ORDER BY id`);
      expect(ids.trim().split("\n")).toEqual(["future", "today"]);
    } finally {
      await backend?.close();
      backend = undefined;
    }
  });

  it("sets no TTL on a run whose now is another day than the engine's (a pinned clock): its merges would drop what the run keeps", async () => {
    const db = uniqueDatabase("qes_ttl_pinned");
    const backend = createClickhouseBackend({ path: chdbTestPath(), database: db });
    try {
      await backend.init();
      const pinned = BigInt(Date.parse("2025-01-15T12:00:00Z")) * 1000n;
      await backend.ingest([
        {
          source: "pinned.logs",
          events: [at("old", "2024-11-01T00:00:00Z"), at("kept", "2025-01-14T00:00:00Z")],
        },
      ]);
      const reports = await backend.applyRetention({ defaultDays: 30, perSource: {} }, pinned);
      expect(reports.find((r) => r.source === "pinned.logs")?.deletedEvents).toBe(1);
      const table = (await backend.schema()).sources["pinned.logs"]!.table;
      expect(await text(`SHOW CREATE TABLE ${db}.${table}`)).not.toMatch(/\bTTL\b/);
      await engine.owner.use((c) => c.command({ query: `OPTIMIZE TABLE ${db}.${table} FINAL` }));
      expect((await text(`SELECT id FROM ${db}.${table} ORDER BY id`)).trim()).toBe("kept");
      // a run by the engine's clock sets it (the test above: its merges expire old parts)
      await backend.applyRetention({ defaultDays: 30, perSource: {} }, nowMicros());
      expect(await text(`SHOW CREATE TABLE ${db}.${table}`)).toMatch(/\bTTL\b/);
    } finally {
      await backend.close();
    }
  });
});
