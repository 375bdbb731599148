import { createPostgresBackend, readerRoleFor } from "@qes/backend-postgres";
import type { Backend } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_POSTGRES_URL } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";

// Found by the conformance work (issue 6): the matrix runs PostgreSQL in the test database, whose
// collation is C, so strings compare by code point there as in BigQuery and DuckDB. An operator's
// database with a linguistic default collation (en_US, ICU) orders, compares and takes MIN/MAX of
// strings by that collation instead; the PostgreSQL emitter therefore orders, compares and takes
// MIN/MAX of strings under `COLLATE "C"`.

const database = `qes_conf_icu_${process.pid}`;
const schema = "qes_icu";
const adminUrl = TEST_POSTGRES_URL;
const icuUrl = adminUrl.replace(/\/[^/]*$/, `/${database}`);
let backend: Backend | undefined;
let icuAvailable = false;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  icuAvailable = await admin(async (c) => {
    const { rows } = await c.query("select 1 from pg_collation where collname = 'en-US-x-icu'");
    if (rows.length === 0) return false;
    await c.query(`drop database if exists "${database}"`);
    await c.query(
      `create database "${database}" template template0 locale_provider icu icu_locale 'en-US' locale 'C.UTF-8'`,
    );
    return true;
  });
  if (!icuAvailable) return;
  backend = createPostgresBackend({ url: icuUrl, schema, pool: 2 });
  await backend.init();
  await backend.load(
    "cloudflare.logs.prod",
    ["a", "B", "_z", "/rest", "-x"].map((m, i) =>
      JSON.stringify({ id: `e${i}`, timestamp: "2025-01-15T00:00:00Z", project: "p", event_message: m }),
    ),
  );
});

afterAll(async () => {
  await backend?.close();
  await admin(async (c) => {
    await c.query(`drop database if exists "${database}"`);
    const role = readerRoleFor(schema);
    await c.query(`drop owned by "${role}"`).catch(() => undefined);
    await c.query(`drop role if exists "${role}"`).catch(() => undefined);
  });
});

describe("PostgreSQL in a database with an ICU en-US default collation", () => {
  it("orders strings by code point, as BigQuery and DuckDB do", async () => {
    if (!icuAvailable || !backend) throw new Error("ICU collations unavailable: nothing to show");
    const rows = await runSql(
      backend,
      "select event_message from `cloudflare.logs.prod` order by event_message",
    );
    expect(rows.map((r) => r.event_message)).toEqual(["-x", "/rest", "B", "_z", "a"]);
  });

  it("takes MIN, MAX and < of strings by code point", async () => {
    if (!icuAvailable || !backend) throw new Error("ICU collations unavailable: nothing to show");
    const rows = await runSql(
      backend,
      "select min(event_message) as lo, max(event_message) as hi, countif(event_message < 'a') as below_a from `cloudflare.logs.prod`",
    );
    expect(rows).toEqual([{ lo: "-x", hi: "a", below_a: 4 }]);
  });
});
