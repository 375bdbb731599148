import type { StatisticsReport } from "@qes/core";
import type pg from "pg";
import { qualified } from "./postgres-sql.ts";

/**
 * How long an ANALYZE waits for a table's lock. A partition that retention is dropping or a
 * widening is altering is left for the next pass rather than queued behind (or ahead of) it.
 */
const LOCK_TIMEOUT_MS = 1000;

/** the server's own analysis runs: then qes leaves statistics to it */
export async function autovacuumAnalyzes(db: pg.ClientBase): Promise<boolean> {
  const { rows } = await db.query<{ on: boolean }>(
    "select current_setting('autovacuum')::boolean and current_setting('track_counts')::boolean as on",
  );
  return rows[0]?.on === true;
}

/** the statistics collector counts changes per table: what tells a pass which tables changed */
export async function changesCounted(db: pg.ClientBase): Promise<boolean> {
  const { rows } = await db.query<{ on: boolean }>("select current_setting('track_counts')::boolean as on");
  return rows[0]?.on === true;
}

/**
 * The day partitions of the schema's sources that changed enough since their last ANALYZE to
 * need another, by autovacuum's own rule and settings (`autovacuum_analyze_threshold` +
 * `autovacuum_analyze_scale_factor` × rows), so that a server run with autovacuum off gets the
 * statistics a default server would. Partitioned parents are not in it: autovacuum never analyzes
 * them either (a load analyzes a parent's four fixed columns itself, postgres-loader.ts).
 */
async function partitionsToAnalyze(db: pg.ClientBase, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name
       from pg_stat_user_tables s
       join pg_class c on c.oid = s.relid
      where s.schemaname = $1 and c.relispartition
        and s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
              + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
      order by s.n_mod_since_analyze desc, c.relname`,
    [schema],
  );
  return rows.map((r) => r.name);
}

/**
 * One statistics pass (`Backend.refreshStatistics`): nothing where autovacuum runs; otherwise
 * ANALYZE of every partition that needs it, one statement each, outside any transaction so that
 * each one's locks are held only while it runs. A partition dropped or locked meanwhile is
 * skipped (the next pass sees it again if it still needs it).
 */
export async function refreshPostgresStatistics(
  client: pg.ClientBase,
  schema: string,
): Promise<StatisticsReport> {
  if (await autovacuumAnalyzes(client)) return { analyzed: [], skipped: "autovacuum" };
  if (!(await changesCounted(client))) return { analyzed: [], skipped: "untracked" };
  const analyzed: string[] = [];
  await client.query(`set lock_timeout = ${LOCK_TIMEOUT_MS}`);
  try {
    for (const table of await partitionsToAnalyze(client, schema)) {
      try {
        await client.query(`analyze ${qualified(schema, table)}`);
        analyzed.push(table);
      } catch (e) {
        // 42P01: dropped by retention since the list was read; 55P03: locked past the timeout
        const code = (e as { code?: unknown }).code;
        if (code !== "42P01" && code !== "55P03") throw e;
      }
    }
  } finally {
    await client.query("reset lock_timeout");
  }
  return { analyzed };
}
