import { QesError } from "../errors.ts";
import {
  END_TIMESTAMP_MICROS,
  formatMicros,
  MIN_TIMESTAMP_MICROS,
  parseIsoTimestampMicros,
} from "../schema/timestamp-micros.ts";

/**
 * ISO 8601 / BigQuery timestamp text → unix microseconds, exactly (a JS Date keeps only
 * milliseconds). No zone means UTC. Undefined when the text is not a timestamp.
 */
export function parseTimestampMicros(text: string): bigint | undefined {
  return parseIsoTimestampMicros(text) ?? undefined;
}

/** Unix microseconds → `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), the text form bound to engines. */
export function formatTimestampMicros(micros: bigint): string {
  return formatMicros(micros, " ", "always");
}

export function requireTimestampMicros(text: string, param: string): bigint {
  const micros = parseTimestampMicros(text);
  if (micros === undefined) {
    throw new QesError(
      "invalid_parameter",
      `Parameter "${param}" must be an ISO 8601 timestamp such as 2024-01-15T09:00:00.123456Z; got "${text}".`,
      { param },
    );
  }
  // outside BigQuery's range PostgreSQL refused the bound value (a 422 blaming the SQL) where
  // DuckDB compared it
  if (micros < MIN_TIMESTAMP_MICROS || micros >= END_TIMESTAMP_MICROS) {
    throw new QesError(
      "invalid_parameter",
      `Parameter "${param}" must be a timestamp in the years 0001–9999 (UTC); got "${text}".`,
      { param },
    );
  }
  return micros;
}
