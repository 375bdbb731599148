import type { SqlParam } from "@qes/core";
import { LRUCache } from "lru-cache";

/**
 * New rows a table may have taken since a cut was remembered before the cut is no longer used as
 * a guess: the rows past a remembered cut grow with every write, and DuckDB reads them through the
 * time index only while they are few (`index_scan_max_count`, 2,048 rows by default).
 */
const MAX_ROWS_WRITTEN_SINCE = 1024;

interface RememberedCut {
  /** null: the rows past the cut were too many to read through the index (`CutFirstSql.window`) */
  value: string | null;
  table: string;
  /** the table's write count when the cut was taken */
  writes: number;
}

/**
 * The last exact cut of each cut-first query and its values (`CutFirstSql`), kept to be tried as
 * a guess the next time: the select run with it returns the right rows whenever it returns its
 * LIMIT's worth, and then the scan that computes the cut is not needed. Only a guess — the
 * executor checks the row count and computes the cut when it falls short — so a stale value costs
 * time, never a wrong row. Also kept: that a query's cut left too many rows past it, so that the
 * next run goes straight to the one-statement form. Bounded in entries and in key bytes.
 */
export class CutGuesses {
  private readonly cuts = new LRUCache<string, RememberedCut>({
    max: 1000,
    maxSize: 8 * 1024 * 1024,
    sizeCalculation: (cut, key) => key.length + (cut.value?.length ?? 0) + 64,
  });
  /** rows written per table by this process since it opened the store */
  private readonly writes = new Map<string, number>();

  /** the cut last found for `key` (null: run the query in one statement), unless stale */
  guess(key: string, table: string): string | null | undefined {
    const cut = this.cuts.get(key);
    if (cut === undefined) return undefined;
    if (cut.table !== table || (this.writes.get(table) ?? 0) - cut.writes > MAX_ROWS_WRITTEN_SINCE) {
      this.cuts.delete(key);
      return undefined;
    }
    return cut.value;
  }

  /**
   * `writes`: the table's count (`writesOf`) read before the transaction that found the cut began,
   * so that rows committed while it ran count against the guess
   */
  remember(key: string, table: string, value: string | null, writes = this.writesOf(table)): void {
    this.cuts.set(key, { value, table, writes });
  }

  /** rows written to `table` by this process so far */
  writesOf(table: string): number {
    return this.writes.get(table) ?? 0;
  }

  /** `rows` were written to `table` */
  wrote(table: string, rows: number): void {
    if (rows > 0) this.writes.set(table, (this.writes.get(table) ?? 0) + rows);
  }

  /** after a write that is not only new rows (a load, retention, a column's change) */
  clear(): void {
    this.cuts.clear();
  }
}

/**
 * The key a cut is remembered under: the query's text and the values it is run with — all but
 * the request's clock (`now`, a new value each request), since any value is a valid guess and
 * the last cut of "the newest rows of the last hour" stays a good one as the hour moves on.
 */
export function cutGuessKey(
  sql: string,
  values: readonly (string | null)[],
  params: readonly Pick<SqlParam, "kind">[] = [],
): string {
  return JSON.stringify([sql, values.filter((_, i) => params[i]?.kind !== "now")]);
}
