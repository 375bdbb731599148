import { type LogEvent, nowMicros } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { listPartitions } from "../src/postgres-partitions.ts";
import { applyPostgresRetention } from "../src/postgres-retention.ts";
import { qualified } from "../src/postgres-sql.ts";
import { freshBackend, TEST_POSTGRES_URL } from "./helpers.ts";

/**
 * Retention counts a partition's events before it drops it. Counted inside the drop's
 * transaction, the count's lock on the partition was held while the drop waited for the source's
 * table: a widening that began meanwhile (it locks the table, then every partition) closed a
 * cycle, and PostgreSQL's deadlock detector failed the whole retention run (40P01), every other
 * source included. Here the retention session checks for deadlocks after 10 ms, so the cycle, if
 * there is one, is always found on retention's side.
 */
const DAY = 86_400_000_000n;
/** rows in the old partition: enough for the count to last while the widening starts */
const OLD_ROWS = 1_500_000;
let fixture: Awaited<ReturnType<typeof freshBackend>>;
let backend: PostgresBackend;

beforeAll(async () => {
  fixture = await freshBackend("retdead", { pool: 4 });
  backend = fixture.backend;
});
afterAll(async () => fixture?.dispose());

const events = (ids: string[], at: bigint): LogEvent[] =>
  ids.map((id) => ({ id, timestamp: at, body: { event_message: id } }));

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  return client;
}

describe("PostgreSQL retention while a widening starts during its count", () => {
  it("drops the old day without a deadlock, and the widening commits", async () => {
    const now = nowMicros();
    await backend.ingest([
      { source: "dead.a", events: events(["old-1"], now - 40n * DAY) },
      { source: "dead.a", events: events(["today-1"], now) },
      { source: "dead.b", events: events(["b-old"], now - 40n * DAY) },
    ]);
    const schema = (await backend.schema()).sources["dead.a"]!;
    const setup = await connect();
    const widening = await connect();
    const retention = await connect();
    try {
      const [old] = await listPartitions(setup, fixture.schema, schema.table);
      const oldTable = qualified(fixture.schema, old!.name);
      const parent = qualified(fixture.schema, schema.table);
      await setup.query(
        `insert into ${oldTable} (id, "timestamp", event_message)
         select 'bulk-' || g, (select "timestamp" from ${oldTable} limit 1), 'x' from generate_series(1, ${OLD_ROWS}) g`,
      );
      await setup.query(`analyze ${oldTable}`);
      await retention.query("set deadlock_timeout = '10ms'");
      // an ingest of today's events: it holds the source's table while it writes
      await widening.query("begin");
      await widening.query(
        `insert into ${parent} (id, "timestamp", event_message) values ('today-2', now(), 'x')`,
      );
      const run = applyPostgresRetention(
        retention,
        fixture.schema,
        await backend.schema(),
        { defaultDays: 30, perSource: {} },
        now,
      );
      // once retention counts the old day, the ingest widens the source (every partition)
      for (;;) {
        const { rows } = await setup.query(
          "select 1 from pg_stat_activity where pid = $1 and state = 'active' and query like 'select count(*)%'",
          [(retention as unknown as { processID: number }).processID],
        );
        if (rows.length > 0) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      const widened = widening.query(`alter table ${parent} add column widened text`).then(async () => {
        await widening.query("commit");
      });
      const [reports, altered] = await Promise.allSettled([run, widened]);
      expect(altered).toMatchObject({ status: "fulfilled" });
      expect(reports.status === "rejected" ? String(reports.reason) : "ok").toBe("ok");
      expect(reports).toMatchObject({ status: "fulfilled" });
      // what this run could not drop (its table busy), the next one drops; every source is done
      const again = await applyPostgresRetention(
        retention,
        fixture.schema,
        await backend.schema(),
        { defaultDays: 30, perSource: {} },
        now,
      );
      const removed = (source: string) =>
        [...(reports.status === "fulfilled" ? reports.value : []), ...again]
          .filter((r) => r.source === source)
          .reduce((n, r) => n + r.deletedEvents, 0);
      expect(removed("dead.a")).toBe(OLD_ROWS + 1);
      expect(removed("dead.b")).toBe(1);
    } finally {
      await widening.end().catch(() => undefined);
      await retention.end();
      await setup.end();
    }
  }, 120_000);
});
