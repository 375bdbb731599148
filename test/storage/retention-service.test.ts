import { loadConfig } from "@qes/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";

const NOW = "2025-01-15T12:00:00Z";

function line(id: string, timestamp: string): string {
  return JSON.stringify({ id, timestamp, event_message: id, project: "p" });
}

describe.each(BACKENDS)("the service's retention on $name", (fixture) => {
  let served: ServedFixture;
  const logs: { level: number; msg: string }[] = [];
  beforeAll(async () => {
    served = await serveFixture(
      fixture,
      {
        "cloudflare.logs.prod": [
          line("edge-old", "2025-01-10T08:00:00Z"),
          line("edge-new", "2025-01-14T08:00:00Z"),
        ],
        "postgres.logs": [line("pg-old", "2024-11-01T00:00:00Z"), line("pg-new", NOW)],
      },
      {
        QES_TEST_NOW: NOW,
        QES_API_KEYS: "retention-test-token-0123456789",
        QES_RETENTION_DAYS: "60,cloudflare.logs.prod=3,Postgres.Logs=7",
      },
      logs,
    );
  });
  afterAll(() => served?.close());

  it("runs at start-up with each source's days, against the service's clock", async () => {
    const reports = await served.service.retention.firstRun;
    expect(reports.find((r) => r.source === "cloudflare.logs.prod")?.deletedEvents).toBe(1);
    expect(reports.find((r) => r.source === "postgres.logs")?.deletedEvents).toBe(1);
    const ids = async (source: string) =>
      (await runSql(served.backend, `select id from \`${source}\` order by id`)).map((r) => r.id);
    expect(await ids("cloudflare.logs.prod")).toEqual(["edge-new"]);
    expect(await ids("postgres.logs")).toEqual(["pg-new"]);
    expect(logs.some((l) => l.msg === "retention run")).toBe(true);
  });

  it("warns at start-up when a stored query reads further back than its source keeps", () => {
    const warnings = logs.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /usage\.api-counts reads up to 7 days of cloudflare\.logs\.prod, which keeps 3 days/,
      ),
    );
    expect(warnings.some((w) => w.includes("postgres.logs"))).toBe(false);
  });

  it("warns at start-up when an override names a source the store does not hold (a misspelt one kept the default)", async () => {
    const warnings = logs.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toContainEqual(
      expect.stringMatching(/QES_RETENTION_DAYS names Postgres\.Logs, which the store does not hold/),
    );
    expect(warnings.some((w) => w.includes("names cloudflare.logs.prod"))).toBe(false);
    // and the source it meant kept the default: pg-old (75 days) is gone only by the 60 days
    expect(
      (await served.service.retention.firstRun).find((r) => r.source === "postgres.logs")?.deletedEvents,
    ).toBe(1);
  });

  it("exposes events, bytes and the oldest event's age per source on /metrics", async () => {
    const text = await (
      await fetch(`${served.url}/metrics`, { headers: { "x-api-key": "retention-test-token-0123456789" } })
    ).text();
    expect(text).toMatch(/qes_source_events\{source="postgres\.logs"[^}]*\} 1\b/);
    expect(text).toMatch(/qes_source_bytes\{source="postgres\.logs"[^}]*\} \d+/);
    // the oldest kept event of postgres.logs is NOW itself: age 0 against the pinned clock
    expect(text).toMatch(/qes_source_oldest_event_age_seconds\{source="postgres\.logs"[^}]*\} 0\b/);
    expect(text).toMatch(
      /qes_source_oldest_event_age_seconds\{source="cloudflare\.logs\.prod"[^}]*\} 100800\b/,
    );
    expect(text).not.toMatch(/qes_source_oldest_event_age_seconds\{source="gotrue\.logs\.prod"/);
  });
});

describe("QES_RETENTION_DAYS at start-up", () => {
  it("stops with the variable's name on a bad value", () => {
    for (const bad of ["thirty", "30,postgres.logs=-1", "30,=7", "30,40", "30,a=1,a=2", "1e3", "30,,a=1"]) {
      expect(() => loadConfig({ NODE_ENV: "test", QES_RETENTION_DAYS: bad })).toThrow(/QES_RETENTION_DAYS/);
    }
  });

  it("reads a default and per-source overrides; unset is 30 days", () => {
    expect(loadConfig({ NODE_ENV: "test" }).retention).toEqual({ defaultDays: 30, perSource: {} });
    expect(
      loadConfig({
        NODE_ENV: "test",
        QES_RETENTION_DAYS: "30,postgres.logs=7, cloudflare.logs.prod = 90,x=0",
      }).retention,
    ).toEqual({ defaultDays: 30, perSource: { "postgres.logs": 7, "cloudflare.logs.prod": 90, x: 0 } });
    expect(loadConfig({ NODE_ENV: "test", QES_RETENTION_DAYS: "0" }).retention.defaultDays).toBe(0);
  });
});
