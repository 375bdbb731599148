import { openBackend } from "../../backend/open-backend.ts";
import { requestClock } from "../../clock.ts";
import { loadConfig } from "../../config.ts";
import { seedOfClock, seedStore } from "../../seed/seed-store.ts";
import { count, seconds, UsageError } from "../terminal.ts";

export const DEFAULT_SEED_EVENTS = 20_000;
export const DEFAULT_SEED_DAYS = 7;

/** `qes seed [--events N] [--days D] [--seed S]`: realistic sample events for all nine sources */
export async function seedCommand(opts: { events?: string; days?: string; seed?: string }): Promise<number> {
  const events = positive(opts.events, "--events", DEFAULT_SEED_EVENTS, true);
  const days = positive(opts.days, "--days", DEFAULT_SEED_DAYS, false);
  const config = loadConfig();
  const nowMicros = requestClock(config.testNowMicros)();
  // the same seed makes the same ids, which a load stores once: without --seed, each run adds events
  const seed = positive(opts.seed, "--seed", seedOfClock(nowMicros), true);
  const backend = await openBackend(config);
  try {
    const started = performance.now();
    const summaries = await seedStore(backend, {
      events,
      spread: { days },
      seed,
      nowMicros,
      onSource: (s) =>
        process.stdout.write(`${s.source.padEnd(24)} ${count(s.events).padStart(10)} events\n`),
    });
    const secs = (performance.now() - started) / 1000;
    const stored = summaries.reduce((n, s) => n + s.events - s.duplicates, 0);
    const again = stored < events ? ` (${count(events - stored)} of them stored already: same --seed)` : "";
    process.stdout.write(
      `seeded ${count(events)} events over ${days} day(s) in ${seconds(secs)} s ` +
        `(${count(Math.round(events / Math.max(secs, 1e-9)))} events/s)${again}\n`,
    );
    return 0;
  } finally {
    await backend.close();
  }
}

function positive(value: string | undefined, flag: string, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be a positive ${integer ? "whole " : ""}number, got "${value}"`);
  }
  return n;
}
