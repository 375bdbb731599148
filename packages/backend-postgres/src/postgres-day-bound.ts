import { ingestHorizonDays, nowMicros, QesError, type SourceDayLimit } from "@qes/core";
import { type DayPartitions, dayOfMicros } from "./postgres-partitions.ts";

/**
 * The days one ingest call opens in a source, checked against the days a source may hold
 * (`Backend.sourceDayLimit`: half the server's lock table, which a scan of the source without a
 * time filter fills with a lock per partition and index). A day at or after `boundedFrom` (the
 * server's clock less the days of the past the store always takes) is always opened: a source
 * kept for long (or forever) goes on taking today's events. An older day, a backfill's, is opened
 * only while the source holds fewer days than the bound and fewer old days than half of it, so a
 * backfill of old logs is taken (retention then removes what is older than the source keeps),
 * while a token spreading events over old days and over every recent one cannot bring a source
 * past 1.5 times the bound (three quarters of the lock table), where the old days alone, counted
 * against the whole bound, could fill all of it.
 */
export class DayBound {
  /** new days opened by the call so far, and those of them before `boundedFrom` */
  readonly #opened = new Set<number>();
  #openedOld = 0;
  readonly #held: number;
  readonly #heldOld: number;
  readonly #boundedFromDay: number;

  constructor(
    private readonly source: string,
    private readonly partitions: DayPartitions,
    private readonly limit: SourceDayLimit,
    boundedBefore: bigint | undefined,
  ) {
    const from = boundedBefore ?? nowMicros() - BigInt(ingestHorizonDays(limit)) * 86_400_000_000n;
    this.#boundedFromDay = dayOfMicros(from);
    this.#held = new Set(partitions.values()).size;
    const old = new Set<string>();
    for (const [day, name] of partitions) if (day < this.#boundedFromDay) old.add(name);
    this.#heldOld = old.size;
  }

  /**
   * Takes the days of a batch's events (`days[i]` of the batch's event `indexes[i]`), or throws
   * 400 `invalid_event` naming the first event whose day the source may not open.
   */
  take(days: ArrayLike<number>, indexes: readonly number[]): void {
    for (let i = 0; i < days.length; i++) {
      const day = days[i]!;
      if (this.partitions.has(day) || this.#opened.has(day)) continue;
      if (day < this.#boundedFromDay) {
        const nth = this.#held + this.#opened.size + 1;
        if (nth > this.limit.days)
          this.#refuse(indexes[i]!, day, `${nth}th day, past the ${this.limit.days}`);
        const nthOld = this.#heldOld + this.#openedOld + 1;
        const oldMost = Math.floor(this.limit.days / 2);
        if (nthOld > oldMost)
          this.#refuse(
            indexes[i]!,
            day,
            `${nthOld}th day before ${isoDay(this.#boundedFromDay)}, past the ${oldMost} (half its days)`,
          );
        this.#openedOld++;
      }
      this.#opened.add(day);
    }
  }

  /** 400 naming the event whose `day` would be the source's `which` days it may hold */
  #refuse(index: number, day: number, which: string): never {
    throw new QesError(
      "invalid_event",
      `event ${index}: its day ${isoDay(day)} would be source ${JSON.stringify(this.source)}'s ${which} ` +
        `a source may hold here (${this.limit.reason}). Days from ${isoDay(this.#boundedFromDay)} on ` +
        "are always taken; older ones once retention has removed days of the source",
      { event: index },
    );
  }
}

function isoDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}
