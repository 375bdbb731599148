import type { EventStore, Row } from "./oracle.ts";

/**
 * One row of the conformance table: a request to a stored endpoint over the HTTP API and the
 * oracle that says, from the spec, what it must answer.
 */
export interface ConformanceCase {
  name: string;
  /** SPEC.md / DESIGN.md rule the case checks */
  rule: string;
  /** endpoint name or UUID */
  endpoint: string;
  /** query-string parameters (strings, as a request carries them) */
  params: Record<string, string>;
  /** consumer SQL, sent as the `sql` parameter */
  sql?: string;
  /** request headers besides the API key */
  headers?: Record<string, string>;
  /** the expected answer, computed from the events by hand-written TypeScript */
  oracle: (events: EventStore) => Expected;
  /** rows compared in order (default) or as a multiset when the query leaves the order open */
  ordered?: boolean;
}

export interface Expected {
  rows: Row[];
  /** response headers that must be present with this value, or absent (null) */
  headers?: Record<string, string | null>;
  /** the result's column names, in order, when the case pins them */
  columns?: string[];
}
