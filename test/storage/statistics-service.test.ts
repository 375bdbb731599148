import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, TEST_POSTGRES_URL } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";

/** 1,500 events over three days: a load large enough to analyze its table */
function* lines(): Generator<string> {
  for (let i = 0; i < 1500; i++)
    yield JSON.stringify({
      id: `s${i}`,
      timestamp: new Date(Date.UTC(2025, 0, 12) + i * 150_000).toISOString(),
      event_message: `m${i % 17}`,
      project: "p",
      metadata: { level: i % 3 ? "info" : "error" },
    });
}

async function autovacuumOn(): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ on: boolean }>(
      "select current_setting('autovacuum')::boolean and current_setting('track_counts')::boolean as on",
    );
    return rows[0]!.on;
  } finally {
    await client.end();
  }
}

describe.each(BACKENDS)("the service's statistics pass on $name", (fixture) => {
  let served: ServedFixture;
  const logs: { level?: number; msg?: string; analyzed?: string[] }[] = [];
  beforeAll(async () => {
    // kept forever: retention at start-up would otherwise drop these days before they are analyzed
    served = await serveFixture(
      fixture,
      { "statistics.logs": lines() },
      { QES_API_KEYS: "statistics-test-token-0123456789", QES_RETENTION_DAYS: "0" },
      logs,
    );
  }, 60_000);
  afterAll(() => served?.close());

  it("runs at start-up where the engine does not keep statistics itself, and logs what it analyzed", async () => {
    const report = await served.service.statistics.firstRun;
    if (served.backend.refreshStatistics === undefined) {
      // DuckDB and ClickHouse keep their own: nothing to run
      expect(report).toEqual({ analyzed: [] });
      return;
    }
    if (await autovacuumOn()) {
      expect(report).toEqual({ analyzed: [], skipped: "autovacuum" });
      return;
    }
    // the load analyzed the four fixed columns only; its three day partitions are analyzed by a
    // pass once the server has the load's counts of changes (an idle connection reports them
    // within ~10 s: the start-up pass may come first)
    const analyzed = [...report.analyzed];
    for (const deadline = Date.now() + 30_000; analyzed.length < 3 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 500));
      analyzed.push(...(await served.service.statistics.run()).analyzed);
    }
    expect(analyzed).toHaveLength(3);
    expect(logs.filter((l) => l.msg === "statistics refreshed").flatMap((l) => l.analyzed)).toEqual(analyzed);
    // and once analyzed, a pass on demand finds nothing left
    expect(await served.service.statistics.run()).toEqual({ analyzed: [] });
  }, 60_000);
});
