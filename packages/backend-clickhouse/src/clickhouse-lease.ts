import type { ClickHouseClient } from "@clickhouse/client";
import type { ClientPool } from "./clickhouse-connection.ts";
import { qualified } from "./clickhouse-sql.ts";
import type { StorageLayout } from "./clickhouse-storage.ts";

/**
 * A lease that one qes instance at a time holds on a ClickHouse database, for work that must not
 * run twice at once (rebuilding a table). ClickHouse has no locks or transactions, but
 * `CREATE TABLE` without `IF NOT EXISTS` is atomic: of instances creating one name, one succeeds.
 *
 * The lease is a table `qes_lease_<name>_<generation>`. An instance takes it by creating the
 * generation after the highest one it sees, which succeeds only when that table does not exist
 * yet, and only when the highest generation is gone or stale. Its holder writes a heartbeat row
 * every `beatMs`; a generation whose last beat (by the server's clock, so instances' clocks do not
 * matter) is older than `staleMs` belongs to a dead holder (SIGKILL), and the next instance takes
 * the following generation and drops the dead one. Release drops the holder's own table.
 */
export interface LeaseTiming {
  beatMs: number;
  staleMs: number;
  pollMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { beatMs: 2_000, staleMs: 30_000, pollMs: 500 };

export interface HeldLease {
  /** false once a heartbeat failed or another instance took the lease over as stale */
  held(): boolean;
  release(): Promise<void>;
}

/**
 * TABLE_ALREADY_EXISTS / UNKNOWN_TABLE: another instance moved first (made the generation, or
 * released the lease between listing it and reading its beats); look again. chDB's error names
 * the code only in its cause ("Unknown table expression identifier …").
 */
const RACED = /\bTABLE_ALREADY_EXISTS\b|\bUNKNOWN_TABLE\b|already exists|does not exist|Unknown table/i;

function raced(e: unknown): boolean {
  for (let c: unknown = e; c !== undefined && c !== null; c = (c as { cause?: unknown }).cause) {
    if (RACED.test(c instanceof Error ? c.message : String(c))) return true;
  }
  return false;
}

function leasePrefix(name: string): string {
  return `qes_lease_${name}_`;
}

async function generations(client: ClickHouseClient, layout: StorageLayout, name: string): Promise<number[]> {
  const rs = await client.query({
    query:
      "SELECT name FROM system.tables WHERE database = {db:String} AND startsWith(name, {prefix:String})",
    query_params: { db: layout.database, prefix: leasePrefix(name) },
    format: "JSONEachRow",
  });
  return (await rs.json<{ name: string }>())
    .map((r) => Number(r.name.slice(leasePrefix(name).length)))
    .filter((g) => Number.isSafeInteger(g) && g > 0)
    .sort((a, b) => a - b);
}

/**
 * Milliseconds since the generation's last beat, or since it was made when it has none yet;
 * undefined when it is gone (its holder released it).
 */
async function silenceMs(
  client: ClickHouseClient,
  layout: StorageLayout,
  name: string,
): Promise<number | undefined> {
  const rs = await client.query({
    query:
      `SELECT dateDiff('millisecond', greatest(` +
      `(SELECT max("beat") FROM ${qualified(layout.database, name)}), ` +
      // whole seconds, cut: a second added so that a lease made a moment ago never looks older
      `(SELECT toDateTime64(metadata_modification_time, 3, 'UTC') + toIntervalSecond(1) FROM system.tables WHERE database = {db:String} AND name = {t:String})` +
      `), now64(3, 'UTC')) AS ms`,
    query_params: { db: layout.database, t: name },
    format: "JSONEachRow",
  });
  // no row, or NULL: the table went meanwhile (its holder released it)
  const ms = (await rs.json<{ ms: string | number | null }>())[0]?.ms;
  return ms === null || ms === undefined ? undefined : Number(ms);
}

/**
 * Waits until this instance holds the lease `name` (`[a-z_]+`) on `layout`'s database, however
 * long another live holder keeps it. Not for a cluster: its generations would be per node.
 */
export async function acquireLease(
  pool: ClientPool,
  layout: StorageLayout,
  name: string,
  timing: LeaseTiming = DEFAULT_LEASE_TIMING,
): Promise<HeldLease> {
  const tableName = (g: number) => `${leasePrefix(name)}${g}`;
  const table = (g: number) => qualified(layout.database, tableName(g));
  for (;;) {
    const seen = await pool.use((c) => generations(c, layout, name));
    const highest = seen.at(-1) ?? 0;
    try {
      const silence =
        highest === 0 ? undefined : await pool.use((c) => silenceMs(c, layout, tableName(highest)));
      // released meanwhile (silence undefined): look again, as the generations may start over
      if (highest === 0 || (silence !== undefined && silence > timing.staleMs)) {
        const mine = highest + 1;
        await command(
          pool,
          `CREATE TABLE ${table(mine)} ("beat" DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple()`,
        );
        // An instance whose listing predates a release makes the generation after the released
        // one while an instance listing after it makes generation 1: two holders. Each looks
        // after its own CREATE for a generation its listing did not hold; of two such instances
        // the later one to look sees the other's, so at most one goes on (both may step back).
        const now = await pool.use((c) => generations(c, layout, name));
        if (now.some((g) => g !== mine && !seen.includes(g))) {
          await command(pool, `DROP TABLE IF EXISTS ${table(mine)} SYNC`);
        } else {
          // this generation is ours: the ones before it are dead holders' (or their leftovers)
          for (const g of seen) await command(pool, `DROP TABLE IF EXISTS ${table(g)} SYNC`);
          return holdLease(pool, table(mine), timing);
        }
      }
    } catch (e) {
      if (!raced(e)) throw e;
    }
    await new Promise((r) => setTimeout(r, timing.pollMs));
  }
}

function command(pool: ClientPool, query: string): Promise<void> {
  return pool.use(async (c) => {
    await c.command({ query });
  });
}

async function holdLease(pool: ClientPool, table: string, timing: LeaseTiming): Promise<HeldLease> {
  let held = true;
  const beat = () =>
    command(pool, `INSERT INTO ${table} SELECT now64(3, 'UTC')`).then(
      () => {},
      () => {
        // the table is gone (taken over) or the engine did not answer: stop before the next step
        held = false;
      },
    );
  await beat();
  let beating = Promise.resolve();
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, timing.beatMs);
  timer.unref();
  return {
    held: () => held,
    async release() {
      clearInterval(timer);
      await beating;
      held = false;
      await command(pool, `DROP TABLE IF EXISTS ${table} SYNC`);
    },
  };
}
