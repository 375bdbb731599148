import type { RequestLine } from "../logging/request-log.ts";
import type { CacheOutcome } from "../observability/metrics.ts";

/**
 * What the full path (express) and the cache-hit path in front of it both write about a request,
 * decided here once: the query route's prefix, the metric labels of a request and the constant
 * fields of its log line. A new route, label or logged field is written here, not in each path.
 */
export const QUERY_ROUTE_PREFIX = "/api/endpoints/query/";

/** routes labelled by their own path in `qes_http_request_duration_seconds`; others are `other` */
const KNOWN_ROUTES = new Set(["/health", "/ready", "/metrics", "/api/openapi.json", "/api/logs"]);

export interface RequestLabels {
  route: string;
  endpoint: string;
  backend: string;
  status: string;
  cache: string;
}

/** the labels of one request in `qes_http_request_duration_seconds` */
export function requestLabels(
  path: string,
  endpoint: string | undefined,
  backend: string,
  status: number,
  cache: CacheOutcome | "" | undefined,
): RequestLabels {
  const route = path.startsWith(QUERY_ROUTE_PREFIX) ? "query" : KNOWN_ROUTES.has(path) ? path : "other";
  return { route, endpoint: endpoint ?? "", backend, status: String(status), cache: cache ?? "" };
}

/** the fields of a request's log line other than its id and time (`url` already made loggable) */
export function requestLineFields(
  method: string,
  url: string,
  status: number,
  endpoint: string | undefined,
): Omit<RequestLine, "requestId" | "ms"> {
  return { method, url, status, ...(endpoint !== undefined ? { endpoint } : {}) };
}
