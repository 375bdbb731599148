import { type IngestBatch, type IngestResult, logEventFromJson } from "@qes/core";
import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { ownerQuery, TEST_POSTGRES_URL, tableOf } from "./helpers.ts";
import { range, recorded, storedCounts, twoInstances } from "./stored-ids-support.ts";

const NOW = 1_736_942_400_000_000n;
const SOURCE = "dedupe.logs";

function batch(ids: string[], source = SOURCE): IngestBatch {
  return {
    source,
    events: ids.map((id, i) =>
      logEventFromJson(
        {
          id,
          timestamp: `2025-01-${String(10 + (i % 5)).padStart(2, "0")}T10:00:00Z`,
          event_message: `m ${id}`,
        },
        source,
        NOW,
        `event ${i}`,
      ),
    ),
  };
}

/** every one of `ids` stored exactly once in SOURCE */
async function storedOnce(backend: PostgresBackend, ids: string[]): Promise<void> {
  const counts = await storedCounts(backend, SOURCE, ids);
  expect({ distinct: counts.size, max: Math.max(0, ...counts.values()) }).toEqual({
    distinct: ids.length,
    max: 1,
  });
}

function results(stored: number, duplicates: number, source = SOURCE): IngestResult[] {
  return [{ source, stored, duplicates }];
}

