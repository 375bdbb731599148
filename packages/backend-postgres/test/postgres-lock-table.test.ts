import { isQesError, type QesError } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, dropPostgresStorage } from "../src/index.ts";
import { handQuery, scalar } from "./helpers.ts";
import { createPrivateCluster, type PrivateCluster } from "./private-cluster.ts";

/** one event on each of `days` days */
function* spreadOver(days: number): Generator<string> {
  for (let d = 0; d < days; d++) {
    yield JSON.stringify({
      id: `d${d}`,
      timestamp: new Date(Date.UTC(2020, 0, 1) + d * 86_400_000).toISOString(),
    });
  }
}

// a load takes locks on each day's partition and its indexes; a server with a small lock table
// stands in for thousands of days on the default one (3,000 days: "out of shared memory")
describe("a load over more days than PostgreSQL's lock table holds", () => {
  let cluster: PrivateCluster;
  beforeAll(async () => {
    cluster = await createPrivateCluster({ max_locks_per_transaction: "10", max_connections: "10" });
    await cluster.start();
  }, 60_000);
  afterAll(() => cluster.destroy());

  it("tells the days a source may hold: half the lock table, so a source at them scans alongside others", async () => {
    const backend = createPostgresBackend({ url: cluster.url, schema: "qes_limit", pool: 2 });
    try {
      expect(backend.sourceDayLimit).toBeUndefined(); // read from the server at init
      await backend.init();
      // 10 locks × 10 connections, 4 a day (the partition and its 3 indexes), half of them
      expect(backend.sourceDayLimit?.days).toBe(12);
      expect(backend.sourceDayLimit?.reason).toMatch(
        /max_locks_per_transaction 10 × \(max_connections \+ max_prepared_transactions\) 10 = 100 locks; one source may take half of it, 12 days\)\. Raise max_locks_per_transaction/,
      );
      await backend.load("full.logs", spreadOver(12));
      await backend.load("other.logs", spreadOver(12));
      const count = (table: string) =>
        backend.execute(
          handQuery(`select count(*)::int as n from qes_limit.${table}`, [scalar("n", "INT64")]),
          [],
          { maxRows: 1, timeoutMs: 30_000 },
        );
      const schema = await backend.schema();
      const [full, other] = ["full.logs", "other.logs"].map((s) => schema.sources[s]!.table);
      const answers = await Promise.all([count(full!), count(full!), count(other!)]);
      expect(answers.map((a) => a.rows[0]?.n)).toEqual([12, 12, 12]);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it("drops a schema of more sources than one transaction can lock", async () => {
    // DROP SCHEMA … CASCADE alone locked every table and index at once: it failed here at 49
    // sources (at 1,000 on a server with the defaults)
    const backend = createPostgresBackend({ url: cluster.url, schema: "qes_many", pool: 2 });
    await backend.init();
    try {
      for (let i = 0; i < 40; i++) await backend.load(`s${i}.logs`, spreadOver(2));
    } finally {
      await backend.close();
    }
    await dropPostgresStorage(cluster.url, "qes_many");
    const owner = createPostgresBackend({ url: cluster.url, schema: "qes_probe", pool: 1 });
    try {
      await owner.init();
      const left = await owner.execute(
        handQuery("select count(*)::int as n from pg_namespace where nspname = 'qes_many'", [
          scalar("n", "INT64"),
        ]),
        [],
        { maxRows: 1, timeoutMs: 10_000 },
      );
      expect(left.rows[0]?.n).toBe(0);
    } finally {
      await owner.close();
      await dropPostgresStorage(cluster.url, "qes_probe");
    }
  }, 60_000);

  it("is refused naming the lock table and what to do, not reported as PostgreSQL being down", async () => {
    const backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2 });
    try {
      await backend.init();
      const error = await backend.load("backfill.logs", spreadOver(400)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isQesError(error)).toBe(true);
      expect((error as QesError).code).toBe("sql_too_complex");
      expect((error as QesError).message).toMatch(/lock table is full .*split a load by time/);
      // nothing of it was stored, and the server still answers
      expect((await backend.schema()).sources["backfill.logs"]).toBeUndefined();
      await backend.load("backfill.logs", spreadOver(3));
      expect(Object.keys((await backend.schema()).sources)).toContain("backfill.logs");
    } finally {
      await backend.close();
    }
  }, 120_000);

  it("refuses an ingest that meets a lock table others filled as 503 with Retry-After, and takes it once they let go", async () => {
    // a shipper is told to send again (Vector drops a batch on a 4xx such as the 422 it got)
    const backend = createPostgresBackend({ url: cluster.url, schema: "qes_busy", pool: 2 });
    const holder = new pg.Client({ connectionString: cluster.url });
    await holder.connect();
    try {
      await backend.init();
      const day = 86_400_000_000n;
      const now = BigInt(Date.now()) * 1000n;
      const events = (tag: string) =>
        Array.from({ length: 4 }, (_, d) => ({
          id: `${tag}${d}`,
          timestamp: now - BigInt(d) * day,
          body: { event_message: `${tag} ${d}` },
        }));
      // another transaction takes every lock the table has room for (a table it creates, each)
      await holder.query("begin");
      for (let i = 0; ; i++) {
        await holder.query("savepoint s");
        try {
          await holder.query(`create temp table held_${i} (x int)`);
          await holder.query("release savepoint s");
        } catch {
          await holder.query("rollback to savepoint s");
          break;
        }
      }
      const refused = await backend.ingest([{ source: "busy.logs", events: events("a") }]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isQesError(refused)).toBe(true);
      expect((refused as QesError).code).toBe("backend_unavailable");
      expect((refused as QesError).retryAfterSeconds).toBeGreaterThan(0);
      expect((refused as QesError).message).toMatch(/lock table is full .*send again/);
      await holder.query("rollback");
      expect(await backend.ingest([{ source: "busy.logs", events: events("a") }])).toEqual([
        { source: "busy.logs", stored: 4, duplicates: 0 },
      ]);
    } finally {
      await holder.end();
      await backend.close();
    }
  }, 120_000);
});
