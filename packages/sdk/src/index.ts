/**
 * @qes/sdk — a typed client for qes, the query endpoint service. Browsers and Node 20: it uses
 * `fetch` and nothing Node-only.
 */
export {
  type CallOptions,
  type ClientOptions,
  createClient,
  type ParamsOf,
  type QesClient,
  type QueryOptions,
  type QueryResult,
  type RowOf,
  wireParams,
} from "./client.ts";
export {
  QesApiError,
  type QesApiErrorInit,
  type QesClientErrorCode,
  type QesErrorBody,
  type QesErrorCode,
  type QesServerErrorCode,
} from "./errors.ts";
export { type IterateLogsOptions, iterateLogs, LOGS_ALL_MAX_ROWS, LOGS_ALL_PAGE } from "./paging.ts";
export { backoffDelay, parseRetryAfter } from "./retry.ts";
export {
  type Micros,
  microsToDate,
  microsToIso,
  microsToPreciseDate,
  type PreciseDate,
  type TimestampInput,
  timestampParam,
} from "./time.ts";
export {
  type BuiltinEndpoints,
  type EdgeLogMetadata,
  type EndpointMap,
  type JsonRecord,
  type JsonValue,
  LOGS_ALL_ID,
  type LogRow,
  type LogsAllParams,
  type LogsAllWireParams,
  type ParamValue,
  type QueryParams,
  type UnknownRow,
  USAGE_API_COUNTS_ID,
  type UsageApiCountsParams,
  type UsageInterval,
  type UsageRow,
} from "./types.ts";
