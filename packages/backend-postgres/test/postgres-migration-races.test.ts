import { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend } from "../src/index.ts";
import { OwnSchemaPostgresDialect } from "../src/postgres-migration-dialect.ts";
import { dropStorage, freshBackend, ownerQuery, TEST_POSTGRES_URL, uniqueSchema } from "./helpers.ts";

// Start-up migrations once listed every table of every schema (kysely's introspector, with a
// regclass lookup per column): another schema's table dropped meanwhile — another test worker,
// another instance, hourly retention — failed this instance's start-up with 42P01 naming it.
describe("start-up migrations beside other schemas' drops", () => {
  const other = uniqueSchema("migrace_other");
  beforeAll(async () => {
    await ownerQuery(`create schema "${other}"`);
    await ownerQuery(`create table "${other}"."seen" (id serial primary key, x int)`);
  });
  afterAll(async () => {
    await ownerQuery(`drop schema if exists "${other}" cascade`);
  });

  it("look only at their own schema: another schema's tables are not listed", async () => {
    const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
    const mine = uniqueSchema("migrace_mine");
    const db = new Kysely<any>({ dialect: new OwnSchemaPostgresDialect({ pool }, mine) });
    try {
      await ownerQuery(`create schema "${mine}"`);
      await ownerQuery(`create table "${mine}"."t" (id int)`);
      await ownerQuery(`create view "${mine}"."v" as select 1 as one`);
      const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
      expect(tables.map((t) => [t.schema, t.name, t.isView]).sort()).toEqual([
        [mine, "t", false],
        [mine, "v", true],
      ]);
      expect(await db.introspection.getSchemas()).toEqual([{ name: mine }]);
    } finally {
      await db.destroy();
      await ownerQuery(`drop schema if exists "${mine}" cascade`);
    }
  });

  it("succeed while another connection creates and drops tables of another schema", async () => {
    const dropper = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await dropper.connect();
    let stop = false;
    let churned = 0;
    const churn = (async () => {
      while (!stop) {
        const t = `"${other}"."churn_${churned % 8}"`;
        await dropper.query(`create table if not exists ${t} (id serial, a text, b int, c jsonb)`);
        await dropper.query(`drop table if exists ${t}`);
        churned++;
      }
    })();
    try {
      for (let i = 0; i < 6; i++) {
        const { dispose } = await freshBackend("migrace");
        await dispose();
      }
    } finally {
      stop = true;
      await churn;
      await dropper.end();
    }
    expect(churned).toBeGreaterThan(10);
  });

  it("still migrate a schema that exists from an earlier start (idempotent)", async () => {
    const first = await freshBackend("migrace_again");
    await first.backend.close();
    const again = createPostgresBackend({ url: TEST_POSTGRES_URL, schema: first.schema, pool: 2 });
    try {
      await again.init();
      const { rows } = await ownerQuery(`select name from "${first.schema}"."qes_migration" order by name`);
      expect(rows.map((r) => r.name)).toEqual([
        "0001_schema_model",
        "0002_json_or_null",
        "0003_source_writes",
        "0004_json_or_null_parallel_unsafe",
      ]);
    } finally {
      await again.close();
      await dropStorage(first.schema);
    }
  });
});
