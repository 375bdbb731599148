import { randomUUID } from "node:crypto";
import { type Queryable, qualified } from "./postgres-sql.ts";

/** the table of each source's write token (migration 0003) */
export const SOURCE_WRITES = "qes_source_writes";

/**
 * The source's write token as this transaction sees it, or null for a source no writer has given
 * one yet. Read under the source's load lock, it names the set of ids the source stores: every
 * transaction that stores events replaces it (`replaceWriteToken`) before it commits.
 */
export async function readWriteToken(db: Queryable, schema: string, name: string): Promise<string | null> {
  const { rows } = await db.query<{ token: string }>(
    `select token from ${qualified(schema, SOURCE_WRITES)} where name = $1`,
    [name],
  );
  return rows[0]?.token ?? null;
}

/**
 * Gives the source a new random write token, in the transaction that stores its events (so
 * another process's filter of the source's ids stops being trusted when they commit). Returns it.
 */
export async function replaceWriteToken(db: Queryable, schema: string, name: string): Promise<string> {
  const token = randomUUID();
  await db.query(
    `insert into ${qualified(schema, SOURCE_WRITES)} (name, token) values ($1, $2)
     on conflict (name) do update set token = excluded.token`,
    [name, token],
  );
  return token;
}
