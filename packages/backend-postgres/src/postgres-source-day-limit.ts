import type { SourceDayLimit } from "@qes/core";
import { indexNames } from "./postgres-partitions.ts";
import type { Queryable } from "./postgres-sql.ts";

/** locks a scan takes per day of a source: the day's partition and each of its indexes */
export const LOCKS_PER_DAY = 1 + indexNames("t").length;

/**
 * The share of the server's lock table a scan of one source may take: a half leaves the rest to
 * the other sessions of the server, which fail alike ("out of shared memory") when a scan fills
 * it, whatever they read.
 */
const SHARE_OF_LOCK_TABLE = 2;

/**
 * The days a source may hold on this server (`Backend.sourceDayLimit`). A query of a source
 * without a time filter locks each of its daily partitions and their indexes until it ends, in
 * the lock table every session of the server shares, sized max_locks_per_transaction ×
 * (max_connections + max_prepared_transactions). Measured on PostgreSQL 15 with the defaults
 * (64 × 100): the scan failed at 2,600 days, and at a tenth of that on a server with a lock table
 * of a tenth, while other sources' queries and loads failed too. Read from the server, so raising
 * max_locks_per_transaction raises it.
 */
export async function readSourceDayLimit(db: Queryable): Promise<SourceDayLimit> {
  const { rows } = await db.query<{ locks: string; connections: string; prepared: string }>(
    `select current_setting('max_locks_per_transaction') as locks,
            current_setting('max_connections') as connections,
            current_setting('max_prepared_transactions') as prepared`,
  );
  const row = rows[0]!;
  const locks = Number(row.locks);
  const holders = Number(row.connections) + Number(row.prepared);
  const slots = locks * holders;
  const days = Math.floor(slots / LOCKS_PER_DAY / SHARE_OF_LOCK_TABLE);
  return {
    days,
    reason:
      `PostgreSQL keeps a partition per day of a source, and a query of the source without a time ` +
      `filter locks each one and its ${LOCKS_PER_DAY - 1} indexes in the lock table the whole server shares ` +
      `(max_locks_per_transaction ${locks} × (max_connections + max_prepared_transactions) ${holders} = ` +
      `${slots} locks; one source may take half of it, ${days} days). Raise max_locks_per_transaction ` +
      "on the PostgreSQL server for more days",
  };
}
