import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs, QUERY_TOKEN } from "./support/ingest.ts";
import { metricSum, scrape } from "./support/prometheus.ts";

/**
 * `/metrics`' per-source gauges (issue 13) follow what this server's ingest and retention change:
 * a scrape right after a 200 counts the request's events, a source ingest just created is in it,
 * and a retention run's removals show at the next scrape, not up to a cache lifetime later.
 */
describe.each(BACKENDS)("per-source metrics after ingest and retention on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_RETENTION_DAYS: "30,follow.short=1" }));
    await served.service.retention.firstRun;
  });
  afterAll(() => served?.close());

  const events = (prefix: string, n: number, timestamp = "2025-01-15T11:00:00Z") =>
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        id: `${prefix}${i}`,
        timestamp,
        event_message: `${prefix}${i}`,
      })),
    );
  const value = async (metric: string, source: string) =>
    metricSum(await scrape(served.url, QUERY_TOKEN), metric, { source });

  it("count each acknowledged request's events at the next scrape, in a source ingest created", async () => {
    expect(await value("qes_source_events", "follow.fresh")).toBe(0);
    const counts: number[] = [];
    const ingest = async (round: number, n: number) => {
      expect((await postLogs(served.url, "follow.fresh", events(`r${round}-`, n))).status).toBe(200);
      counts.push(await value("qes_source_events", "follow.fresh"));
    };
    for (const [round, n] of [3, 40, 17].entries()) await ingest(round, n);
    // PostgreSQL: an ANALYZE (here the service's own pass, as autovacuum's) fixes the planner's
    // estimate at 60; the events after it count too
    await served.service.statistics.run();
    await ingest(3, 7);
    expect(counts).toEqual([3, 43, 60, 67]);
  });

  it("drop what a retention run removed at the next scrape", async () => {
    const body = `${events("old-", 4, "2025-01-10T00:00:00Z").slice(0, -1)},${events("new-", 2).slice(1)}`;
    expect((await postLogs(served.url, "follow.short", body)).status).toBe(200);
    expect(await value("qes_source_events", "follow.short")).toBe(6);
    expect(await value("qes_source_oldest_event_age_seconds", "follow.short")).toBe(5 * 86_400 + 12 * 3600);
    const reports = await served.service.retention.run();
    expect(reports.find((r) => r.source === "follow.short")?.deletedEvents).toBe(4);
    expect(await value("qes_source_events", "follow.short")).toBe(2);
    expect(await value("qes_source_oldest_event_age_seconds", "follow.short")).toBe(3600);
  });
});
