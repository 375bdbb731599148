import type { QesErrorCode, WireValue } from "@qes/core";
import type { SqlParam } from "../../support/run-sql.ts";

/**
 * One row of the SQL case table. `expect` is written by hand from BigQuery's documented semantics
 * and DESIGN.md §3's departures, as wire values (DESIGN.md §4) — never copied from a backend.
 */
export interface SqlCase {
  /** unique; the test's name */
  name: string;
  /** the rule the case checks: a BigQuery documentation section or a DESIGN.md §3/§4 departure */
  rule: string;
  /** BigQuery SQL, run as a stored endpoint over the events of ../events.ts */
  sql: string;
  params?: Record<string, SqlParam>;
  /** pinned CURRENT_TIMESTAMP(); default 2025-01-15T12:00:00Z */
  now?: string;
  /** rows, or an error: its code, and what its message must say (where the code alone tells too little) */
  expect: Record<string, WireValue>[] | { error: QesErrorCode; message?: RegExp };
  /** compare in order; default: true when the SQL contains ORDER BY, else as multisets */
  ordered?: boolean;
}

// Sources, as a query names them (backticks included).
export const EDGE = "`cloudflare.logs.prod`";
export const PG = "`postgres.logs`";
export const AUTH = "`gotrue.logs.prod`";
export const STORAGE = "`storage.logs.prod.2`";
export const RT = "`realtime.logs.prod`";
export const FN = "`deno-relay-logs`";
export const FNLOG = "`deno-subhosting-events`";
export const REST = "`postgREST.logs.prod`";
export const BOUNCER = "`pgbouncer.logs.prod`";

/**
 * Unix microseconds of a UTC instant written `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` — the TIMESTAMP wire
 * value (DESIGN.md §4). Computed independently of the code under test.
 */
export function us(iso: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!m) throw new Error(`us(): bad instant ${iso}`);
  const seconds = Date.parse(`${m[1]}Z`) / 1000;
  const fraction = Number((m[2] ?? "").padEnd(6, "0"));
  const micros = seconds * 1_000_000 + fraction;
  if (!Number.isSafeInteger(micros)) throw new Error(`us(): ${iso} is beyond 2^53 µs`);
  return micros;
}

/** Rows of one column, in the given order: `col("id", "e01", "e02")`. */
export function col(name: string, ...values: WireValue[]): Record<string, WireValue>[] {
  return values.map((v) => ({ [name]: v }));
}
