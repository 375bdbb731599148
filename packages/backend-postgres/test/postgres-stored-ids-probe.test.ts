import { type IngestBatch, logEventFromJson } from "@qes/core";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { PostgresStoredIds, type StoredIdsCheck } from "../src/postgres-stored-ids.ts";
import { dropStorage, ownerQuery, TEST_POSTGRES_URL, tableOf, uniqueSchema } from "./helpers.ts";

const NOW = 1_736_942_400_000_000n;

function batch(source: string, ids: string[], extra: Record<string, unknown> = {}): IngestBatch {
  return {
    source,
    events: ids.map((id, i) =>
      logEventFromJson(
        {
          id,
          timestamp: `2025-01-${String(10 + (i % 3)).padStart(2, "0")}T10:00:00Z`,
          event_message: "m",
          ...extra,
        },
        source,
        NOW,
        `event ${i}`,
      ),
    ),
  };
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Records whether each probe trusted the filter. */
class RecordingStoredIds extends PostgresStoredIds {
  readonly trusted: boolean[] = [];
  override async stored(client: pg.ClientBase, check: StoredIdsCheck, ids: string[]): Promise<Set<string>> {
    this.trusted.push(check.filter !== undefined);
    return super.stored(client, check, ids);
  }
}

/** Gives `backend` a fresh filter of ids (none built yet) whose builds connect once `open` is called. */
function gatedStoredIds(
  backend: PostgresBackend,
  options: { rebuildAfterStaleMs?: number; buildPage?: number } = {},
) {
  const pool: pg.Pool = backend["ownerPool"];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const gated = { connect: async () => (await gate, pool.connect()) } as unknown as pg.Pool;
  const ids = new RecordingStoredIds(gated, backend["config"].schema, options);
  Object.assign(backend, { storedIds: ids });
  return { ids, open };
}

function recorded(
  backend: PostgresBackend,
  options: { rebuildAfterStaleMs?: number; buildPage?: number } = {},
) {
  const ids = new RecordingStoredIds(backend["ownerPool"], backend["config"].schema, options);
  Object.assign(backend, { storedIds: ids });
  return ids;
}

/** Waits (polling pg_stat_activity) until `n` statements naming `schema` wait on a lock. */
async function waitForLockWaits(schema: string, n: number): Promise<void> {
  for (;;) {
    const { rows } = await ownerQuery<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like $1",
      [`%${schema}%`],
    );
    if (rows[0]!.n >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** id → rows stored with it, for the ids given. */
async function counts(backend: PostgresBackend, source: string, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await ownerQuery<{ id: string; n: string }>(
    `select id, count(*) as n from ${await tableOf(backend, source)} where id = any($1) group by id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

async function totalRows(backend: PostgresBackend, source: string): Promise<number> {
  const { rows } = await ownerQuery<{ n: string }>(
    `select count(*) as n from ${await tableOf(backend, source)}`,
  );
  return Number(rows[0]!.n);
}

describe("probes of the PostgreSQL filter of stored ids", () => {
  const schema = uniqueSchema("idprobe");
  let a: PostgresBackend;
  let b: PostgresBackend;
  beforeAll(async () => {
    a = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await a.init();
    b = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await b.init();
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await dropStorage(schema);
  });
  afterEach(async () => {
    await a["storedIds"].settled();
    await b["storedIds"].settled();
  });

  it("a build whose snapshot predates this process's own commit rewriting the table (a widening ALTER TYPE) still holds the ids stored before", async () => {
    const source = "probe.rewrite";
    const old = range("old", 300);
    expect(await a.ingest([batch(source, old, { n: 1 })])).toEqual([{ source, stored: 300, duplicates: 0 }]);
    const { ids, open } = gatedStoredIds(a, { rebuildAfterStaleMs: 0 });
    // another session reads the table: the widening below waits for it, and the build queues behind that
    const reader = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await reader.connect();
    try {
      await reader.query("begin");
      await reader.query(`lock table ${await tableOf(a, source)} in access share mode`);
      // INT64 → FLOAT64: ALTER COLUMN TYPE rewrites every partition
      const widening = a.ingest([batch(source, range("wide", 10), { n: 1.5 })]);
      await waitForLockWaits(schema, 1);
      open(); // the build (started by that ingest's check) starts now and waits for the table
      await waitForLockWaits(schema, 2);
      await reader.query("commit");
      expect(await widening).toEqual([{ source, stored: 10, duplicates: 0 }]);
    } finally {
      await reader.end();
    }
    await ids.settled();
    expect(await a.ingest([batch(source, old, { n: 2 })])).toEqual([{ source, stored: 0, duplicates: 300 }]);
    expect(ids.trusted.at(-1)).toBe(true);
    expect(await totalRows(a, source)).toBe(310);
  });
});
