import pg from "pg";
import { describe, expect, it } from "vitest";
import { droppedElsewhere } from "../src/postgres-migrations.ts";
import { TEST_POSTGRES_URL } from "./helpers.ts";

/** PostgreSQL's own error for a statement, to classify as kysely's listing would meet it */
async function errorOf(sql: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
    return undefined;
  } catch (e) {
    return e;
  } finally {
    await client.end();
  }
}

describe("a migration's listing of every schema, met by another schema's drop", () => {
  it("is looked at again when a table of another schema went meanwhile (42P01), as when the schema did (3F000)", async () => {
    const table = await errorOf('select * from "qes_gone_elsewhere"."src_postgres_logs__20250115"');
    expect((table as { code?: string }).code).toBe("42P01");
    expect(droppedElsewhere(table, "qes_mine")).toBe(true);
    // its own schema's missing table is a real failure
    expect(droppedElsewhere(table, "qes_gone_elsewhere")).toBe(false);
    const schema = await errorOf('create table "qes_gone_elsewhere"."t" (x int)');
    expect((schema as { code?: string }).code).toBe("3F000");
    expect(droppedElsewhere(schema, "qes_mine")).toBe(true);
    expect(droppedElsewhere(schema, "qes_gone_elsewhere")).toBe(false);
    expect(droppedElsewhere(new Error("connection refused"), "qes_mine")).toBe(false);
  });
});
