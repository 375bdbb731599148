/**
 * COPY rows grouped by the UTC day their timestamp falls in, each day's rows in timestamp order.
 * Writers COPY each group straight into its day's partition (postgres-partitions.ts): COPY into
 * the partitioned parent routes every row to its partition one by one, and rows in time order
 * enter the time indexes near one another instead of all over them (docs/benchmarks.md, "Issue
 * 13 on PostgreSQL").
 */

/** The rows of one day, ready for one COPY (or part of one). */
export interface DayRows {
  /** UTC day since the epoch */
  day: number;
  /** COPY rows, each ending in a newline (UTF-8 bytes when they come from a load worker) */
  text: string | Uint8Array;
  /** input line of each row of `text`, in the same order (to name a refused value's line) */
  rowLines: number[];
}

interface Row {
  micros: bigint;
  text: string;
  line: number;
}

function byTime(a: Row, b: Row): number {
  return a.micros < b.micros ? -1 : a.micros > b.micros ? 1 : 0;
}

/** Collects rows, then hands them out by day (days in first-seen order, rows in time order). */
export class DayRowsBuilder {
  private readonly days = new Map<number, Row[]>();

  /** `text` is one COPY row without its newline */
  add(day: number, micros: bigint, text: string, line: number): void {
    const rows = this.days.get(day);
    if (rows === undefined) this.days.set(day, [{ micros, text, line }]);
    else rows.push({ micros, text, line });
  }

  get size(): number {
    return this.days.size;
  }

  build(): DayRows[] {
    const out: DayRows[] = [];
    for (const [day, rows] of this.days) {
      // stable: rows of the same instant keep their input order
      rows.sort(byTime);
      let text = "";
      const rowLines: number[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        text += rows[i]!.text + "\n";
        rowLines[i] = rows[i]!.line;
      }
      out.push({ day, text, rowLines });
    }
    return out;
  }
}
