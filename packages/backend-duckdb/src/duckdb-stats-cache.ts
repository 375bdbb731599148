import type { SourceSchema, SourceStats } from "@qes/core";

/**
 * Per-source statistics for /metrics, read from the store again only for the sources this process
 * wrote since (it is the file's only writer: DuckDB allows one process per file). Reading them is
 * a few queries per source (a row count, min(timestamp), `pragma_storage_info`), ~2–5 ms a source:
 * read for every source at every scrape, 300 sources cost 1.5 s of CPU per scrape, and an ingest
 * commit makes the server read them at the next scrape.
 */
export class SourceStatsCache {
  readonly #stats = new Map<string, SourceStats>();
  /** bumped by every write: statistics read while one ended are used once, not kept */
  #writes = 0;

  /** this process wrote these sources (every source: `undefined`); their statistics are read again */
  wrote(sources?: Iterable<string>): void {
    this.#writes++;
    if (sources === undefined) this.#stats.clear();
    else for (const source of sources) this.#stats.delete(source);
  }

  /**
   * The statistics of `sources`, in their order: those not kept are read by `read` (given those
   * sources only), and kept unless a write ended while they were being read.
   */
  async get(
    sources: readonly SourceSchema[],
    read: (stale: SourceSchema[]) => Promise<SourceStats[]>,
  ): Promise<SourceStats[]> {
    const stale = sources.filter((s) => !this.#stats.has(s.name));
    const fresh = new Map<string, SourceStats>();
    if (stale.length > 0) {
      const writes = this.#writes;
      const values = await read(stale);
      const keep = writes === this.#writes;
      for (const s of values) {
        fresh.set(s.source, s);
        if (keep) this.#stats.set(s.source, s);
      }
    }
    const out: SourceStats[] = [];
    for (const source of sources) {
      const s = fresh.get(source.name) ?? this.#stats.get(source.name);
      if (s !== undefined) out.push(s);
    }
    return out;
  }

  clear(): void {
    this.wrote();
  }
}
