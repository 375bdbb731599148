import type { Backend, LoadSummary } from "@qes/core";
import type { TimeSpread } from "./event-time.ts";
import { eventsPerSource, generateEvents, type SeedSource } from "./generate-events.ts";

export interface SeedOptions {
  /** total events over all nine sources */
  events: number;
  spread: TimeSpread;
  seed: number;
  nowMicros: bigint;
  onSource?: (summary: LoadSummary) => void;
}

/** a generator seed from a clock in µs: its milliseconds, within 31 bits (a new one every millisecond for ~25 days) */
export function seedOfClock(nowMicros: bigint): number {
  return Number((nowMicros / 1000n) % 0x7fffffffn) + 1;
}

/** Generates sample events for every built-in source and loads them, source by source. */
export async function seedStore(backend: Backend, opts: SeedOptions): Promise<LoadSummary[]> {
  const summaries: LoadSummary[] = [];
  const counts = eventsPerSource(opts.events);
  for (const [source, count] of Object.entries(counts) as [SeedSource, number][]) {
    if (count === 0) continue;
    const lines = generateEvents(source, count, opts.seed, opts.nowMicros, { spread: opts.spread });
    const summary = await backend.load(source, lines, { nowMicros: opts.nowMicros });
    summaries.push(summary);
    opts.onSource?.(summary);
  }
  return summaries;
}
