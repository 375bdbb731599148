import { type IngestBatch, nowMicros } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import { addIdProjectionSql } from "../src/clickhouse-storage.ts";
import { storedIdsSql } from "../src/clickhouse-stored-ids.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

const SOURCE = "proj.logs";

function batch(ids: string[]): IngestBatch {
  const timestamp = nowMicros();
  return { source: SOURCE, events: ids.map((id) => ({ id, timestamp, body: { event_message: `m ${id}` } })) };
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

async function text(
  engine: ClickhouseEngine,
  query: string,
  params: Record<string, unknown> = {},
): Promise<string> {
  return engine.owner.use(async (c) =>
    (await c.query({ query, query_params: params, format: "TabSeparatedRaw" })).text(),
  );
}

async function command(engine: ClickhouseEngine, query: string): Promise<void> {
  await engine.owner.use((c) => c.command({ query }));
}

/** EXPLAIN of ingest's duplicate check of 5,000 ids: which source of rows it reads */
async function probePlan(engine: ClickhouseEngine, database: string, table: string): Promise<string> {
  return text(engine, `EXPLAIN ${storedIdsSql(database, table)}`, { ids: range("probe", 5_000) });
}

describe("ClickHouse ingest's duplicate check reads the id projection", () => {
  const database = uniqueDatabase("qes_proj");
  let engine: ClickhouseEngine;
  beforeAll(async () => {
    engine = await openChdbEngine(chdbTestPath(), database);
  });
  afterAll(async () => {
    await engine.close();
  });

  it("a new source has the projection, and a check of a batch's ids reads it instead of the id column", async () => {
    const backend = createClickhouseBackend({ path: chdbTestPath(), database });
    await backend.init();
    try {
      await backend.ingest([batch(range("seed", 10))]);
      const table = (await backend.schema()).sources[SOURCE]!.table;
      await command(
        engine,
        `INSERT INTO ${database}.${table} (id, timestamp, event_message)
         SELECT toString(generateUUIDv4()), now64(6), 'bulk' FROM numbers(200000)`,
      );
      expect(await probePlan(engine, database, table)).toMatch(/ReadFrom\w*\s*\(qes_by_id\)/);
      // and it still answers: retries are duplicates, fresh ids are stored
      expect(await backend.ingest([batch([...range("seed", 10), ...range("fresh", 5)])])).toEqual([
        { source: SOURCE, stored: 5, duplicates: 10 },
      ]);
    } finally {
      await backend.close();
    }
  });

  it("start-up gives a source made before the projection its projection, and ingest into it keeps working", async () => {
    const old = uniqueDatabase("qes_proj_old");
    const first = createClickhouseBackend({ path: chdbTestPath(), database: old });
    await first.init();
    await first.ingest([batch(range("before", 20))]);
    const table = (await first.schema()).sources[SOURCE]!.table;
    const builtin = (await first.schema()).sources["cloudflare.logs.prod"]!.table;
    await first.close();
    // as a store of the previous version made them
    for (const t of [table, builtin])
      await command(engine, `ALTER TABLE ${old}.${t} DROP PROJECTION qes_by_id`);
    await command(
      engine,
      `INSERT INTO ${old}.${table} (id, timestamp, event_message)
       SELECT toString(generateUUIDv4()), now64(6), 'bulk' FROM numbers(200000)`,
    );
    expect(await probePlan(engine, old, table)).not.toMatch(/qes_by_id/);

    const second = createClickhouseBackend({ path: chdbTestPath(), database: old });
    await second.init();
    try {
      for (const t of [table, builtin]) {
        expect(await text(engine, `SHOW CREATE TABLE ${old}.${t}`)).toMatch(/PROJECTION qes_by_id/);
      }
      // the parts made before it get it too (a mutation in the background)
      for (let i = 0; i < 200; i++) {
        const pending = await text(
          engine,
          "SELECT count() FROM system.mutations WHERE database = {db:String} AND table = {t:String} AND NOT is_done",
          { db: old, t: table },
        );
        if (pending.trim() === "0") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await probePlan(engine, old, table)).toMatch(/ReadFrom\w*\s*\(qes_by_id\)/);
      // ingest's staging table (made with the projection) still attaches to the migrated table
      expect(await second.ingest([batch([...range("before", 20), ...range("after", 7)])])).toEqual([
        { source: SOURCE, stored: 7, duplicates: 20 },
      ]);
      expect(await second.ingest([batch(range("after", 7))])).toEqual([
        { source: SOURCE, stored: 0, duplicates: 7 },
      ]);
    } finally {
      await second.close();
    }
    // a second start adds nothing
    const mutations = () =>
      text(
        engine,
        "SELECT count() FROM system.mutations WHERE database = {db:String} AND table = {t:String}",
        {
          db: old,
          t: table,
        },
      );
    const before = await mutations();
    const third = createClickhouseBackend({ path: chdbTestPath(), database: old });
    await third.init();
    await third.close();
    expect(await mutations()).toBe(before);
  });

  it("the DDL adds the projection on every node of a cluster, and nothing where it is", () => {
    const layout = { database: "qes", cluster: "logs" };
    const sql = addIdProjectionSql(layout, "src_x", "CREATE TABLE qes.src_x_local (...)");
    expect(sql).toHaveLength(2);
    for (const s of sql) expect(s).toMatch(/^ALTER TABLE "?qes"?\."?src_x_local"? ON CLUSTER "?logs"? /);
    expect(addIdProjectionSql(layout, "src_x", "… PROJECTION qes_by_id (SELECT id ORDER BY id) …")).toEqual(
      [],
    );
  });
});
