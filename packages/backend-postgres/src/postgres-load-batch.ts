import {
  isQesError,
  type LogEvent,
  parseEvent,
  type SourceSchema,
  schemaCoversEvent,
} from "@qes/core/events";
import { type CopyRowEncoder, createCopyRowEncoder } from "./postgres-copy-row.ts";
import { type DayRows, DayRowsBuilder } from "./postgres-day-rows.ts";
import type { TimestampText } from "./postgres-timestamp-text.ts";

/**
 * A batch of NDJSON lines turned into COPY text against one version of a source's schema. The
 * same code runs on the load's thread and in load workers (postgres-load-workers.ts).
 */
export interface EncodedBatch {
  /** the schema version the rows were encoded against */
  version: number;
  /** the rows of the events the schema covers, by UTC day (each day's partition must exist) */
  days: DayRows[];
  /** indexes (into the batch) of events the schema does not cover: the caller widens for them */
  uncovered: number[];
  /** events in the batch (blank lines are none), those `skip` left out included */
  events: number;
  /** each event's id, in input order (up to `error`): the load leaves out those stored (LoadIds) */
  ids: string[];
  /** the index into the batch of the event of each of `ids` */
  at: number[];
  /** the first line that cannot be loaded; the batch stops there */
  error?: { message: string; line: number };
}

function outOfRange(line: number): { message: string; line: number } {
  return {
    message: `line ${line}: "timestamp" is outside the years 0001–9999 that a TIMESTAMP can hold`,
    line,
  };
}

export class BatchEncoder {
  private readonly rows: CopyRowEncoder;
  private readonly timestamps: TimestampText;

  constructor(
    private readonly source: SourceSchema,
    readonly version: number,
  ) {
    this.rows = createCopyRowEncoder(source);
    this.timestamps = this.rows.timestamps;
  }

  get columns(): string[] {
    return this.rows.columns.map((c) => c.column);
  }

  /**
   * Parses and encodes lines (`firstLine` is the number of `lines[0]`); events the schema does
   * not cover are left to the caller, by index; those at the indexes of `skip` are not encoded.
   */
  encode(lines: string[], firstLine: number, now: bigint, skip?: ReadonlySet<number>): EncodedBatch {
    const out: EncodedBatch = {
      version: this.version,
      days: [],
      uncovered: [],
      events: 0,
      ids: [],
      at: [],
    };
    const rows = new DayRowsBuilder();
    for (let i = 0; i < lines.length; i++) {
      const line = firstLine + i;
      let event: LogEvent | null;
      try {
        event = parseEvent(lines[i]!, line, now, this.source.name);
      } catch (e) {
        if (!isQesError(e)) throw e;
        out.error = { message: e.message, line };
        break;
      }
      if (event === null) continue;
      out.events++;
      out.ids.push(event.id);
      out.at.push(i);
      if (skip?.has(i)) continue;
      if (this.timestamps.format(event.timestamp) === null) {
        out.error = outOfRange(line);
        break;
      }
      if (!schemaCoversEvent(this.source.fields, event.body)) {
        out.uncovered.push(i);
        continue;
      }
      // the day of the range check above (the row's encoding may format other instants)
      const day = this.timestamps.day;
      rows.add(day, event.timestamp, this.rows.encode(event), line);
    }
    out.days = rows.build();
    return out;
  }

  /** Encodes events the schema covers (the caller widened it for them), `lines[i]` being the line of `events[i]`. */
  encodeEvents(events: LogEvent[], lines: number[]): DayRows[] {
    const rows = new DayRowsBuilder();
    for (const [i, event] of events.entries()) {
      // the range was checked when the batch was first encoded; format sets the day
      this.timestamps.format(event.timestamp);
      const day = this.timestamps.day;
      rows.add(day, event.timestamp, this.rows.encode(event), lines[i]!);
    }
    return rows.build();
  }
}
