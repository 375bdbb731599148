import pg from "pg";
import { readerRoleFor, validateSchemaName } from "./postgres-config.ts";
import { ident } from "./postgres-sql.ts";

/**
 * Removes a log schema and its reader role (`qes_reader_<schema>`), everything the backend created
 * for it. For tests and benchmarks that make a schema per run; nothing in the service calls it.
 */
export async function dropPostgresStorage(url: string, schema: string): Promise<void> {
  validateSchemaName(schema);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${ident(schema)} cascade`);
    const role = ident(readerRoleFor(schema));
    // the role may never have been made, or may own nothing
    await client.query(`drop owned by ${role}`).catch(() => undefined);
    await client.query(`drop role if exists ${role}`).catch(() => undefined);
  } finally {
    await client.end();
  }
}
