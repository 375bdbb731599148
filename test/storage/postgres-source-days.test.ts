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
/** an event a day for `n` days from `from` days ago on, ids `<prefix><days ago>` */
const dayEvents = (prefix: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${from + i}`,
    timestamp: daysAgo(from + i),
    event_message: prefix,
  }));

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
          /^QES_RETENTION_DAYS: .* more days than a source may hold on this store \(25: .*max_locks_per_transaction.*\)\. Ingest takes events older than 22 days only while a source holds fewer days; .* Set a retention of at most 22 days, or raise the bound\.$/,
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

  it("kept forever (0), a source takes old days while it holds fewer than the store's bound, and recent days always", async () => {
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "0" }));
    try {
      // 10 × 20 locks, 4 a day, half of them: 25 days a source may hold; the 22 days of the past
      // (and today) are always taken, an older day only while the source holds fewer than 25
      const events = dayEvents("f", 0, 30);
      const r = await postLogs(served.url, "forever.logs", JSON.stringify(events));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(
        /^event 25: its day 2024-12-21 would be source "forever\.logs"'s 26th day, past the 25 a source may hold here \(PostgreSQL keeps a partition per day .*max_locks_per_transaction.*\)\. Days from 2024-12-24 on are always taken/,
      );
      // refused whole: nothing of the request is stored, not even its new source
      expect((await served.backend.schema()).sources["forever.logs"]).toBeUndefined();
      expect((await postLogs(served.url, "forever.logs", JSON.stringify(events.slice(0, 25)))).status).toBe(
        200,
      );
      // at the bound: an older day is refused, today and tomorrow are still taken (a source kept
      // forever goes on taking its new days; its scans without a time filter are then the risk,
      // which start-up warned of)
      const older = [{ id: "old", timestamp: daysAgo(40), event_message: "old" }];
      expect((await postLogs(served.url, "forever.logs", JSON.stringify(older))).status).toBe(400);
      const recent = [
        { id: "today", timestamp: daysAgo(0), event_message: "today" },
        { id: "tomorrow", timestamp: daysAgo(-0.5), event_message: "tomorrow" },
      ];
      expect((await postLogs(served.url, "forever.logs", JSON.stringify(recent))).status).toBe(200);
      await served.service.retention.run();
      expect(await runSql(served.backend, "select count(*) as n from `forever.logs`")).toEqual([{ n: 27 }]);
    } finally {
      await served.close();
    }
  });

  it("takes old days up to half its bound, so old and every recent day together stay within three quarters of the lock table", async () => {
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "0" }));
    try {
      const days = (from: number, n: number) => JSON.stringify(dayEvents("d", from, n));
      // 25 days a source may hold here: 12 of them older than the 22 days of the past always taken
      const r = await postLogs(served.url, "halves.logs", days(30, 13));
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(
        /^event 12: its day 2024-12-04 would be source "halves\.logs"'s 13th day before 2024-12-24, past the 12 \(half its days\) a source may hold here/,
      );
      expect((await postLogs(served.url, "halves.logs", days(30, 12))).status).toBe(200);
      // every recent day is still taken: 12 + 23 = 35 days, not the 12 + 25 old days could have made
      expect((await postLogs(served.url, "halves.logs", days(0, 23))).status).toBe(200);
      expect((await postLogs(served.url, "halves.logs", days(60, 1))).status).toBe(400);
      expect(await runSql(served.backend, "select count(*) as n from `halves.logs`")).toEqual([{ n: 35 }]);
    } finally {
      await served.close();
    }
  });

  it("takes a backfill of logs years old, which retention then removes", async () => {
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "7" }));
    try {
      const events = ["2019-06-01T10:00:00Z", "2020-01-01T00:00:00Z", daysAgo(1)].map((t, i) => ({
        id: `b${i}`,
        timestamp: t,
        event_message: "b",
      }));
      const r = await postLogs(served.url, "backfill.logs", JSON.stringify(events));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(await runSql(served.backend, "select count(*) as n from `backfill.logs`")).toEqual([{ n: 3 }]);
      const [report] = (await served.service.retention.run()).filter((x) => x.source === "backfill.logs");
      expect(report).toMatchObject({ deletedEvents: 2, droppedPartitions: 2 });
      expect(await runSql(served.backend, "select id from `backfill.logs`")).toEqual([{ id: "b2" }]);
    } finally {
      await served.close();
    }
  });

  it("an NDJSON body's refused day names the event's line too, parsed on a worker or on the main thread", async () => {
    const served = await serveFixture(fixture(), {}, ingestEnv({ QES_RETENTION_DAYS: "0" }));
    try {
      // a blank line first and one between events: event 25 is on line 52
      const ndjson = (prefix: string) =>
        `\n${Array.from({ length: 30 }, (_, d) => line(`${prefix}${d}`, daysAgo(d))).join("\n\n")}\n`;
      const ndjsonHeaders = { "Content-Type": "application/x-ndjson" };
      // a new source: parsed on the main thread; a known one whose fields cover the events: on a worker
      expect((await postLogs(served.url, "known.logs", line("k", daysAgo(0)))).status).toBe(200);
      for (const source of ["new.logs", "known.logs"]) {
        const r = await postLogs(served.url, source, ndjson(source), ndjsonHeaders);
        expect(r.status, source).toBe(400);
        expect(r.body.error.message, source).toMatch(/^event 25 \(line 52\): its day 2024-12-21 would be /);
        expect(r.body.error.line, source).toBe(52);
      }
    } finally {
      await served.close();
    }
  });

  it("refuses a token's old days past the store's bound, naming the first; the store keeps answering and retention drops old days", async () => {
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
      // a backfill of a year, 20 days a request: the source takes days until it holds 25
      // (older than 7 days, they are stored and go at the next run)
      for (let start = 0; start < 360; start += 20) {
        const events = dayEvents("h", start, 20);
        const r = await postLogs(served.url, "hostile.logs", JSON.stringify(events));
        if (start === 0) {
          expect(r.status).toBe(200);
          continue;
        }
        expect(r.status, `days ${start}…`).toBe(400);
        expect(r.body.error.code).toBe("invalid_event");
        // 20 days held, 5 more may open: the request's sixth day is refused
        expect(r.body.error.message).toMatch(
          /^event 5: its day .* would be source "hostile\.logs"'s 26th day/,
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
