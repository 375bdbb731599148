import type { TimestampInput } from "./time.ts";

/** Any JSON value as the server sends it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A nested record on the wire: every nested JSON object of an event is an array of objects (DESIGN.md §3–4). */
export type JsonRecord = { [key: string]: JsonValue };

/** A row of an endpoint whose columns the client does not know. */
export type UnknownRow = Record<string, unknown>;

/** A parameter value: strings go as they are, numbers and booleans as text, a `Date` as ISO 8601; `undefined`/`null` are left out. */
export type ParamValue = string | number | boolean | Date | null | undefined;

/** The parameters of any endpoint, by their names on the wire. */
export type QueryParams = { readonly [name: string]: ParamValue };

// ---------------------------------------------------------------------------------------- logs.all

/** Parameters of `logs.all` (SPEC.md §4.2) for {@link QesClient.logsAll}. */
export interface LogsAllParams {
  /** only records of this project */
  project: string;
  /** exclusive lower bound; absent: none. A `Date` is sent with milliseconds, a string unchanged (keep µs with `microsToIso`). */
  isoTimestampStart?: TimestampInput | undefined;
  /** inclusive upper bound; absent: none */
  isoTimestampEnd?: TimestampInput | undefined;
}

/** Parameters of `logs.all` by their wire names, for {@link QesClient.query}. */
export interface LogsAllWireParams {
  project: string;
  iso_timestamp_start?: TimestampInput | undefined;
  iso_timestamp_end?: TimestampInput | undefined;
}

/**
 * A row of `logs.all` (SPEC.md §2.2) in wire values (DESIGN.md §4).
 * `M` types the nested metadata record when you know its shape (edge logs: {@link EdgeLogMetadata}).
 */
export interface LogRow<M extends object = JsonRecord> {
  /** log record identifier */
  id: string;
  /** record time in unix microseconds (16 digits); `microsToDate` / `microsToPreciseDate` convert it */
  timestamp: number;
  /** message text of the record */
  event_message: string;
  /** the nested structure of the record: a repeated record of one element (`metadata[0].request[0].path`) */
  metadata: M[];
}

/**
 * The usual metadata of an edge/proxy log record (log-event-shapes.md), every nested object an array
 * of one. Fields are optional: the server returns whatever the events carried.
 */
export interface EdgeLogMetadata {
  request?: Array<{
    method?: string;
    path?: string;
    url?: string;
    host?: string;
    search?: string;
    headers?: Array<Record<string, JsonValue>>;
  }>;
  response?: Array<{ status_code?: number }>;
}

// -------------------------------------------------------------------------------- usage.api-counts

/** The allowed values of `interval` (SPEC.md §4.3): window and bucket size. */
export type UsageInterval = "hourly" | "daily" | "minutely";

/** Parameters of `usage.api-counts` (SPEC.md §4.3). */
export interface UsageApiCountsParams {
  /** a regular expression matched against each request URL */
  project: string;
  /** hourly: last hour per hour; daily: last 7 days per day; minutely: last 60 minutes per minute */
  interval: UsageInterval;
}

/** A row of `usage.api-counts` (SPEC.md §2.3) in wire values: one per bucket with requests, ascending. */
export interface UsageRow {
  /** bucket start, a UTC DATETIME `YYYY-MM-DDTHH:MM:SS` (no zone) */
  timestamp: string;
  total_rest_requests: number;
  total_storage_requests: number;
  total_auth_requests: number;
  total_realtime_requests: number;
}

// ------------------------------------------------------------------------------------ endpoint map

/** The parameter and row types of endpoints by name or id; written by `generate-types` for custom endpoints. */
export type EndpointMap = { [nameOrId: string]: { params: object; row: object } };

export const LOGS_ALL_ID = "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19";
export const USAGE_API_COUNTS_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";

/** The built-in endpoints, by name and by id, with wire parameter names. */
export type BuiltinEndpoints = {
  "logs.all": { params: LogsAllWireParams; row: LogRow };
  "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19": { params: LogsAllWireParams; row: LogRow };
  "usage.api-counts": { params: UsageApiCountsParams; row: UsageRow };
  "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63": { params: UsageApiCountsParams; row: UsageRow };
};
