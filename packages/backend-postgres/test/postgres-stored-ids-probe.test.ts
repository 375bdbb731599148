import { type IngestBatch, logEventFromJson } from "@qes/core";
import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { dropStorage, ownerQuery, TEST_POSTGRES_URL, tableOf, uniqueSchema } from "./helpers.ts";
import {
  gatedStoredIds,
  type RecordingStoredIds,
  range,
  recorded,
  storedCounts,
  twoInstances,
} from "./stored-ids-support.ts";

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

async function totalRows(backend: PostgresBackend, source: string): Promise<number> {
  const { rows } = await ownerQuery<{ n: string }>(
    `select count(*) as n from ${await tableOf(backend, source)}`,
  );
  return Number(rows[0]!.n);
}

describe("probes of the PostgreSQL filter of stored ids", () => {
  const instances = twoInstances("idprobe");
  const { schema } = instances;
  let a: PostgresBackend;
  let b: PostgresBackend;
  beforeEach(() => {
    ({ a, b } = instances);
  });

  it("a build whose snapshot predates this process's own commit rewriting the table (a widening ALTER TYPE) still holds the ids stored before", async () => {
    const source = "probe.rewrite";
    const old = range("old", 300);
    expect(await a.ingest([batch(source, old, { n: 1 })])).toEqual([{ source, stored: 300, duplicates: 0 }]);
    const { ids, open } = gatedStoredIds(a, { rebuildAfterMs: 0 });
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
    // the rewriting commit dropped the filter being read: every id is probed, and it is read again
    expect(await a.ingest([batch(source, old, { n: 2 })])).toEqual([{ source, stored: 0, duplicates: 300 }]);
    expect(ids.trusted.at(-1)).toBe(false);
    await ids.settled();
    expect(await a.ingest([batch(source, old, { n: 2 })])).toEqual([{ source, stored: 0, duplicates: 300 }]);
    expect(ids.trusted.at(-1)).toBe(true);
    expect(await totalRows(a, source)).toBe(310);
  });

  it("concurrent ingest calls of one process on one source, retrying each other's ids, store each id once", async () => {
    const source = "probe.concurrent";
    const ids = recorded(a, { rebuildAfterMs: 0 });
    await a.ingest([batch(source, ["seed"])]);
    await ids.settled();
    const all = range("c", 400);
    // 16 calls at once, each overlapping the one before by 25 ids
    const calls = Array.from({ length: 16 }, (_, k) => all.slice(Math.max(0, k * 25 - 25), (k + 1) * 25));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(calls.map((c) => a.ingest([batch(source, c)])));
      expect(results.reduce((n, r) => n + r[0]!.stored, 0)).toBe(round === 0 ? 400 : 0);
    }
    expect(ids.trusted.some((t) => t)).toBe(true);
    expect(await totalRows(a, source)).toBe(401);
  });

  it("one call for several sources (the same ids in each, repeated within batches) keeps each source's ids apart", async () => {
    const sources = ["probe.multi.a", "probe.multi.b", "probe.multi.c"];
    const ids = recorded(a, { rebuildAfterMs: 0 });
    const shared = range("shared", 100);
    const call = () =>
      sources.flatMap((s) => [batch(s, [...shared, ...shared.slice(0, 10)]), batch(s, shared.slice(50))]);
    expect((await a.ingest(call())).map((r) => r.stored)).toEqual([100, 0, 100, 0, 100, 0]);
    await ids.settled();
    expect((await a.ingest(call())).map((r) => r.stored)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(ids.trusted.slice(-3)).toEqual([true, true, true]); // the second batch of each source holds only ids seen in the call
    // b writes one source only: a's other filters stay trusted, that one does not
    await b.ingest([batch(sources[1]!, range("fromb", 20))]);
    expect((await a.ingest(sources.map((s) => batch(s, range("fromb", 20))))).map((r) => r.stored)).toEqual([
      20, 0, 20,
    ]);
    expect(ids.trusted.slice(-3)).toEqual([true, false, true]);
    for (const s of sources) expect(await totalRows(a, s)).toBe(120);
  });

  it("two instances interleaving ingest, load and retention on one source, each retrying the other's ids, store each id once", async () => {
    const source = "probe.interleave";
    const ra = recorded(a, { rebuildAfterMs: 0 });
    const rb = recorded(b, { rebuildAfterMs: 0 });
    const lines = (prefix: string) =>
      range(prefix, 50).map((id) =>
        JSON.stringify({ id, timestamp: "2025-01-12T08:00:00Z", event_message: id }),
      );
    const sent: string[] = [];
    for (let round = 0; round < 6; round++) {
      const [w, o] = round % 2 === 0 ? [a, b] : [b, a];
      const mine = range(`r${round}`, 60);
      await w.ingest([batch(source, [...sent.slice(-40), ...mine])]);
      await w.load(source, lines(`load${round}`));
      sent.push(...mine, ...range(`load${round}`, 50));
      let dropped = 0;
      if (round === 3) {
        // the day of 10 January goes: its ids are stored again by the retries below, once
        const [report] = await o.applyRetention({ defaultDays: 0, perSource: { [source]: 4 } }, NOW);
        expect(report!.droppedPartitions).toBe(1);
        dropped = report!.deletedEvents;
      }
      // the other one retries everything, concurrently with a retry by the writer
      const [x, y] = await Promise.all([
        o.ingest([batch(source, sent)]),
        w.ingest([batch(source, sent.slice(-200))]),
      ]);
      expect(x[0]!.stored + y[0]!.stored).toBe(dropped);
      if (round % 2 === 1) await Promise.all([ra.settled(), rb.settled()]);
    }
    expect(ra.trusted.some((t) => t) && rb.trusted.some((t) => t)).toBe(true);
    const c = await storedCounts(a, source, sent);
    expect({ distinct: c.size, max: Math.max(...c.values()) }).toEqual({ distinct: sent.length, max: 1 });
  });

  it("ids that differ only in case, spacing, normalisation or length, read back in pages that end between them, are each found", async () => {
    const source = "probe.hostile";
    const hostile = [
      "abc",
      "ABC",
      "Abc",
      " abc",
      "abc ",
      "a bc",
      "abc\t",
      "abc\n",
      "\u00e9",
      "e\u0301",
      "\u00c9",
      "E\u0301",
      "ß",
      "ss",
      "SS",
      "ẞ",
      "\u{1f600}",
      "\u{1f600}\u{1f600}",
      "İ",
      "i\u0307",
      "ı",
      "I",
      "x".repeat(1024),
      `${"x".repeat(1023)}y`,
      "é".repeat(512),
      "\u200b",
      "\ufeffabc",
      "a\\b",
      "a\\\\b",
      "%",
      "_",
      "'",
      '"',
      "NULL",
      "\\N",
      "10",
      "9",
      "010",
      "1e1",
    ];
    // (an id of whitespace only, as " " or "\u00a0", is no id: one is derived from the content)
    // pages of 1, 2 and 3 ids: every neighbour pair in the collation's order meets at a page end
    for (const page of [1, 2, 3]) {
      const s = `${source}${page}`;
      const ids = recorded(a, { buildPage: page, rebuildAfterMs: 0 });
      await a.ingest([batch(s, ["seed"])]);
      await ids.settled();
      recorded(a, { buildPage: page, rebuildAfterMs: 0 }); // forgets: read again from the table
      expect(await a.ingest([batch(s, hostile)])).toEqual([
        { source: s, stored: hostile.length, duplicates: 0 },
      ]);
      const built = a["storedIds"] as RecordingStoredIds;
      await built.settled();
      // a third filter, read only from the table (every id in a page of its own or with neighbours)
      const fresh = recorded(a, { buildPage: page, rebuildAfterMs: 0 });
      await a.ingest([batch(s, ["trigger"])]);
      await fresh.settled();
      expect(await a.ingest([batch(s, [...hostile].reverse())])).toEqual([
        { source: s, stored: 0, duplicates: hostile.length },
      ]);
      expect(fresh.trusted.at(-1)).toBe(true);
      expect(await totalRows(a, s)).toBe(hostile.length + 2);
    }
  });

  it("builds of several sources waiting for their tables leave the owner pool to ingest", async () => {
    const sources = ["probe.pool.a", "probe.pool.b", "probe.pool.c", "probe.pool.d"];
    for (const s of sources) await a.ingest([batch(s, ["seed"])]);
    await a.ingest([batch("probe.pool.other", ["seed"])]);
    await a["storedIds"].settled();
    const { ids, open } = gatedStoredIds(a);
    // each ingest starts a build (a fresh process has no filter), held back until `open`
    for (const s of sources) await a.ingest([batch(s, range("x", 3))]);
    // other sessions hold the tables (a long widening, a load into an empty table)
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await holder.connect();
    try {
      await holder.query("begin");
      for (const s of sources)
        await holder.query(`lock table ${await tableOf(a, s)} in access exclusive mode`);
      open();
      await waitForLockWaits(schema, 1);
      // no wait here ends before the holder commits: it fails by the test's timeout if the pool is held
      expect(await a.ingest([batch("probe.pool.other", range("y", 5))])).toEqual([
        { source: "probe.pool.other", stored: 5, duplicates: 0 },
      ]);
      await holder.query("commit");
    } finally {
      await holder.end();
    }
    await ids.settled();
    for (const s of sources) {
      expect(await a.ingest([batch(s, range("x", 3))])).toEqual([{ source: s, stored: 0, duplicates: 3 }]);
    }
    expect(ids.trusted.slice(-4)).toEqual([true, true, true, true]);
  });

  it("an instance still alive when the storage is dropped and made again trusts nothing of the old storage", async () => {
    const own = uniqueSchema("idprobe_drop");
    const source = "probe.dropped";
    const old = createPostgresBackend({ url: TEST_POSTGRES_URL, schema: own, pool: 2 });
    await old.init();
    try {
      const ids = recorded(old, { rebuildAfterMs: 0 });
      await old.ingest([batch(source, range("before", 50))]);
      await ids.settled();
      await old.ingest([batch(source, range("before2", 5))]);
      expect(ids.trusted.at(-1)).toBe(true);
      await dropStorage(own);
      const fresh = createPostgresBackend({ url: TEST_POSTGRES_URL, schema: own, pool: 2 });
      await fresh.init();
      try {
        // the new storage holds ids the old instance's filter never saw, under a token it never saw
        await fresh.ingest([batch(source, range("after", 50))]);
        expect(await old.ingest([batch(source, [...range("after", 50), ...range("before", 50)])])).toEqual([
          { source, stored: 50, duplicates: 50 },
        ]);
        expect(ids.trusted.at(-1)).toBe(false);
        await ids.settled();
        // and the other way round: the new instance's filter, then the old one writes
        const rf = recorded(fresh, { rebuildAfterMs: 0 });
        await fresh.ingest([batch(source, ["t"])]);
        await rf.settled();
        await old.ingest([batch(source, range("old-again", 30))]);
        expect(await fresh.ingest([batch(source, range("old-again", 30))])).toEqual([
          { source, stored: 0, duplicates: 30 },
        ]);
        const c = await storedCounts(fresh, source, [
          ...range("after", 50),
          ...range("before", 50),
          ...range("old-again", 30),
        ]);
        expect({ distinct: c.size, max: Math.max(...c.values()) }).toEqual({ distinct: 130, max: 1 });
      } finally {
        await fresh.close();
      }
    } finally {
      await old.close();
      await dropStorage(own);
    }
  });

  it("a build whose connection is terminated leaves no connection behind, and the next build is trusted and complete", async () => {
    const source = "probe.killed";
    await a.ingest([batch(source, ["seed"])]);
    await ownerQuery(
      `insert into ${await tableOf(a, source)} (id, timestamp, event_message)
       select 'bulk-' || i, '2025-01-10T12:00:00Z', 'bulk' from generate_series(0, 4999) i`,
    );
    const ids = recorded(a, { buildPage: 1, rebuildAfterMs: 0 });
    await a.ingest([batch(source, ["trigger"])]); // starts a build of one id per statement: 5,000 of them
    // killed once it is reading pages (its last statement is one past the first)
    for (let killed = false; !killed; ) {
      const { rows } = await ownerQuery<{ ok: boolean }>(
        "select pg_terminate_backend(pid) as ok from pg_stat_activity where query like $1 and query like '%where id > $2%'",
        [`%${schema}%`],
      );
      killed = rows.some((r) => r.ok);
    }
    await ids.settled();
    const pool: pg.Pool = a["ownerPool"];
    expect(pool.totalCount - pool.idleCount).toBe(0);
    // no filter: the next commit probes every id, and builds again
    expect(await a.ingest([batch(source, ["seed", "bulk-7"])])).toEqual([
      { source, stored: 0, duplicates: 2 },
    ]);
    expect(ids.trusted.at(-1)).toBe(false);
    await ids.settled();
    const all = [...range("bulk", 5000), "seed", "trigger"];
    expect(await a.ingest([batch(source, all)])).toEqual([{ source, stored: 0, duplicates: all.length }]);
    expect(ids.trusted.at(-1)).toBe(true);
  });

  it("a filter that fills up mid-run is built again larger, and no retry is stored twice", async () => {
    const source = "probe.full";
    const ids = recorded(a, { rebuildAfterMs: 0 });
    await a.ingest([batch(source, ["seed"])]);
    await ids.settled(); // capacity 65,536 (the smallest)
    const all: string[] = [];
    for (let k = 0; k < 8; k++) {
      const mine = range(`full${k}`, 9000);
      // each call retries the previous call's ids and adds 9,000: the 8th passes the capacity
      expect(await a.ingest([batch(source, [...all.slice(-9000), ...mine])])).toEqual([
        { source, stored: 9000, duplicates: Math.min(all.length, 9000) },
      ]);
      all.push(...mine);
    }
    await ids.settled();
    expect(await a.ingest([batch(source, all)])).toEqual([{ source, stored: 0, duplicates: all.length }]);
    expect(ids.trusted.at(-1)).toBe(true);
    expect(await totalRows(a, source)).toBe(all.length + 1);
  });
});
