import { type LogEvent, physicalColumns, type SourceSchema } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSql } from "../../../test/support/run-sql.ts";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import type { LeaseTiming } from "../src/clickhouse-lease.ts";
import { migratePartitionKeys } from "../src/clickhouse-partition-migration.ts";
import { qualified, quoteIdent } from "../src/clickhouse-sql.ts";
import { columnDeclaration, PARTITION_KEY, type StorageLayout } from "../src/clickhouse-storage.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

/**
 * Start-up rebuilds the source tables an earlier version partitioned by `toDate(timestamp)`, whose
 * partition pruning lost events outside 1970-01-01…2149-06-06, with the key, TTL and layout of a
 * new table; every event once, through kills at any step and instances starting together.
 */
const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const EVENTS: LogEvent[] = (
  [
    ["e1960", "1960-05-01T00:00:00Z"],
    ["e2020", "2020-07-27T00:00:00Z"],
    ["e2024", "2024-06-01T00:00:00Z"],
    ["e2025", "2025-01-01T00:00:00Z"],
    ["e2150", "2150-01-01T00:00:00Z"],
  ] as const
).map(([id, iso], i) => ({
  id,
  timestamp: micros(iso),
  body: { event_message: id, metadata: { n: i, path: `/p/${i}` } },
}));
const SOURCE = "mig.src";
/** long enough that no event here expires, even 1960's (its TTL is that of 1970-01-01) */
const DAYS = 36_500;
const FRESH = "mig.fresh";
const RETENTION = { defaultDays: 0, perSource: { [SOURCE]: DAYS, [FRESH]: DAYS } };
/** a dead holder's lease goes stale quickly here */
const FAST_LEASE: LeaseTiming = { beatMs: 100, staleMs: 1_000, pollMs: 50 };

let engine: ClickhouseEngine;
beforeAll(async () => {
  engine = await openChdbEngine(chdbTestPath(), uniqueDatabase("qes_migboot"));
});
afterAll(() => engine.close());

async function text(query: string): Promise<string> {
  return engine.owner.use(async (c) => (await c.query({ query, format: "TabSeparatedRaw" })).text());
}
async function run(query: string): Promise<void> {
  await engine.owner.use((c) => c.command({ query }));
}

/**
 * The DDL of a source's table as qes made it before `PARTITION_KEY` (commit ad75835's
 * createSourceSql): `toDate` key, the TTL of `toDate`, no id projection.
 */
function oldVersionDdl(layout: StorageLayout, schema: SourceSchema, days: number): string {
  const columns = physicalColumns(schema).map(
    (c) => `${quoteIdent(c.column)} ${columnDeclaration(c.column, c.type)}`,
  );
  return (
    `CREATE TABLE IF NOT EXISTS ${qualified(layout.database, schema.table)} (\n  ${columns.join(",\n  ")},\n` +
    `  INDEX "qes_id" "id" TYPE bloom_filter(0.01) GRANULARITY 1\n)\n` +
    `ENGINE = MergeTree\n` +
    `PARTITION BY toDate("timestamp")\nORDER BY ("project", "timestamp")` +
    `\nTTL toDate("timestamp") + toIntervalDay(${days + 1})` +
    `\nSETTINGS allow_nullable_key = 1, ttl_only_drop_parts = 1, fsync_after_insert = 1, fsync_part_directory = 1`
  );
}

interface OldStore {
  database: string;
  table: string;
}

/** A database whose source SOURCE holds EVENTS in a table made by the old version. */
async function oldStore(): Promise<OldStore> {
  const database = uniqueDatabase("qes_mig");
  const backend = createClickhouseBackend({ path: chdbTestPath(), database });
  await backend.init();
  await backend.ingest([{ source: SOURCE, events: EVENTS }]);
  const schema = (await backend.schema({ fresh: true })).sources[SOURCE]!;
  await backend.close();
  // the rows ingest stored, in the old version's table
  const table = qualified(database, schema.table);
  const seed = qualified(database, "seed");
  await run(`RENAME TABLE ${table} TO ${seed}`);
  await run(oldVersionDdl({ database }, schema, DAYS));
  await run(`INSERT INTO ${table} SELECT * FROM ${seed}`);
  await run(`DROP TABLE ${seed} SYNC`);
  expect(await partitionKey({ database, table: schema.table })).toBe("toDate(timestamp)");
  return { database, table: schema.table };
}

