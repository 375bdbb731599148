/**
 * The error codes a qes server answers with (DESIGN.md §7), one per status:
 * 400 `missing_parameter`, `invalid_parameter`; 401 `unauthorized`; 403 `forbidden`;
 * 404 `endpoint_not_found`; 413 `request_too_large`; 422 the consumer-SQL codes;
 * 503 `backend_unavailable`; 504 `query_timeout`; 500 `internal`.
 */
export type QesServerErrorCode =
  | "missing_parameter"
  | "invalid_parameter"
  | "unauthorized"
  | "forbidden"
  | "endpoint_not_found"
  | "request_too_large"
  | "sql_syntax"
  | "sql_invalid"
  | "sql_too_complex"
  | "statement_not_allowed"
  | "relation_not_allowed"
  | "function_not_allowed"
  | "sql_not_allowed"
  | "backend_unavailable"
  | "query_timeout"
  | "internal";

/**
 * Codes the client sets itself (status 0 unless the server answered):
 * - `network_error`: no answer (connection refused or reset, DNS, CORS refusal in a browser);
 * - `timeout`: no answer within `timeoutMs` (per attempt);
 * - `invalid_response`: an answer that is not qes's JSON (a proxy's HTML error page, say);
 * - `legacy_error`: a server in `QES_ERROR_FORMAT=legacy` answered `{"error": "<message>"}`.
 */
export type QesClientErrorCode = "network_error" | "timeout" | "invalid_response" | "legacy_error";

/** Every code a {@link QesApiError} can carry; unknown codes of a newer server pass through as strings. */
export type QesErrorCode = QesServerErrorCode | QesClientErrorCode | (string & {});

/** The `error` object of a qes error body (DESIGN.md §7). */
export interface QesErrorBody {
  code: string;
  message: string;
  requestId: string;
  param?: string;
  allowed?: string[];
  line?: number;
  column?: number;
}

export interface QesApiErrorInit {
  status: number;
  code: QesErrorCode;
  message: string;
  requestId: string;
  param?: string | undefined;
  allowed?: string[] | undefined;
  line?: number | undefined;
  column?: number | undefined;
  cause?: unknown;
}

/**
 * The one error the client throws for a failed call (except an abort, which rejects with the
 * signal's reason, as `fetch` does).
 *
 * ```ts
 * try { await qes.usageApiCounts({ project, interval }) }
 * catch (e) { if (e instanceof QesApiError && e.code === "invalid_parameter") console.log(e.param, e.allowed) }
 * ```
 */
export class QesApiError extends Error {
  override readonly name = "QesApiError";
  /** HTTP status; 0 when no answer came (`network_error`, `timeout`) */
  readonly status: number;
  readonly code: QesErrorCode;
  /** the request id of the call: the server's `X-Request-Id`, which finds the request in its log */
  readonly requestId: string;
  /** the parameter at fault (400) */
  readonly param: string | undefined;
  /** the values the parameter allows (400 `invalid_parameter` on a parameter with `allowed`) */
  readonly allowed: string[] | undefined;
  /** position in the consumer SQL (422) */
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(init: QesApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.param = init.param;
    this.allowed = init.allowed;
    this.line = init.line;
    this.column = init.column;
  }

  /** true for the answers a retry may fix: 503, 504, no answer, timeout */
  get retryable(): boolean {
    return isRetryableStatus(this.status) || this.code === "network_error" || this.code === "timeout";
  }
}

export function isRetryableStatus(status: number): boolean {
  return status === 503 || status === 504;
}

/** Reads a qes error body; `undefined` when the value is not one. */
export function parseErrorBody(body: unknown): QesErrorBody | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as Record<string, unknown>;
  if (typeof e.code !== "string" || typeof e.message !== "string") return undefined;
  const out: QesErrorBody = {
    code: e.code,
    message: e.message,
    requestId: typeof e.requestId === "string" ? e.requestId : "",
  };
  if (typeof e.param === "string") out.param = e.param;
  if (Array.isArray(e.allowed)) out.allowed = e.allowed.map(String);
  if (typeof e.line === "number") out.line = e.line;
  if (typeof e.column === "number") out.column = e.column;
  return out;
}
