/**
 * The queries this process runs on its DuckDB store, so that a writer can wait for those begun
 * before a point. DuckDB frees a deleted row group's blocks at a checkpoint only when no
 * transaction may still see its rows: a query begun before retention's DELETE committed kept the
 * row groups the move path had emptied (duckdb-retention.ts), and they stayed in the file after
 * later checkpoints too (14 cycles of retention with a dashboard polling: 6 row groups for rows
 * that fit in one, the blocks growing each cycle).
 */
export class RunningQueries {
  readonly #running = new Set<Promise<unknown>>();

  /** runs `query`, known as running until it settles */
  track<T>(query: Promise<T>): Promise<T> {
    this.#running.add(query);
    const forget = () => this.#running.delete(query);
    query.then(forget, forget);
    return query;
  }

  /** resolves once every query running now has settled, or after `waitMs` */
  async settled(waitMs: number): Promise<void> {
    if (this.#running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    const all = Promise.allSettled([...this.#running]).then(() => undefined);
    await Promise.race([all, deadline]);
    clearTimeout(timer);
  }
}
