import type { DuckDBConnection } from "@duckdb/node-api";

/**
 * The longest a checkpoint waits for the queries that began before the catalog changes it writes.
 * Requests' queries end by their timeout (QES_QUERY_TIMEOUT_MS, 30 s by default); past this the
 * checkpoint fails as DuckDB refuses it.
 */
export const CHECKPOINT_WAIT_MS = 120_000;

/**
 * CHECKPOINT once no transaction older than the writer's last catalog change (an index dropped or
 * made, a column added or retyped, a temporary table) is still open. DuckDB refuses a checkpoint
 * while one is ("Cannot CHECKPOINT: there are other write transactions active", read-only queries
 * included), while queries that start after the change do not hold it back: so it is retried
 * until those already running have ended. The writer waits meanwhile (ingest answers 429 once its
 * queue is full). FORCE CHECKPOINT would wait too, but holds every new query meanwhile.
 */
export async function checkpointAfterReaders(
  conn: DuckDBConnection,
  waitMs = CHECKPOINT_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let pause = 20; ; pause = Math.min(2 * pause, 500)) {
    try {
      await conn.run("CHECKPOINT");
      return;
    } catch (e) {
      if (!/Cannot CHECKPOINT: there are other/.test(String(e)) || Date.now() + pause > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}
