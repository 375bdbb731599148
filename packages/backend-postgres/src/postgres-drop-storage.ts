import pg from "pg";
import { readerRoleFor, validateSchemaName } from "./postgres-config.ts";
import { ident, qualified } from "./postgres-sql.ts";

/** tables one DROP statement (one transaction) takes: each locks itself and its indexes */
const TABLES_PER_DROP = 10;

/**
 * Removes a log schema and its reader role (`qes_reader_<schema>`), everything the backend created
 * for it. For tests and benchmarks that make a schema per run; nothing in the service calls it.
 */
export async function dropPostgresStorage(url: string, schema: string): Promise<void> {
  validateSchemaName(schema);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await dropTablesInTurn(client, schema);
    await client.query(`drop schema if exists ${ident(schema)} cascade`);
    const role = ident(readerRoleFor(schema));
    // the role may never have been made, or may own nothing
    await client.query(`drop owned by ${role}`).catch(() => undefined);
    await client.query(`drop role if exists ${role}`).catch(() => undefined);
  } finally {
    await client.end();
  }
}

/**
 * Drops the schema's tables a few at a time, each statement its own transaction, partitions before
 * their tables: one DROP SCHEMA … CASCADE locks every table, partition and index of the schema
 * at once in the lock table the whole server shares, and failed with "out of shared memory" at
 * 1,000 sources on a server with the defaults (at 49 on one of 10 locks × 10 connections).
 */
async function dropTablesInTurn(client: pg.Client, schema: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p')
     order by c.relispartition desc, c.relname`,
    [schema],
  );
  for (let i = 0; i < rows.length; i += TABLES_PER_DROP) {
    const tables = rows.slice(i, i + TABLES_PER_DROP).map((r) => qualified(schema, r.name));
    await client.query(`drop table if exists ${tables.join(", ")} cascade`);
  }
}
