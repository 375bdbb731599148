import { HTTP_STATUS_OF, isQesError, type QesError, type QesErrorCode } from "@qes/core";

/** The error body of DESIGN.md §7. */
export interface ErrorBody {
  error: {
    code: QesErrorCode;
    message: string;
    requestId: string;
    param?: string;
    allowed?: readonly string[];
    line?: number;
    column?: number;
  };
}

export type ErrorFormat = "standard" | "legacy";

export interface HttpError {
  status: number;
  body: unknown;
  /** true when the error is not one of ours: log it with its stack */
  unexpected: boolean;
  /** extra response headers (`Retry-After` of a 429, `Allow` of a 405) */
  headers?: Record<string, string>;
  /**
   * a refusal (its code's status is 4xx), whatever status is sent: the legacy format sends errors
   * of the query as 200, and a loop on them is paced all the same (admission/refusal-pacing.ts)
   */
  refusal: boolean;
}

/** codes that keep their status in the legacy format: they are not errors of the query */
const LEGACY_KEEPS_STATUS: ReadonlySet<QesErrorCode> = new Set([
  "unauthorized",
  "forbidden",
  "endpoint_not_found",
  "request_too_large",
  "too_many_requests",
]);

/**
 * Maps any thrown value to a status and body, once, at the edge. Errors that are not QesErrors
 * become 500 `internal` without details.
 */
export function toHttpError(e: unknown, requestId: string, format: ErrorFormat = "standard"): HttpError {
  if (!isQesError(e)) {
    const message = "internal error; the request id identifies it in the server log";
    return {
      status: 500,
      body: format === "legacy" ? { error: message } : { error: { code: "internal", message, requestId } },
      unexpected: true,
      refusal: false,
    };
  }
  // configuration errors carry file paths: not for clients
  const internal = e.code === "internal" || e.code === "invalid_config";
  const message = internal ? "internal error; the request id identifies it in the server log" : e.message;
  const status = HTTP_STATUS_OF[e.code];
  const refusal = status >= 400 && status < 500;
  const headers = responseHeaders(e);
  if (format === "legacy") {
    return {
      status: LEGACY_KEEPS_STATUS.has(e.code) ? status : 200,
      body: { error: message },
      unexpected: internal,
      refusal,
      ...headers,
    };
  }
  const body: ErrorBody = { error: { code: internal ? "internal" : e.code, message, requestId } };
  if (!internal) {
    if (e.param !== undefined) body.error.param = e.param;
    if (e.allowed !== undefined) body.error.allowed = e.allowed;
    if (e.line !== undefined) body.error.line = e.line;
    if (e.column !== undefined) body.error.column = e.column;
  }
  return { status, body, unexpected: internal, refusal, ...headers };
}

/**
 * the headers an error's code asks for: `Retry-After` (RFC 9110 §10.2.3), `Allow` of a 405
 * (§15.5.6) and `Accept-Encoding` of a 415 for a content coding (§15.5.16)
 */
function responseHeaders(e: QesError): { headers?: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (e.retryAfterSeconds !== undefined) {
    headers["Retry-After"] = String(Math.max(1, Math.ceil(e.retryAfterSeconds)));
  }
  if (e.code === "method_not_allowed" && e.allowed !== undefined) headers.Allow = e.allowed.join(", ");
  if (e.code === "unsupported_media_type" && e.param === "Content-Encoding" && e.allowed !== undefined) {
    headers["Accept-Encoding"] = e.allowed.join(", ");
  }
  return Object.keys(headers).length === 0 ? {} : { headers };
}
