/**
 * BigQuery's view of schemaless log events (DESIGN.md §3), and how every backend lays them out.
 *
 * Storage layout, shared by all backends so the compiler can address columns directly:
 * - one table per source (`SourceSchema.table`);
 * - fixed typed columns on every table: `id` STRING, `timestamp` TIMESTAMP (µs, UTC),
 *   `event_message` STRING, `project` STRING (a non-string project is stored as its text);
 * - every other field reachable from the top through JSON objects only gets a physical column
 *   (`FieldNode.column`, named `f<N>`, unique per table):
 *     scalar                 → typed value column;
 *     record, top-level      → JSON text of the object (NULL when absent or null);
 *     record, nested         → BOOLEAN presence (true when the value is an object, else NULL);
 *     records / array        → JSON text of the array;
 * - fields below an array (elements of `records`) have nodes for typing but no column: they are
 *   read from the nearest ancestor's JSON text.
 * A JSON object is a REPEATED RECORD of one element, so flattening object chains into typed
 * columns is exact and lets filters and counters run on typed columns.
 */
export type ScalarType = "STRING" | "INT64" | "FLOAT64" | "BOOL" | "TIMESTAMP" | "DATETIME" | "DATE";

export type FieldKind =
  /** a JSON scalar */
  | "scalar"
  /** a JSON object: REPEATED RECORD of at most one element */
  | "record"
  /** a JSON array of objects: REPEATED RECORD of N elements */
  | "records"
  /** a JSON array of scalars: ARRAY<type> */
  | "array";

export interface FieldNode {
  name: string;
  kind: FieldKind;
  /** scalar type, or element type of an `array` */
  type?: ScalarType;
  /** children of `record` / `records` */
  fields?: Record<string, FieldNode>;
  /** physical column, per the layout above; absent below arrays */
  column?: string;
  /**
   * `records` that also met a single object: JSON text written before may hold an object where
   * an array is expected, which a read of this field from JSON text takes as a one-element array
   */
  objects?: true;
}

export interface SourceSchema {
  /** source name as written in SQL, e.g. `cloudflare.logs.prod` */
  name: string;
  /** physical table name */
  table: string;
  /** top-level fields, including the fixed id / timestamp / event_message / project */
  fields: Record<string, FieldNode>;
}

export interface LogSchema {
  /** bumped by every change of any source; compiled queries are cached per version */
  version: number;
  sources: Record<string, SourceSchema>;
}

/** The nine sources that exist (empty) from start-up (DESIGN.md §2). */
export const BUILTIN_SOURCES = [
  "cloudflare.logs.prod",
  "postgres.logs",
  "deno-relay-logs",
  "deno-subhosting-events",
  "gotrue.logs.prod",
  "realtime.logs.prod",
  "storage.logs.prod.2",
  "postgREST.logs.prod",
  "pgbouncer.logs.prod",
] as const;

export const FIXED_COLUMNS: Record<string, ScalarType> = {
  id: "STRING",
  timestamp: "TIMESTAMP",
  event_message: "STRING",
  project: "STRING",
};