async function partitionKey(store: OldStore): Promise<string> {
  return (
    await text(
      `SELECT partition_key FROM system.tables WHERE database = '${store.database}' AND name = '${store.table}'`,
    )
  ).trim();
}

/** Every row of the table, in id order, as the engine writes them. */
async function contents(store: OldStore): Promise<string> {
  return text(`SELECT * FROM ${qualified(store.database, store.table)} ORDER BY id`);
}

/** Tables of the store that are neither the schema, nor a source's, nor a staging table. */
async function otherTables(store: OldStore): Promise<string> {
  return (
    await text(
      `SELECT name FROM system.tables WHERE database = '${store.database}' AND name != 'qes_schema' AND NOT startsWith(name, 'src_') ORDER BY name`,
    )
  ).trim();
}

async function started(store: OldStore, leaseTiming?: LeaseTiming) {
  const backend = createClickhouseBackend({
    path: chdbTestPath(),
    database: store.database,
    retention: RETENTION,
    ...(leaseTiming ? { leaseTiming } : {}),
  });
  await backend.init();
  return backend;
}

async function ids(backend: Awaited<ReturnType<typeof started>>, where = "true"): Promise<string[]> {
  const rows = await runSql(backend, `select id from \`${SOURCE}\` where ${where} order by id`);
  return rows.map((r) => r.id as string);
}

const ALL = EVENTS.map((e) => e.id);

async function expectRightAnswers(backend: Awaited<ReturnType<typeof started>>): Promise<void> {
  expect(await ids(backend)).toEqual(ALL);
  expect(await ids(backend, "timestamp < timestamp '2025-01-01'")).toEqual(["e1960", "e2020", "e2024"]);
  expect(await ids(backend, "timestamp < timestamp '1970-01-01'")).toEqual(["e1960"]);
  expect(await ids(backend, "timestamp >= timestamp '2024-12-01'")).toEqual(["e2025", "e2150"]);
}

/** The table's DDL with its own name taken out, to compare two tables' layouts. */
async function ddlOf(database: string, table: string): Promise<string> {
  const ddl = await text(
    `SELECT create_table_query FROM system.tables WHERE database = '${database}' AND name = '${table}'`,
  );
  return ddl.trim().replaceAll(`${database}.${table}`, "<table>");
}

