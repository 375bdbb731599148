import { logEventFromJson, parseJsonText } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { resolvePostgresConfig } from "../src/postgres-config.ts";
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
      `${t}__20250105`,
      `${t}__20250112`,
      `${t}__20250114`,
      `${t}__20250115`,
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
    expect(await partitionNames()).toEqual([`${t}__20250112`, `${t}__20250114`, `${t}__20250115`]);
    // the dropped partition's table is gone, not emptied
    const { rows } = await ownerQuery("select count(*)::int as n from pg_class where relname = $1", [
      `${t}__20250105`,
    ]);
    expect(rows[0].n).toBe(0);
  });

  /** ids in each partition of a source, in the order of their rows in the partition's heap */
  const idsByPartition = async (source: string) => {
    const t = (await backend.schema()).sources[source]!.table;
    const out: Record<string, string[]> = {};
    for (const p of await listPartitions(backend["ownerPool"], schema, t)) {
      const { rows } = await ownerQuery(`select id from "${schema}"."${p.name}" order by ctid`);
      out[p.name.slice(t.length).replace(/^_+/, "")] = rows.map((r) => r.id);
    }
    return out;
  };

  it("load and ingest write each day's rows into that day's partition, in time order, a hand-made partition of several days included", async () => {
    const source = "partitions.direct";
    await backend.ingest([{ source, events: [] }]);
    const t = (await backend.schema()).sources[source]!.table;
    // an operator's partition for three days, made the way qes makes its own
    await ownerQuery(`create table "${schema}"."${t}_q1" (like "${schema}"."${t}" including defaults)`);
    await ownerQuery(
      `alter table "${schema}"."${t}" attach partition "${schema}"."${t}_q1" ` +
        `for values from ('2025-01-01 00:00:00+00') to ('2025-01-04 00:00:00+00')`,
    );
    const line = (id: string, timestamp: string) => JSON.stringify({ id, timestamp, event_message: id });
    await backend.load(source, [
      line("l3", "2025-01-15T10:00:00Z"),
      line("l1", "2025-01-02T10:00:00Z"),
      line("l2", "2025-01-15T09:00:00Z"),
      line("l0", "2025-01-01T23:00:00Z"),
      line("l4", "2025-01-14T23:59:59.999999Z"),
      line("l5", "2025-01-03T00:00:00Z"),
    ]);
    const at = (id: string, iso: string) =>
      logEventFromJson(parseJsonText(JSON.stringify({ id, timestamp: iso })), source, NOW);
    // two batches of one call (a group commit) meeting on one day are written together
    await backend.ingest([
      { source, events: [at("i2", "2025-01-15T11:00:00Z"), at("i0", "2025-01-02T00:00:00Z")] },
      { source, events: [at("i1", "2025-01-15T00:00:00Z"), at("i3", "2025-01-16T00:00:00Z")] },
    ]);
    const got = await idsByPartition(source);
    // in time order within a day; the days of a partition of several days in any order
    got.q1 = got.q1!.sort();
    expect(got).toEqual({
      q1: ["i0", "l0", "l1", "l5"],
      "20250114": ["l4"],
      "20250115": ["l2", "l3", "i1", "i2"],
      "20250116": ["i3"],
    });
  });

  it("retention removes the old rows of a DEFAULT partition an operator attached, and counts them", async () => {
    const source = "partitions.default";
    await backend.ingest([{ source, events: [event("kept-day", NOW)] }]);
    const t = (await backend.schema()).sources[source]!.table;
    await ownerQuery(`create table "${schema}"."${t}_rest" partition of "${schema}"."${t}" default`);
    // rows of days no daily partition covers, written through the parent (as an operator's tool would)
    await ownerQuery(
      `insert into "${schema}"."${t}" (id, "timestamp", event_message) values ` +
        `('old-rest', '2024-06-01 00:00:00+00', 'o'), ('edge-rest', '2024-12-16 00:00:00+00', 'e'), ` +
        `('new-rest', '2025-01-13 10:00:00+00', 'n')`,
    );
    const reports = await backend.applyRetention({ defaultDays: 30, perSource: {} }, NOW);
    expect(reports.find((r) => r.source === source)).toEqual({
      source,
      deletedEvents: 1,
      droppedPartitions: 0,
    });
    const { rows } = await ownerQuery<{ id: string }>(`select id from "${schema}"."${t}" order by id`);
    expect(rows.map((r) => r.id)).toEqual(["edge-rest", "kept-day", "new-rest"]);
  });

  it("a day whose rows an operator's DEFAULT partition holds takes ingest and load: its rows move into the day's partition", async () => {
    const source = "partitions.default.move";
    await backend.ingest([{ source, events: [event("first", NOW)] }]);
    const t = (await backend.schema()).sources[source]!.table;
    await ownerQuery(`create table "${schema}"."${t}_rest" (like "${schema}"."${t}")`);
    // the DEFAULT partition's columns in another order: the move names them
    await ownerQuery(`alter table "${schema}"."${t}_rest" drop column project, add column project text`);
    await ownerQuery(`alter table "${schema}"."${t}" attach partition "${schema}"."${t}_rest" default`);
    await ownerQuery(
      `insert into "${schema}"."${t}" (id, "timestamp", event_message, project) values ` +
        `('in-default', '2025-01-13 10:00:00+00', 'd', 'p1'), ('other-day', '2025-01-12 10:00:00+00', 'o', 'p2')`,
    );
    await backend.ingest([{ source, events: [event("same-day", NOW - 2n * DAY)] }]);
    await backend.load(source, [JSON.stringify({ id: "loaded", timestamp: "2025-01-12T08:00:00Z" })]);
    const { rows } = await ownerQuery<{ id: string; project: string | null; part: string }>(
      `select id, project, tableoid::regclass::text as part from "${schema}"."${t}" order by id`,
    );
    expect(rows.map((r) => [r.id, r.project])).toEqual([
      ["first", null],
      ["in-default", "p1"],
      ["loaded", null],
      ["other-day", "p2"],
      ["same-day", null],
    ]);
    // nothing of a day with its own partition is left in the DEFAULT one
    expect(
      rows.filter((r) => r.part.endsWith('_rest"') || r.part.endsWith("_rest")).map((r) => r.id),
    ).toEqual([]);
  });

  it("a day's partition made by another instance takes this instance's rows", async () => {
    const source = "partitions.shared";
    const at = (id: string, iso: string) =>
      logEventFromJson(parseJsonText(JSON.stringify({ id, timestamp: iso })), source, NOW);
    await backend.ingest([{ source, events: [at("a", "2025-01-10T10:00:00Z")] }]);
    const other = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await other.init();
    try {
      await other.ingest([{ source, events: [at("b", "2025-01-11T10:00:00Z")] }]);
      await backend.ingest([{ source, events: [at("c", "2025-01-11T09:00:00Z")] }]);
      await backend.load(source, [JSON.stringify({ id: "d", timestamp: "2025-01-11T08:00:00Z" })]);
      await other.load(source, [JSON.stringify({ id: "e", timestamp: "2025-01-10T08:00:00Z" })]);
    } finally {
      await other.close();
    }
    expect(await idsByPartition(source)).toEqual({ "20250110": ["a", "e"], "20250111": ["b", "c", "d"] });
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
      expect(parts.map((p) => p.name)).toEqual([`${legacy}__20250110`, `${legacy}__20250111`]);
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
  it("names no day partition or index after another source's table: each source has its own three indexes", async () => {
    // `x timestamp idx` is src_x_timestamp_idx, the name of `x`'s time index; `y`'s index on
    // (project, timestamp) is src_y_project_timestamp_idx, `y project`'s time index
    for (const source of ["x timestamp idx", "x", "y", "y project", "z 20250115", "z"]) {
      await backend.ingest([
        { source, events: [logEventFromJson({ id: source, timestamp: Number(NOW) }, source, NOW)] },
      ]);
    }
    const sources = (await backend.schema()).sources;
    for (const source of ["x timestamp idx", "x", "y", "y project", "z 20250115", "z"]) {
      const t = sources[source]!.table;
      const { rows } = await ownerQuery(
        `select count(*)::int as n from pg_index i join pg_class c on c.oid = i.indrelid
         where c.relname = $1 and c.relnamespace = $2::regnamespace`,
        [t, `"${schema}"`],
      );
      expect(rows[0].n, source).toBe(3);
      const { rows: ids } = await ownerQuery(`select id from "${schema}"."${t}"`);
      expect(ids.map((r) => r.id)).toEqual([source]);
    }
  });
  const noPassword = () => "";
  it("refuses a number of days per ingest transaction that is not a whole number ≥ 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() =>
        resolvePostgresConfig(
          { url: TEST_POSTGRES_URL, schema: "qes_x", ingestDaysPerTransaction: bad },
          noPassword,
        ),
      ).toThrow(/ingestDaysPerTransaction must be an integer ≥ 1/);
    }
    expect(
      resolvePostgresConfig({ url: TEST_POSTGRES_URL, schema: "qes_x" }, noPassword).ingestDaysPerTransaction,
    ).toBe(366);
  });

  it("a group commit on more days than a transaction may lock is committed in runs of whole requests", async () => {
    // in one transaction, six requests of 366 days each (2,196 partitions, each with its indexes)
    // ran out of the lock table every session shares ("out of shared memory"); the limit is
    // lowered here so that a few partitions show the runs
    const limited = await freshBackend("partdays", { ingestDaysPerTransaction: 3 });
    try {
      const source = "partitions.many.days";
      const at = (id: string, micros: bigint) =>
        logEventFromJson(parseJsonText(JSON.stringify({ id, timestamp: Number(micros) })), source, NOW);
      // days 0-1, 1-2, 3, 4-5-6 (alone: a request is never cut), 0: runs [a, b], [c], [d], [e]
      const days = [[0, 1], [1, 2], [3], [4, 5, 6], [0]];
      const batches = days.map((ds, k) => ({
        source,
        events: ds.map((d) => at(`k${k}d${d}`, NOW - BigInt(d) * DAY)),
      }));
      const results = await limited.backend.ingest(batches);
      expect(results).toEqual(days.map((ds) => ({ source, stored: ds.length, duplicates: 0 })));
      const t = (await limited.backend.schema()).sources[source]!.table;
      const { rows } = await ownerQuery<{ id: string; tx: string }>(
        `select id, xmin::text as tx from "${limited.schema}"."${t}" order by id`,
      );
      const txOf = (k: number) => new Set(rows.filter((r) => r.id.startsWith(`k${k}d`)).map((r) => r.tx));
      expect(rows).toHaveLength(9);
      // each request in one transaction, the runs in transactions of their own
      for (const k of [0, 1, 2, 3, 4]) expect(txOf(k).size).toBe(1);
      const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((k) => [...txOf(k)][0]);
      expect(a).toBe(b);
      expect(new Set([a, c, d, e]).size).toBe(4);
    } finally {
      await limited.dispose();
    }
  });
});
