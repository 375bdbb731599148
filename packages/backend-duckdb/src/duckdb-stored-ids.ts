import { type DuckDBConnection, listValue } from "@duckdb/node-api";
import { IdFilter } from "@qes/core";
import { quoteIdent } from "./duckdb-storage.ts";

/** ids per existence query: one list parameter, a hash semi-join in the engine */
const IDS_PER_QUERY = 10_000;
/** the smallest filter built, so that a young source is not rebuilt at every batch */
const MIN_CAPACITY = 65_536;

/** The ids among `ids` stored in `table`, read from DuckDB. */
export async function storedInTable(
  conn: DuckDBConnection,
  table: string,
  ids: string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const reader = await conn.runAndReadAll(
      `SELECT id FROM ${quoteIdent(table)} WHERE id IN (SELECT unnest($1::VARCHAR[]))`,
      [listValue(ids.slice(i, i + IDS_PER_QUERY))],
    );
    for (const [id] of reader.getRows()) found.add(id as string);
  }
  return found;
}

/**
 * Which ids of an ingest batch a source stores already (DESIGN.md §10: retries never duplicate),
 * without reading the source's whole `id` column per batch: a per-table IdFilter, built once from
 * the table, narrows the ids to the few DuckDB is asked about. The filter may only ever hold more
 * ids than the table (then DuckDB answers), never fewer: every id ingest writes is added, a
 * rolled-back or retention-deleted id merely stays, and anything else that writes a table (a
 * load) must `forget` it, so that it is rebuilt from the table. One process writes a DuckDB file,
 * so this process sees every write.
 */
export class StoredIds {
  private readonly filters = new Map<string, IdFilter>();

  async stored(conn: DuckDBConnection, table: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const filter = await this.filterFor(conn, table, ids.length);
    const maybe = ids.filter((id) => filter.mightContain(id));
    return maybe.length === 0 ? new Set() : storedInTable(conn, table, maybe);
  }

  /** Records ids written to `table` (before the commit: a rollback only leaves extra ids). */
  written(table: string, ids: Iterable<string>): void {
    const filter = this.filters.get(table);
    if (filter === undefined) return;
    for (const id of ids) filter.add(id);
    if (filter.full) this.filters.delete(table); // rebuilt, larger, at the next batch
  }

  /** Drops a table's filter after a write that did not go through `written`. */
  forget(table: string): void {
    this.filters.delete(table);
  }

  clear(): void {
    this.filters.clear();
  }

  private async filterFor(conn: DuckDBConnection, table: string, incoming: number): Promise<IdFilter> {
    const known = this.filters.get(table);
    if (known) return known;
    const t = quoteIdent(table);
    const count = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${t}`)).getRows()[0]![0]);
    const filter = new IdFilter(Math.max(MIN_CAPACITY, 2 * (count + incoming)));
    await eachStoredId(conn, table, (id) => filter.add(id));
    this.filters.set(table, filter);
    return filter;
  }
}

/** Calls `add` with every id of `table`, read in DuckDB's chunks. */
export async function eachStoredId(
  conn: DuckDBConnection,
  table: string,
  add: (id: string) => void,
): Promise<void> {
  const result = await conn.stream(`SELECT id FROM ${quoteIdent(table)} WHERE id IS NOT NULL`);
  for (
    let chunk = await result.fetchChunk();
    chunk && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  ) {
    for (const id of chunk.getColumnValues(0)) add(id as string);
  }
}
