import { type LogEvent, nowMicros } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { advisoryKey } from "../src/postgres-sql.ts";
import { freshBackend, TEST_POSTGRES_URL } from "./helpers.ts";

/**
 * Retention against an ingest that widens the source whose day it drops (DESIGN.md §10): the
 * ingest holds the source's table for writing (ROW EXCLUSIVE) while it waits for a second
 * source's load lock; retention meanwhile reaches the old partition; the ingest then adds a column
 * (ACCESS EXCLUSIVE on every partition). Neither may fail on a deadlock, and the day goes (in
 * this order retention's drop times out, 55P03, and the next run drops it).
 */
const DAY = 86_400_000_000n;
let fixture: Awaited<ReturnType<typeof freshBackend>>;
let backend: PostgresBackend;

beforeAll(async () => {
  fixture = await freshBackend("retlock", { pool: 8 });
  backend = fixture.backend;
});
afterAll(async () => fixture?.dispose());

const events = (ids: string[], at: bigint, body: Record<string, unknown> = {}): LogEvent[] =>
  ids.map((id) => ({ id, timestamp: at, body: { event_message: id, ...body } }));

describe("PostgreSQL retention while an ingest widens the same source", () => {
  it("neither deadlocks: the ingest commits and the old day is dropped", async () => {
    const now = nowMicros();
    await backend.ingest([
      { source: "lock.a", events: events(["old-1", "old-2"], now - 40n * DAY) },
      { source: "lock.a", events: events(["today-1"], now) },
      { source: "lock.b", events: events(["b-1"], now) },
    ]);
    // another session holds lock.b's load lock: the ingest below waits there, holding lock.a
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select pg_advisory_xact_lock($1::bigint)", [
        advisoryKey(`qes:load:${fixture.schema}:lock.b`),
      ]);
      const ingest = backend.ingest([
        { source: "lock.a", events: events(["today-2"], now, { widened: { field: 1 } }) },
        { source: "lock.b", events: events(["b-2"], now) },
      ]);
      await new Promise((r) => setTimeout(r, 300));
      const retention = backend.applyRetention({ defaultDays: 30, perSource: {} }, now);
      await new Promise((r) => setTimeout(r, 300));
      await holder.query("commit");
      const [ingested, reports] = await Promise.allSettled([ingest, retention]);
      expect(ingested).toMatchObject({ status: "fulfilled" });
      expect(reports).toMatchObject({ status: "fulfilled" });
      const removed = (await backend.applyRetention({ defaultDays: 30, perSource: {} }, now))
        .concat(reports.status === "fulfilled" ? reports.value : [])
        .filter((r) => r.source === "lock.a")
        .reduce((n, r) => n + r.deletedEvents, 0);
      expect(removed).toBe(2);
    } finally {
      await holder.end();
    }
  }, 60_000);
});
