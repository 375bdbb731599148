import { ingestHorizonDays, nowMicros, QesError, type SourceDayLimit } from "@qes/core";
import { type DayPartitions, dayOfMicros } from "./postgres-partitions.ts";

/**
 * The days one ingest call opens in a source, checked against the days a source may hold
 * (`Backend.sourceDayLimit`: past them a scan of the source without a time filter runs out of the
 * server's lock table). A day at or after `boundedFrom` (the server's clock less the days of the
 * past the store always takes) is always opened: a source kept for long (or forever) goes on
 * taking today's events. An older day, a backfill's, is opened only while the source holds fewer
 * days than the bound, so an ingest token spreading events over past days cannot make a source
 * unscannable, and a backfill of old logs is taken (retention then removes what is older than the
 * source keeps).
 */
export class DayBound {
  /** new days opened by the call so far */
  readonly #opened = new Set<number>();
  readonly #held: number;
  readonly #boundedFromDay: number;

  constructor(
    private readonly source: string,
    private readonly partitions: DayPartitions,
    private readonly limit: SourceDayLimit,
    boundedBefore: bigint | undefined,
  ) {
    this.#held = new Set(partitions.values()).size;
    const from = boundedBefore ?? nowMicros() - BigInt(ingestHorizonDays(limit)) * 86_400_000_000n;
    this.#boundedFromDay = dayOfMicros(from);
  }

  /**
   * Takes the days of a batch's events (`days[i]` of the batch's event `indexes[i]`), or throws
   * 400 `invalid_event` naming the first event whose day the source may not open.
   */
  take(days: ArrayLike<number>, indexes: readonly number[]): void {
    for (let i = 0; i < days.length; i++) {
      const day = days[i]!;
      if (this.partitions.has(day) || this.#opened.has(day)) continue;
      if (day < this.#boundedFromDay && this.#held + this.#opened.size + 1 > this.limit.days) {
        throw new QesError(
          "invalid_event",
          `event ${indexes[i]}: its day ${isoDay(day)} would be source ${JSON.stringify(this.source)}'s ` +
            `${this.#held + this.#opened.size + 1}th day, past the ${this.limit.days} a source may hold here ` +
            `(${this.limit.reason}). Days from ${isoDay(this.#boundedFromDay)} on are always taken; older ones ` +
            "once retention has removed days of the source",
          { event: indexes[i]! },
        );
      }
      this.#opened.add(day);
    }
  }
}

function isoDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}
