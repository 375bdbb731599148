import { type Backend, type IngestBatch, logEventFromJson, parseJsonText } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

const DAY = 86_400_000_000n;
const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z
const TODAY = NOW - (NOW % DAY);

function eventsAt(source: string, ages: [string, bigint][]): IngestBatch {
  return {
    source,
    events: ages.map(([id, micros]) =>
      logEventFromJson(
        parseJsonText(JSON.stringify({ id, timestamp: Number(micros), event_message: id })),
        source,
        NOW,
      ),
    ),
  };
}

async function ids(backend: Backend, source: string): Promise<string[]> {
  const rows = await runSql(backend, `select id from \`${source}\` order by id`);
  return rows.map((r) => r.id as string);
}

describe.each(BACKENDS)("retention on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  it("removes whole UTC days older than each source's days, keeps the rest and 0-day sources", async () => {
    // with 2 days: today and the 2 days before are kept; the start of that day is the cutoff
    const ages: [string, bigint][] = [
      ["a-today", NOW - 1n],
      ["b-kept-first-instant", TODAY - 2n * DAY],
      ["c-gone-last-instant", TODAY - 2n * DAY - 1n],
      ["d-gone-old", TODAY - 40n * DAY],
    ];
    await backend.ingest([
      eventsAt("retention.short", ages),
      eventsAt("retention.forever", ages),
      eventsAt("retention.default", ages),
    ]);
    const reports = await backend.applyRetention(
      { defaultDays: 30, perSource: { "retention.short": 2, "retention.forever": 0 } },
      NOW,
    );
    expect(await ids(backend, "retention.short")).toEqual(["a-today", "b-kept-first-instant"]);
    expect(await ids(backend, "retention.forever")).toEqual(ages.map(([id]) => id));
    expect(await ids(backend, "retention.default")).toEqual([
      "a-today",
      "b-kept-first-instant",
      "c-gone-last-instant",
    ]);
    const short = reports.find((r) => r.source === "retention.short");
    expect(short?.deletedEvents).toBe(2);
    expect(reports.find((r) => r.source === "retention.default")?.deletedEvents).toBe(1);
    expect(reports.find((r) => r.source === "retention.forever")).toBeUndefined();

    // a second run finds nothing more
    const again = await backend.applyRetention(
      { defaultDays: 30, perSource: { "retention.short": 2, "retention.forever": 0 } },
      NOW,
    );
    expect(again.reduce((n, r) => n + r.deletedEvents, 0)).toBe(0);
  });

  it("reports events, bytes and the oldest event per source, after retention too", async () => {
    await backend.ingest([
      eventsAt("stats.src", [
        ["s0", TODAY - 50n * DAY],
        ["s1", TODAY - DAY],
        ["s2", NOW],
      ]),
    ]);
    expect((await backend.sourceStats()).find((s) => s.source === "stats.src")?.oldestMicros).toBe(
      TODAY - 50n * DAY,
    );
    await backend.applyRetention({ defaultDays: 30, perSource: {} }, NOW);
    const stats = (await backend.sourceStats()).find((s) => s.source === "stats.src");
    expect(stats?.oldestMicros).toBe(TODAY - DAY);
    expect(stats?.bytes).toBeGreaterThan(0);
    const empty = (await backend.sourceStats()).find((s) => s.source === "gotrue.logs.prod");
    expect(empty).toMatchObject({ oldestMicros: null });
  });

  it("runs while ingest creates and fills a source: acknowledged events inside the retention all stay, older ones go", async () => {
    // the real clock: ClickHouse's TTL, which the run sets, expires parts by it in the background
    const now = BigInt(Date.now()) * 1000n;
    const today = now - (now % DAY);
    const policy = { defaultDays: 30, perSource: { "retention.race": 2 } };
    const acknowledged: string[] = [];
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 8; round++) {
      for (let client = 0; client < 3; client++) {
        const batch = eventsAt("retention.race", [
          [`new-${round}-${client}`, now - 1n],
          [`edge-${round}-${client}`, today - 2n * DAY],
          [`old-${round}-${client}`, today - 2n * DAY - 1n],
        ]);
        work.push(backend.ingest([batch]).then(() => acknowledged.push(...batch.events.map((e) => e.id))));
      }
      work.push(backend.applyRetention(policy, now));
    }
    await Promise.all(work);
    await backend.applyRetention(policy, now);
    const kept = acknowledged.filter((id) => !id.startsWith("old-")).sort();
    expect(acknowledged).toHaveLength(8 * 3 * 3);
    expect(await ids(backend, "retention.race")).toEqual(kept);
  });
});
