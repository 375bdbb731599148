import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPrivateCluster,
  type PrivateCluster,
} from "../../packages/backend-postgres/test/private-cluster.ts";
import { ingestEnv, postLogs } from "../http/support/ingest.ts";
import type { BackendFixture } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { serveFixture } from "../support/serve-fixture.ts";

const DAY = 86_400_000;
/** ingestEnv's served clock */
const NOW = Date.parse("2025-01-15T12:00:00Z");
const daysAgo = (n: number) => new Date(NOW - n * DAY).toISOString();
const line = (id: string, at: string) => JSON.stringify({ id, timestamp: at, event_message: id });

/**
 * A source's days on a PostgreSQL server whose lock table is small (10 locks × 20 connections):
 * a scan of a source without a time filter locks each day's partition and its three indexes, and
 * this server runs out at about 150 days where the default one (64 × 100) does at about 2,600 —
 * so a test reproduces in seconds what takes thousands of partitions there.
 */
describe("PostgreSQL: a source holds no more days than the server can scan", () => {
  let cluster: PrivateCluster;
  let schemas = 0;
  beforeAll(async () => {
    cluster = await createPrivateCluster({ max_locks_per_transaction: "10", max_connections: "20" });
    await cluster.start();
  }, 60_000);
  afterAll(() => cluster?.destroy());

  const fixture = (): BackendFixture => ({
    name: "postgres",
    async create() {
      const schema = `qes_days_${schemas++}`;
      const backend = createPostgresBackend({ url: cluster.url, schema, pool: 2 });
      await backend.init();
      return {
        backend,
        async dispose() {
          await backend.close();
          await dropPostgresStorage(cluster.url, schema);
        },
      };
    },
  });

  it("start-up warns of a retention that keeps more days than a source may hold, forever included, and still starts", async () => {
    // 10 × 20 locks, 4 a day, half of them: 25 days; ingest takes 22 days of the past, 3 more are held
    for (const retention of ["30", "0", "7,big.logs=0", "23"]) {
      const logs: { level: number; msg: string }[] = [];
      const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: retention }), logs);
      await served.close();
      const warnings = logs.filter((l) => l.level === 40).map((l) => l.msg);
      expect(warnings, retention).toContainEqual(
        expect.stringMatching(
          /^QES_RETENTION_DAYS: .* more days than a source may hold on this store \(25: .*max_locks_per_transaction.*\)\. Ingest refuses events older than 22 days; .* Set a retention of at most 22 days, or raise the bound\.$/,
        ),
      );
    }
    const logs: { level: number; msg: string }[] = [];
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "22" }), logs);
    await served.close();
    expect(
      logs.filter((l) => l.level === 40 && String(l.msg).includes("more days than a source may hold")),
    ).toEqual([]);
  });

  it("kept forever (0), a source takes the days the store holds and refuses older ones, naming the store's bound", async () => {
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "0" }));
    try {
      // a backfill past the 22 days of the past this server holds per source: refused whole
      const events = Array.from({ length: 30 }, (_, d) => ({
        id: `f${d}`,
        timestamp: daysAgo(d),
        event_message: "f",
      }));
      const r = await postLogs(served.url, "forever.logs", JSON.stringify(events));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(
        /^event 23: "timestamp" .* is older than this store takes: a source holds at most 22 days of the past here, so events before 2024-12-24T00:00:00\.000Z are refused \(PostgreSQL keeps a partition per day .*max_locks_per_transaction/,
      );
      expect((await served.backend.schema()).sources["forever.logs"]).toBeUndefined();
      // the days it holds are taken, and kept: retention 0 drops nothing
      expect((await postLogs(served.url, "forever.logs", JSON.stringify(events.slice(0, 23)))).status).toBe(
        200,
      );
      await served.service.retention.run();
      expect(await runSql(served.backend, "select count(*) as n from `forever.logs`")).toEqual([{ n: 23 }]);
    } finally {
      await served.close();
    }
  });

  it("refuses a token's events spread past the days the store holds, naming the first; the store keeps answering and retention drops old days", async () => {
    const served = await serveFixture(
      fixture(),
      {
        // loaded before start-up, older than the retention: its first run drops them
        "expired.logs": [1, 2, 3].map((d) => line(`e${d}`, daysAgo(20 + d))),
        "steady.logs": [0, 1, 2].map((d) => line(`s${d}`, daysAgo(d))),
      },
      ingestEnv({ QES_RETENTION_DAYS: "7" }),
    );
    try {
      const retention = await served.service.retention.firstRun;
      expect(retention.find((r) => r.source === "expired.logs")).toMatchObject({
        deletedEvents: 3,
        droppedPartitions: 3,
      });
      // a backfill of a year, 20 days a request: the store takes 22 days of the past, whatever
      // the retention (older than 7 days, they are stored and go at the next run)
      for (let start = 0; start < 360; start += 20) {
        const events = Array.from({ length: 20 }, (_, i) => ({
          id: `h${start + i}`,
          timestamp: daysAgo(start + i),
          event_message: "h",
        }));
        const r = await postLogs(served.url, "hostile.logs", JSON.stringify(events));
        if (start === 0) {
          expect(r.status).toBe(200);
          continue;
        }
        expect(r.status, `days ${start}…`).toBe(400);
        expect(r.body.error.code).toBe("invalid_event");
        const first = Math.max(0, 23 - start);
        expect(r.body.error.message).toMatch(
          new RegExp(
            `^event ${first}: "timestamp" .* is older than this store takes: a source holds at most 22 days of the past here, so events before 2024-12-24T00:00:00\\.000Z are refused`,
          ),
        );
      }
      expect(await runSql(served.backend, "select count(*) as n from `hostile.logs`")).toEqual([{ n: 20 }]);
      // retention drops what is older than 7 days; every source answers without a time filter
      await served.service.retention.run();
      const more = [{ id: "s3", timestamp: daysAgo(0), event_message: "s3" }];
      expect((await postLogs(served.url, "steady.logs", JSON.stringify(more))).status).toBe(200);
      expect(await runSql(served.backend, "select count(*) as n from `hostile.logs`")).toEqual([{ n: 8 }]);
      expect(await runSql(served.backend, "select count(*) as n from `steady.logs`")).toEqual([{ n: 4 }]);
    } finally {
      await served.close();
    }
  });
});
