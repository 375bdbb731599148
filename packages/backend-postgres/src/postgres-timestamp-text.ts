import { civilFromDays } from "@qes/core/events";

const MICROS_PER_DAY = 86_400_000_000n;

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

/**
 * `YYYY-MM-DD HH:MM:SS.ffffff+00` of unix microseconds. The date part is formatted once per day
 * seen (events of a load cluster in few days); the rest is integer arithmetic on numbers. The last
 * instant's text is kept: a batch checks an event's range, then its row encodes the same instant.
 */
export class TimestampText {
  /** the UTC day of the last instant formatted */
  day = Number.NaN;
  private dayText = "";
  private lastMicros: bigint | undefined;
  private lastText = "";

  /** null when the instant is outside the years 0001–9999 a TIMESTAMP holds */
  format(micros: bigint): string | null {
    if (micros === this.lastMicros) return this.lastText;
    let days = micros / MICROS_PER_DAY;
    let within = micros % MICROS_PER_DAY;
    if (within < 0n) {
      within += MICROS_PER_DAY;
      days -= 1n;
    }
    const d = Number(days);
    if (d !== this.day) {
      const { year, month, day } = civilFromDays(d);
      if (!(year >= 1 && year <= 9999)) return null;
      this.day = d;
      this.dayText = `${String(year).padStart(4, "0")}-${pad2(month)}-${pad2(day)} `;
    }
    const t = Number(within);
    const seconds = Math.floor(t / 1_000_000);
    const fraction = t - seconds * 1_000_000;
    const text =
      this.dayText +
      pad2(Math.floor(seconds / 3600)) +
      ":" +
      pad2(Math.floor(seconds / 60) % 60) +
      ":" +
      pad2(seconds % 60) +
      "." +
      String(fraction).padStart(6, "0") +
      "+00";
    this.lastMicros = micros;
    this.lastText = text;
    return text;
  }
}
