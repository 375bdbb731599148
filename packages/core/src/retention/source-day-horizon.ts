import type { SourceDayLimit } from "../backend.ts";

/**
 * Days a source holds besides those of the past ingest always takes: today, tomorrow (events may
 * lie up to a day ahead), and the oldest day once more between midnight and the next hourly run.
 */
const DAYS_HELD_BESIDES_THE_PAST = 3;

/**
 * The days of the past ingest always takes into a source on a backend that holds at most
 * `limit.days` per source (`Backend.sourceDayLimit`): older days are opened only while the source
 * holds fewer than the bound (past it a source's scans without a time filter fail; PostgreSQL: its
 * lock table), so an ingest token spreading events over past days cannot make a source
 * unscannable, while a source kept for long goes on taking today's events.
 */
export function ingestHorizonDays(limit: SourceDayLimit): number {
  return Math.max(1, limit.days - DAYS_HELD_BESIDES_THE_PAST);
}