describe("ClickHouse start-up rebuilds tables partitioned by toDate", () => {
  it("answers the queries the old key got wrong, with the same rows, the new key and a new table's TTL and layout", async () => {
    const store = await oldStore();
    const before = await contents(store);
    const backend = await started(store);
    try {
      await expectRightAnswers(backend);
      expect(await contents(store)).toBe(before);
      expect(await partitionKey(store)).toBe("toDate32(timestamp)");
      // a table made now for the same events is the same but for its name
      await backend.ingest([{ source: FRESH, events: EVENTS }]);
      const fresh = (await backend.schema({ fresh: true })).sources[FRESH]!.table;
      const rebuilt = await ddlOf(store.database, store.table);
      expect(rebuilt).toBe(await ddlOf(store.database, fresh));
      expect(rebuilt).toContain(`TTL toDateTime(greatest(least(toDate32(timestamp)`);
      expect(rebuilt).toContain(`+ ${DAYS + 1}, 'UTC')`);
      expect(rebuilt).toContain("PROJECTION qes_by_id");
      expect(await otherTables(store)).toBe("");
    } finally {
      await backend.close();
    }
  });

  it("a second start leaves the rebuilt table as it is", async () => {
    const store = await oldStore();
    const first = await started(store);
    await first.close();
    const uuid = () =>
      text(`SELECT uuid FROM system.tables WHERE database = '${store.database}' AND name = '${store.table}'`);
    const rebuilt = await uuid();
    const second = await started(store);
    try {
      expect(await uuid()).toBe(rebuilt);
      await expectRightAnswers(second);
      expect(await otherTables(store)).toBe("");
    } finally {
      await second.close();
    }
  });

  it("after a kill during the copy (half-filled new table, the dead holder's lease), the next start rebuilds it with every event once", async () => {
    const store = await oldStore();
    const before = await contents(store);
    // what a SIGKILL during the INSERT … SELECT leaves: the lease taken, the new table half-filled
    await run(
      `CREATE TABLE ${qualified(store.database, "qes_lease_partition_migration_1")} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
    );
    await run(
      `INSERT INTO ${qualified(store.database, "qes_lease_partition_migration_1")} SELECT now64(3, 'UTC')`,
    );
    await run(rebuildTableDdl(store));
    await run(
      `INSERT INTO ${qualified(store.database, `qes_rebuild_${store.table}`)} SELECT * FROM ${qualified(store.database, store.table)} ORDER BY id LIMIT 2`,
    );
    const backend = await started(store, FAST_LEASE);
    try {
      await expectRightAnswers(backend);
      expect(await contents(store)).toBe(before);
      expect(await partitionKey(store)).toBe("toDate32(timestamp)");
      expect(await otherTables(store)).toBe("");
    } finally {
      await backend.close();
    }
  });

  it("after a kill between the swap and the drop, the next start drops the old table and keeps every event once", async () => {
    const store = await oldStore();
    const before = await contents(store);
    const rebuild = qualified(store.database, `qes_rebuild_${store.table}`);
    await run(rebuildTableDdl(store));
    await run(`INSERT INTO ${rebuild} SELECT * FROM ${qualified(store.database, store.table)}`);
    await run(`EXCHANGE TABLES ${qualified(store.database, store.table)} AND ${rebuild}`);
    const backend = await started(store);
    try {
      await expectRightAnswers(backend);
      expect(await contents(store)).toBe(before);
      expect(await otherTables(store)).toBe("");
    } finally {
      await backend.close();
    }
  });

  it("instances starting together rebuild once: every event once", async () => {
    const store = await oldStore();
    const before = await contents(store);
    const [a, b, c] = await Promise.all([started(store), started(store), started(store)]);
    try {
      for (const backend of [a, b, c]) await expectRightAnswers(backend);
      expect(await contents(store)).toBe(before);
      expect(await partitionKey(store)).toBe("toDate32(timestamp)");
      expect(await otherTables(store)).toBe("");
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("on a cluster the table is left as it is and named in a warning", async () => {
    const store = await oldStore();
    // the cluster's data table is `<table>_local`: the old store's table, renamed
    await run(
      `RENAME TABLE ${qualified(store.database, store.table)} TO ${qualified(store.database, `${store.table}_local`)}`,
    );
    const layout: StorageLayout = { database: store.database, cluster: "logs" };
    const backend = createClickhouseBackend({ path: chdbTestPath(), database: store.database });
    await backend.init();
    const schema = await backend.schema({ fresh: true });
    await backend.close();
    const outcome = await migratePartitionKeys(engine.owner, layout, schema, () => 0);
    expect(outcome.rebuilt).toEqual([]);
    expect(outcome.warnings).toEqual([expect.stringContaining(`${store.table}_local (source ${SOURCE})`)]);
    expect(await partitionKey({ database: store.database, table: `${store.table}_local` })).toBe(
      "toDate(timestamp)",
    );
  });
});

/** The new table as the rebuild makes it, for the states a kill leaves. */
function rebuildTableDdl(store: OldStore): string {
  return `CREATE TABLE ${qualified(store.database, `qes_rebuild_${store.table}`)} AS ${qualified(store.database, store.table)} ENGINE = MergeTree PARTITION BY ${PARTITION_KEY} ORDER BY ("project", "timestamp") SETTINGS allow_nullable_key = 1`;
}
