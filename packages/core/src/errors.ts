/**
 * Errors are values with a stable code (DESIGN.md §7); the server maps codes to HTTP status once,
 * at the edge. Messages are written for the person who sent the request.
 */
export type QesErrorCode =
  | "missing_parameter"
  | "invalid_parameter"
  | "unauthorized"
  | "forbidden"
  | "endpoint_not_found"
  | "request_too_large"
  | "too_many_requests"
  | "sql_syntax"
  | "sql_invalid"
  | "sql_too_complex"
  | "statement_not_allowed"
  | "relation_not_allowed"
  | "function_not_allowed"
  | "sql_not_allowed"
  | "backend_unavailable"
  | "query_timeout"
  | "invalid_event"
  /** not in DESIGN.md §7's list: a path asked with a method it does not take (`allowed`: the ones it takes) */
  | "method_not_allowed"
  /**
   * not in DESIGN.md §7's list: an ingest body in a format or compression the server cannot read
   * (`param`: `Content-Type` or `Content-Encoding`; `allowed`: what it reads), RFC 9110 §15.5.16
   */
  | "unsupported_media_type"
  | "invalid_config"
  | "store_locked"
  | "internal";

export interface QesErrorDetails {
  param?: string;
  allowed?: readonly string[];
  line?: number;
  column?: number;
  /** Where the problem is, for definitions loaded from files. */
  file?: string;
  /** when to try again (`too_many_requests`): sent as the `Retry-After` header */
  retryAfterSeconds?: number;
  /**
   * the 0-based index in its request of the event an ingest refusal from the store names (`event
   * N: …`): the server adds the event's NDJSON line, which the store does not know
   */
  event?: number;
  /**
   * what the server log adds to the refusal and the client never reads (the stored query an
   * ingest request would break: not an ingest token's to learn)
   */
  logged?: Readonly<Record<string, string>>;
  cause?: unknown;
}

export class QesError extends Error {
  readonly code: QesErrorCode;
  readonly param?: string;
  readonly allowed?: readonly string[];
  readonly line?: number;
  readonly column?: number;
  readonly file?: string;
  readonly retryAfterSeconds?: number;
  readonly event?: number;
  readonly logged?: Readonly<Record<string, string>>;

  constructor(code: QesErrorCode, message: string, details: QesErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "QesError";
    this.code = code;
    if (details.param !== undefined) this.param = details.param;
    if (details.allowed !== undefined) this.allowed = details.allowed;
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
    if (details.file !== undefined) this.file = details.file;
    if (details.retryAfterSeconds !== undefined) this.retryAfterSeconds = details.retryAfterSeconds;
    if (details.event !== undefined) this.event = details.event;
    if (details.logged !== undefined) this.logged = details.logged;
  }
}

export function isQesError(e: unknown): e is QesError {
  return e instanceof QesError;
}

/** HTTP status of each code (DESIGN.md §7). */
export const HTTP_STATUS_OF: Record<QesErrorCode, number> = {
  missing_parameter: 400,
  invalid_parameter: 400,
  unauthorized: 401,
  forbidden: 403,
  endpoint_not_found: 404,
  request_too_large: 413,
  too_many_requests: 429,
  sql_syntax: 422,
  sql_invalid: 422,
  sql_too_complex: 422,
  statement_not_allowed: 422,
  relation_not_allowed: 422,
  function_not_allowed: 422,
  sql_not_allowed: 422,
  backend_unavailable: 503,
  query_timeout: 504,
  invalid_event: 400,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  invalid_config: 500,
  store_locked: 503,
  internal: 500,
};
