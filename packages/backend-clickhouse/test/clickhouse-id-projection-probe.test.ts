import { type Backend, type LogEvent, nowMicros, type RetentionPolicy } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import { storedIdsSql } from "../src/clickhouse-ingest.ts";
import { addIdProjectionSql } from "../src/clickhouse-storage.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

/**
 * Probes of the id projection (`qes_by_id`): widenings, start-up migration, retention, consumer
 * SQL on id and hostile ids, each checking that ingest, load and queries store and return what
 * they did without it.
 */

const DAY = 86_400_000_000n;

function events(
  ids: readonly string[],
  body: Record<string, unknown> = {},
  timestamp = nowMicros(),
): LogEvent[] {
  return ids.map((id) => ({ id, timestamp, body: { event_message: `m ${id}`, ...body } }));
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

let engine: ClickhouseEngine;
const database = uniqueDatabase("qes_pp");

beforeAll(async () => {
  engine = await openChdbEngine(chdbTestPath(), database);
});
afterAll(async () => {
  await engine.close();
});

async function text(query: string, params: Record<string, unknown> = {}): Promise<string> {
  return engine.owner.use(async (c) =>
    (await c.query({ query, query_params: params, format: "TabSeparatedRaw" })).text(),
  );
}

async function command(query: string): Promise<void> {
  await engine.owner.use((c) => c.command({ query }));
}

async function open(db: string, retention?: RetentionPolicy): Promise<Backend> {
  const backend = createClickhouseBackend(
    retention === undefined
      ? { path: chdbTestPath(), database: db }
      : { path: chdbTestPath(), database: db, retention },
  );
  await backend.init();
  return backend;
}

async function tableOf(backend: Backend, source: string): Promise<string> {
  return (await backend.schema()).sources[source]!.table;
}

async function hasProjection(db: string, table: string): Promise<boolean> {
  return /PROJECTION qes_by_id/.test(await text(`SHOW CREATE TABLE ${db}.${table}`));
}

/** Waits until no mutation of `table` is pending (MATERIALIZE PROJECTION runs in the background). */
async function mutationsDone(db: string, table: string): Promise<void> {
  for (;;) {
    const pending = await text(
      "SELECT count() FROM system.mutations WHERE database = {db:String} AND table = {t:String} AND NOT is_done",
      { db, t: table },
    );
    if (pending.trim() === "0") return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A store of the version before the projection: its sources' tables lose it. */
async function asBeforeProjection(db: string, tables: readonly string[]): Promise<void> {
  for (const t of tables) await command(`ALTER TABLE ${db}.${t} DROP PROJECTION IF EXISTS qes_by_id`);
  for (const t of tables) expect(await hasProjection(db, t)).toBe(false);
}

/** every stored row's id, sorted, and how many rows there are */
async function storedRows(db: string, table: string): Promise<{ ids: string[]; rows: number }> {
  const out = await text(
    `SELECT id FROM ${db}.${table} ORDER BY id SETTINGS optimize_use_projections = 0, output_format_tsv_crlf_end_of_line = 0`,
  );
  const ids = out === "" ? [] : out.replace(/\n$/, "").split("\n");
  return { ids, rows: ids.length };
}

describe("a source made before the projection, whose table name holds qes_by_id", () => {
  it("gets the projection at start-up, and ingest into it keeps working", async () => {
    const db = uniqueDatabase("qes_pp_name");
    const source = "app.qes-by-id";
    const first = await open(db);
    await first.ingest([{ source, events: events(range("a", 5)) }]);
    const table = await tableOf(first, source);
    expect(table).toBe("src_app_qes_by_id");
    await first.close();
    await asBeforeProjection(db, [table]);

    const second = await open(db);
    try {
      expect(await hasProjection(db, table)).toBe(true);
      expect(await second.ingest([{ source, events: events([...range("a", 5), ...range("b", 3)]) }])).toEqual(
        [{ source, stored: 3, duplicates: 5 }],
      );
      expect((await storedRows(db, table)).rows).toBe(8);
    } finally {
      await second.close();
    }
  });

  it("the check of a cluster's table finds the projection by its declaration, not its name", () => {
    const layout = { database: "qes_by_id_store", cluster: "logs" };
    const before =
      "CREATE TABLE qes_by_id_store.src_qes_by_id_local (`id` String, `timestamp` DateTime64(6, 'UTC'), " +
      "INDEX qes_id id TYPE bloom_filter(0.01) GRANULARITY 1) " +
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/qes_by_id_store/src_qes_by_id_local', '{replica}')";
    expect(addIdProjectionSql(layout, "src_qes_by_id", before)).toHaveLength(2);
    const after = before.replace(
      "GRANULARITY 1)",
      "GRANULARITY 1, PROJECTION qes_by_id (SELECT id ORDER BY id))",
    );
    expect(addIdProjectionSql(layout, "src_qes_by_id", after)).toEqual([]);
  });
});
