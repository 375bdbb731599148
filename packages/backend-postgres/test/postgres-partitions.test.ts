import { logEventFromJson, parseJsonText } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { listPartitions } from "../src/postgres-partitions.ts";
import { freshBackend, ownerQuery, TEST_POSTGRES_URL } from "./helpers.ts";

const DAY = 86_400_000_000n;
const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z
const SOURCE = "partitions.src";

function event(id: string, micros: bigint) {
  return logEventFromJson(
    parseJsonText(JSON.stringify({ id, timestamp: Number(micros), event_message: id })),
    SOURCE,
    NOW,
  );
}

describe("PostgreSQL daily partitions", () => {
  let backend: PostgresBackend;
  let schema: string;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ backend, schema, dispose } = await freshBackend("part"));
  });
  afterAll(async () => dispose());

  const table = async () => (await backend.schema()).sources[SOURCE]!.table;
  const partitionNames = async () =>
    (await listPartitions(backend["ownerPool"], schema, await table())).map((p) => p.name);

  it("ingest and load create one partition per UTC day; retention drops whole old partitions", async () => {
    await backend.ingest([
      {
        source: SOURCE,
        events: [event("old", NOW - 10n * DAY), event("mid", NOW - 3n * DAY), event("new", NOW)],
      },
    ]);
    await backend.load(SOURCE, [JSON.stringify({ id: "loaded", timestamp: "2025-01-14T23:59:59.999999Z" })]);
    const t = await table();
    expect(await partitionNames()).toEqual([
      `${t}_20250105`,
      `${t}_20250112`,
      `${t}_20250114`,
      `${t}_20250115`,
    ]);
    const { rows: kind } = await ownerQuery(
      "select relkind::text as k from pg_class where oid = $1::regclass",
      [`"${schema}"."${t}"`],
    );
    expect(kind[0].k).toBe("p");

    const reports = await backend.applyRetention({ defaultDays: 5, perSource: {} }, NOW);
    expect(reports.find((r) => r.source === SOURCE)).toEqual({
      source: SOURCE,
      deletedEvents: 1,
      droppedPartitions: 1,
    });
    expect(await partitionNames()).toEqual([`${t}_20250112`, `${t}_20250114`, `${t}_20250115`]);
    // the dropped partition's table is gone, not emptied
    const { rows } = await ownerQuery("select count(*)::int as n from pg_class where relname = $1", [
      `${t}_20250105`,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it("runs retention once across instances: a second instance skips while the first holds the lock", async () => {
    const other = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await other.init();
    try {
      const client = await backend["ownerPool"].connect();
      const { retentionLockKey } = await import("../src/postgres-retention.ts");
      await client.query("select pg_advisory_lock($1::bigint)", [retentionLockKey(schema)]);
      try {
        expect(await other.applyRetention({ defaultDays: 1, perSource: {} }, NOW)).toEqual([]);
      } finally {
        await client.query("select pg_advisory_unlock($1::bigint)", [retentionLockKey(schema)]);
        client.release();
      }
      expect((await other.applyRetention({ defaultDays: 1, perSource: {} }, NOW)).length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it("start-up turns a table from before partitioning into daily partitions, rows and indexes kept", async () => {
    await backend.ingest([{ source: "legacy.src", events: [] }]);
    const legacy = (await backend.schema()).sources["legacy.src"]!.table;
    const q = `"${schema}"."${legacy}"`;
    await ownerQuery(`drop table ${q}`);
    await ownerQuery(
      `create table ${q} (id text not null, "timestamp" timestamptz not null, event_message text, project text)`,
    );
    await ownerQuery(
      `insert into ${q} values ('x1', '2025-01-10 10:00:00+00', 'a', 'p'), ('x2', '2025-01-11 10:00:00+00', 'b', 'p')`,
    );
    const again = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await again.init();
    try {
      const parts = await listPartitions(again["ownerPool"], schema, legacy);
      expect(parts.map((p) => p.name)).toEqual([`${legacy}_20250110`, `${legacy}_20250111`]);
      const { rows } = await ownerQuery(`select id from ${q} order by id`);
      expect(rows.map((r) => r.id)).toEqual(["x1", "x2"]);
      const { rows: idx } = await ownerQuery(
        "select indexname from pg_indexes where schemaname = $1 and tablename = $2 order by 1",
        [schema, legacy],
      );
      expect(idx.map((r) => r.indexname)).toEqual([
        `${legacy}_id_idx`,
        `${legacy}_project_timestamp_idx`,
        `${legacy}_timestamp_idx`,
      ]);
      // and it takes new events
      expect(await again.ingest([{ source: "legacy.src", events: [event("x3", NOW)] }])).toEqual([
        { source: "legacy.src", stored: 1, duplicates: 0 },
      ]);
    } finally {
      await again.close();
    }
  });
});
