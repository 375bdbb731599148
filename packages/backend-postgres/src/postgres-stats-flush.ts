import type pg from "pg";

/** per pool: whether its server has pg_stat_force_next_flush (PostgreSQL 15+) */
const flushes = new WeakMap<pg.Pool, Promise<boolean>>();

/**
 * Makes the connection publish its table counts when its transaction ends, ahead of the reply
 * to COMMIT. PostgreSQL otherwise holds a connection's counts for up to 10 s when it published
 * them less than 1 s before (a connection committing ingest after ingest), so the live-row count
 * `/metrics` reads for a source (postgres-retention.ts) missed the events of requests already
 * acknowledged. Older servers publish as they always did.
 */
export async function flushStatsAtCommit(pool: pg.Pool, client: pg.ClientBase): Promise<void> {
  let known = flushes.get(pool);
  if (known === undefined) {
    known = client
      .query<{ v: string }>("select current_setting('server_version_num') as v")
      .then(({ rows }) => Number(rows[0]?.v) >= 150000);
    flushes.set(pool, known);
    // a failed read (the connection broke) fails this commit only; the next one asks again
    known.catch(() => flushes.delete(pool));
  }
  if (await known) await client.query("select pg_stat_force_next_flush()");
}
