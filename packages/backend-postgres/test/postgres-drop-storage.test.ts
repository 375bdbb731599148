import { describe, expect, it } from "vitest";
import { dropPostgresStorage, readerRoleFor } from "../src/index.ts";
import { freshBackend, ownerQuery, TEST_POSTGRES_URL } from "./helpers.ts";

/** dropPostgresStorage removes what a backend created: the schema with its tables, and the reader role. */
describe("dropPostgresStorage", () => {
  it("drops the schema, its tables and the reader role, and may run again", async () => {
    const { backend, schema } = await freshBackend("qes_drop");
    await backend.load("cloudflare.logs.prod", [
      JSON.stringify({ id: "1", timestamp: "2025-01-15T12:00:00Z", event_message: "x", project: "p" }),
    ]);
    await backend.close();
    const exists = async () => ({
      schemas: Number(
        (await ownerQuery(`select count(*) as n from pg_namespace where nspname = $1`, [schema])).rows[0].n,
      ),
      roles: Number(
        (await ownerQuery(`select count(*) as n from pg_roles where rolname = $1`, [readerRoleFor(schema)]))
          .rows[0].n,
      ),
    });
    expect(await exists()).toEqual({ schemas: 1, roles: 1 });
    await dropPostgresStorage(TEST_POSTGRES_URL, schema);
    expect(await exists()).toEqual({ schemas: 0, roles: 0 });
    await dropPostgresStorage(TEST_POSTGRES_URL, schema);
  });

  it("refuses a name that is not a schema name the backend makes", async () => {
    await expect(dropPostgresStorage(TEST_POSTGRES_URL, 'x"; drop database test; --')).rejects.toMatchObject({
      code: "invalid_config",
    });
  });
});