describe("PostgreSQL ingest dedupe through a filter of each source's ids", () => {
  const instances = twoInstances("storedids");
  const { schema } = instances;
  let a: PostgresBackend;
  let b: PostgresBackend;
  beforeEach(() => {
    ({ a, b } = instances);
  });

  it("probes every id until the filter is built, then asks PostgreSQL only about the filter's positives", async () => {
    const ids = recorded(a);
    expect(await a.ingest([batch(range("first", 500))])).toEqual(results(500, 0));
    expect(ids.last()).toMatchObject({ trusted: false, asked: 500 });
    await ids.settled();
    expect(await a.ingest([batch(range("second", 2000))])).toEqual(results(2000, 0));
    expect(ids.last().trusted).toBe(true);
    expect(ids.last().asked).toBeLessThan(100); // ~1% false positives
    // its own commits keep it trusted
    for (let round = 0; round < 4; round++) {
      await a.ingest([batch(range(`own${round}`, 300))]);
      expect(ids.last().trusted).toBe(true);
    }
    // a retry: every id is a positive, and every one is found stored
    expect(await a.ingest([batch(range("second", 2000))])).toEqual(results(0, 2000));
    expect(ids.last()).toMatchObject({ trusted: true, asked: 2000 });
    await storedOnce(a, range("second", 2000));
  });

  it("after another instance's ingest it trusts nothing it has not read again, and finds that instance's ids", async () => {
    const ids = recorded(a, { rebuildAfterMs: 0 });
    await a.ingest([batch(range("base", 100))]);
    await ids.settled();
    await a.ingest([batch(range("base2", 100))]);
    expect(ids.last().trusted).toBe(true);
    // b stores ids that a's filter never saw
    expect(await b.ingest([batch(range("fromb", 400))])).toEqual(results(400, 0));
    expect(await a.ingest([batch(range("fromb", 400))])).toEqual(results(0, 400));
    expect(ids.last()).toMatchObject({ trusted: false, asked: 400 });
    await ids.settled(); // read again from the table
    expect(await a.ingest([batch([...range("fromb", 400), ...range("newa", 50)])])).toEqual(results(50, 400));
    expect(ids.last().trusted).toBe(true);
    await storedOnce(a, [...range("fromb", 400), ...range("newa", 50)]);
  });

  it("alternating instances never store an id twice", async () => {
    recorded(a, { rebuildAfterMs: 0 });
    recorded(b, { rebuildAfterMs: 0 });
    const all: string[] = [];
    for (let round = 0; round < 6; round++) {
      const mine = range(`alt${round}`, 200);
      const earlier = all.slice(-150);
      all.push(...mine);
      const writer = round % 2 === 0 ? a : b;
      const other = round % 2 === 0 ? b : a;
      expect(await writer.ingest([batch([...earlier, ...mine])])).toEqual(results(200, earlier.length));
      // the other one retries the same batch at once
      expect(await other.ingest([batch([...earlier, ...mine])])).toEqual(results(0, earlier.length + 200));
      if (round % 2 === 1) await Promise.all([a["storedIds"].settled(), b["storedIds"].settled()]);
    }
    await storedOnce(a, all);
  });

  it("a load, by this instance or another, is seen by the next ingest", async () => {
    const ids = recorded(a, { rebuildAfterMs: 60_000 });
    await a.ingest([batch(range("pre", 50))]);
    await ids.settled();
    await a.ingest([batch(range("pre2", 50))]);
    expect(ids.last().trusted).toBe(true);
    const lines = (prefix: string) =>
      range(prefix, 120).map((id) =>
        JSON.stringify({ id, timestamp: "2025-01-12T00:00:00Z", event_message: id }),
      );
    await a.load(SOURCE, lines("loadeda"));
    expect(await a.ingest([batch(range("loadeda", 120))])).toEqual(results(0, 120));
    expect(ids.last().trusted).toBe(false); // forgotten by the load: built again at once
    await ids.settled();
    await a.ingest([batch(range("after", 10))]);
    expect(ids.last().trusted).toBe(true);
    await b.load(SOURCE, lines("loadedb"));
    expect(await a.ingest([batch(range("loadedb", 120))])).toEqual(results(0, 120));
    expect(ids.last().trusted).toBe(false);
  });

  it("ids stored by commits while the filter is read from the table are in it once it is built", async () => {
    const ids = recorded(a, { buildPage: 97, rebuildAfterMs: 0 });
    const source = "dedupe.building";
    await a.ingest([batch(range("seed", 10), source)]);
    await ids.settled();
    // a source another writer filled: a build of many pages
    await ownerQuery(
      `insert into ${await tableOf(a, source)} (id, timestamp, event_message)
       select 'bulk-' || i, '2025-01-10T12:00:00Z', 'bulk' from generate_series(0, 19999) i`,
    );
    await ownerQuery(`update "${schema}".qes_source_writes set token = 'someone-else' where name = $1`, [
      source,
    ]);
    // the first commit finds the filter stale and starts reading; these commit while it reads
    const during = Array.from({ length: 8 }, (_, k) => range(`during${k}`, 50));
    await a.ingest([batch(range("trigger", 5), source)]);
    for (const ids_ of during) await a.ingest([batch(ids_, source)]);
    await ids.settled();
    const everything = [...during.flat(), ...range("trigger", 5), ...range("bulk", 20000).slice(0, 500)];
    const again = await a.ingest([batch(everything, source)]);
    expect(ids.last().trusted).toBe(true);
    expect(again).toEqual(results(0, everything.length, source));
  });

  it("a commit that fails after its COPY leaves its ids out of the store and the filter, and a retry stores them", async () => {
    const ids = recorded(a);
    await a.ingest([batch(range("ok", 20))]);
    await ids.settled();
    // the write token's row refuses this source: the transaction fails after the rows are copied
    await ownerQuery(`create function "${schema}".refuse() returns trigger language plpgsql as
      $$ begin raise exception 'refused by the test'; end $$`);
    await ownerQuery(`create trigger refuse before update on "${schema}".qes_source_writes
      for each row execute function "${schema}".refuse()`);
    await expect(a.ingest([batch(range("failing", 30))])).rejects.toThrow(/refused by the test/);
    expect(ids.last().trusted).toBe(true);
    await ownerQuery(`drop trigger refuse on "${schema}".qes_source_writes`);
    expect(await a.ingest([batch(range("failing", 30))])).toEqual(results(30, 0));
    expect(ids.last().trusted).toBe(true);
    await storedOnce(a, range("failing", 30));
  });

  it("a source with more ids than a filter may hold, or past the process's budget, gets none and still finds every retry", async () => {
    const ids = recorded(a, { maxIds: 1_000, maxIdsInAll: 12_000, rebuildAfterMs: 0 });
    const big = "dedupe.big";
    const small = "dedupe.small";
    const other = "dedupe.other";
    expect(await a.ingest([batch(range("big", 1_500), big)])).toEqual(results(1_500, 0, big));
    expect(await a.ingest([batch(range("small", 10), small)])).toEqual(results(10, 0, small));
    await ids.settled();
    expect(await a.ingest([batch(range("big", 1_500), big)])).toEqual(results(0, 1_500, big));
    expect(ids.last().trusted).toBe(false); // 1,500 ids > 1,000
    expect(await a.ingest([batch(range("small", 10), small)])).toEqual(results(0, 10, small));
    expect(ids.last().trusted).toBe(true); // one filter of 8,192 ids
    // a second small filter would pass 12,000 ids held in all
    expect(await a.ingest([batch(range("other", 10), other)])).toEqual(results(10, 0, other));
    await ids.settled();
    expect(await a.ingest([batch(range("other", 10), other)])).toEqual(results(0, 10, other));
    expect(ids.last().trusted).toBe(false);
  });

  it("a source another instance keeps writing is read less and less often, and at the base wait again once a filter is trusted", async () => {
    const source = "dedupe.shared";
    let now = 0;
    let builds = 0;
    const pool: pg.Pool = a["ownerPool"];
    const counting = {
      connect: () => {
        builds++;
        return pool.connect();
      },
    } as unknown as pg.Pool;
    const ids = recorded(a, { rebuildAfterMs: 1_000, now: () => now }, counting);
    recorded(b);
    const at: number[] = [];
    // a and b take turns, a second apart: every filter a reads is stale by its next commit
    for (let round = 0; round < 16; round++) {
      const before = builds;
      await a.ingest([batch(range(`shared-a${round}`, 5), source)]);
      await ids.settled();
      if (builds > before) at.push(now);
      await b.ingest([batch(range(`shared-b${round}`, 5), source)]);
      now += 1_000;
    }
    // read at 0 s, then after waits of 1, 2, 4 and 8 s (not every second)
    expect(at).toEqual([0, 1_000, 3_000, 7_000, 15_000]);
    // b stops: the next filter is trusted, and the wait is the base one again
    for (let round = 0; round < 3; round++) {
      await a.ingest([batch(range(`alone${round}`, 5), source)]);
      await ids.settled();
      now += 40_000;
    }
    expect(ids.last().trusted).toBe(true);
    await b.ingest([batch(range("b-again", 5), source)]);
    const before = builds;
    now += 1_000;
    await a.ingest([batch(range("a-again", 5), source)]);
    await ids.settled();
    expect(builds).toBe(before + 1);
  });

  it("a build gives up on a table another session holds, and the next source's build gets its turn", async () => {
    const ids = recorded(a, { rebuildAfterMs: 0 });
    const held = "dedupe.held";
    const free = "dedupe.free";
    await a.ingest([batch(range("held", 5), held)]);
    await a.ingest([batch(range("free", 5), free)]);
    await ids.settled();
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query(`lock table ${await tableOf(a, held)} in access exclusive mode`);
      // another writer: both filters are stale, and both builds start (the held source's first)
      await ownerQuery(
        `update "${schema}".qes_source_writes set token = 'elsewhere' where name in ($1, $2)`,
        [held, free],
      );
      ids.forget(held);
      ids.forget(free);
      const reader = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await reader.connect();
      try {
        const sources = (await a.schema()).sources;
        await ids.check(reader, held, sources[held]!.table);
        await ids.check(reader, free, sources[free]!.table);
      } finally {
        await reader.end();
      }
      // both builds end while the lock is still held: the held one gave up, the free one was read
      await ids.settled();
      expect(await a.ingest([batch(range("free", 5), free)])).toEqual(results(0, 5, free));
      expect(ids.last().trusted).toBe(true);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
  });

  it("closing while a filter is read does not wait for the whole read", async () => {
    const c = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await c.init();
    const ids = recorded(c, { buildPage: 1 });
    await c.ingest([batch(range("closing", 5))]); // starts a build of one id per statement
    await c.close();
    await ids.settled();
    expect(ids.probes.length).toBe(1);
  });
});
