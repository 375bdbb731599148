import { logEventFromJson, parseJsonText } from "@qes/core";
import { describe, expect, it } from "vitest";
import { listPartitions } from "../src/postgres-partitions.ts";
import { freshBackend, TEST_POSTGRES_URL } from "./helpers.ts";

const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z
const SOURCE = "zone.src";

function event(id: string, timestamp: string) {
  return logEventFromJson(parseJsonText(JSON.stringify({ id, timestamp, event_message: id })), SOURCE, NOW);
}

/**
 * `QES_POSTGRES_URL` may carry `options` (a search_path, a hosted server's endpoint, a TimeZone
 * of its own). pg lets them replace the owner connections' `-c TimeZone=UTC` whole: partition
 * bounds then read back in another zone and were not found, so a second ingest of a day failed
 * ("relation … already exists") and retention dropped nothing, ever.
 */
describe.each(["Asia/Kolkata", "America/New_York", "Pacific/Kiritimati"])(
  "PostgreSQL with TimeZone=%s in the URL's options",
  (zone) => {
    it("keeps daily partitions and retention's cut on UTC days", async () => {
      const url = `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c TimeZone=${zone} -c work_mem=8MB`)}`;
      const { backend, schema, dispose } = await freshBackend("urltz", { url });
      try {
        await backend.ingest([
          {
            source: SOURCE,
            events: [event("out", "2025-01-12T23:59:59.999999Z"), event("today", "2025-01-15T01:00:00Z")],
          },
        ]);
        // the same days again: their partitions are found, not made twice
        await backend.ingest([
          {
            source: SOURCE,
            events: [event("in", "2025-01-13T00:00:00Z"), event("today-2", "2025-01-15T23:00:00Z")],
          },
        ]);
        await backend.load(SOURCE, [JSON.stringify({ id: "loaded", timestamp: "2025-01-12T12:00:00Z" })]);
        const table = (await backend.schema()).sources[SOURCE]!.table;
        const days = async () =>
          (await listPartitions(backend["ownerPool"], schema, table)).map((p) => p.name.slice(-8));
        expect(await days()).toEqual(["20250112", "20250113", "20250115"]);

        const reports = await backend.applyRetention({ defaultDays: 2, perSource: {} }, NOW);
        expect(reports.find((r) => r.source === SOURCE)).toMatchObject({
          deletedEvents: 2,
          droppedPartitions: 1,
        });
        expect(await days()).toEqual(["20250113", "20250115"]);
        const stats = (await backend.sourceStats()).find((s) => s.source === SOURCE);
        expect(stats?.oldestMicros).toBe(BigInt(Date.parse("2025-01-13T00:00:00Z")) * 1000n);
      } finally {
        await dispose();
      }
    });
  },
);
