import { isRetryableStatus, parseErrorBody, QesApiError } from "./errors.ts";
import { type IterateLogsOptions, iterateLogs } from "./paging.ts";
import { abortReason, backoffDelay, parseRetryAfter, sleep } from "./retry.ts";
import { timestampParam } from "./time.ts";
import type {
  BuiltinEndpoints,
  EndpointMap,
  LogRow,
  LogsAllParams,
  QueryParams,
  UnknownRow,
  UsageApiCountsParams,
  UsageRow,
} from "./types.ts";

/** What `createClient` takes. Only `baseUrl` is required. */
export interface ClientOptions {
  /**
   * Where qes answers, e.g. `http://127.0.0.1:4000` or `https://example.com/qes` (a path prefix is
   * kept). In a browser a path such as `/qes` or `""` (same origin) works too.
   */
  baseUrl: string;
  /**
   * The API token, sent as `X-API-KEY`. Leave it out only when something in between adds it (a
   * proxy on the page's own server, so the browser never sees the token).
   */
  apiKey?: string | undefined;
  /** a `fetch` to use instead of the global one (a test double, an instrumented fetch, …) */
  fetch?: typeof globalThis.fetch | undefined;
  /** ms to wait for each attempt's answer, body included; 0 = no limit. Default 35,000 (the server gives up at 30,000 by default and answers 504). */
  timeoutMs?: number | undefined;
  /** how often a call is retried after a 503, a 504, a timeout or a network failure. Default 2 (3 attempts). */
  retries?: number | undefined;
  /** first backoff delay in ms, doubled per retry, with jitter. Default 250. */
  retryDelayMs?: number | undefined;
  /** no backoff delay is longer, ms. Default 5,000. */
  maxRetryDelayMs?: number | undefined;
  /** a GET whose URL would be longer than this goes as POST with a JSON body (long consumer SQL). Default 4,096. */
  maxUrlLength?: number | undefined;
  /** extra headers on every request */
  headers?: Record<string, string> | undefined;
}

/** Per call. */
export interface CallOptions {
  /** aborts the call at once, also while it waits to retry; the promise rejects with the signal's reason */
  signal?: AbortSignal | undefined;
  /** switches on PII redaction for this call (`QES-ENDPOINT-REDACT-PII: true`); it cannot switch off an endpoint that redacts */
  redactPii?: boolean | undefined;
  /** sent as `X-Request-Id` (a safe value: letters, digits, `-_.:`); default a new UUID per call, the same for its retries */
  requestId?: string | undefined;
}

/** Per call, with consumer SQL for sandboxable endpoints. */
export interface QueryOptions extends CallOptions {
  /** consumer SQL: replaces the endpoint's final SELECT and reads its CTEs (e.g. `edge_logs` of `logs.all`) */
  sql?: string | undefined;
}

/** The answer to a call. */
export interface QueryResult<Row> {
  rows: Row[];
  /** `X-Request-Id` of the answer */
  requestId: string;
  /** true when the server cut rows beyond the endpoint's `maxRows` (`QES-Row-Limit-Reached`) */
  rowLimitReached: boolean;
  /** parameters the endpoint does not declare; the server ignored them (`QES-Ignored-Params`) */
  ignoredParams: string[];
}

/** The row type of `query`: the explicit one, else the endpoint map's, else unknown columns. */
export type RowOf<E extends EndpointMap, N extends string, Row> = [Row] extends [never]
  ? N extends keyof E
    ? E[N]["row"]
    : UnknownRow
  : Row;

/** The parameter type of `query`: the endpoint map's for a known name or id, any parameters otherwise. */
export type ParamsOf<E extends EndpointMap, N extends string> = N extends keyof E
  ? E[N]["params"]
  : QueryParams;

export interface QesClient<E extends EndpointMap = BuiltinEndpoints> {
  readonly baseUrl: string;

  /**
   * `logs.all`: the 100 newest edge/proxy log rows of a project, newest first, in an optional time
   * range (start exclusive, end inclusive). With `sql`, consumer SQL over the endpoint's CTEs
   * (`edge_logs`, `auth_logs`, …) decides the columns: give their type as `Row`.
   */
  logsAll(params: LogsAllParams, options?: CallOptions & { sql?: undefined }): Promise<QueryResult<LogRow>>;
  logsAll<Row = UnknownRow>(
    params: LogsAllParams,
    options: CallOptions & { sql: string },
  ): Promise<QueryResult<Row>>;

  /** `usage.api-counts`: requests per bucket of the window `interval` names, ascending. */
  usageApiCounts(
    params: UsageApiCountsParams,
    options?: CallOptions & { sql?: undefined },
  ): Promise<QueryResult<UsageRow>>;
  usageApiCounts<Row = UnknownRow>(
    params: UsageApiCountsParams,
    options: CallOptions & { sql: string },
  ): Promise<QueryResult<Row>>;

  /**
   * Any endpoint by name or UUID, with its parameters by their wire names. For a name in the
   * client's endpoint map (the built-ins, plus what `generate-types` wrote) parameters and rows are
   * typed; otherwise give the row type: `query<MyRow>("auth.errors", { project })`.
   */
  query<Row = never, N extends string = string>(
    nameOrId: N,
    params: ParamsOf<E, N>,
    options?: QueryOptions,
  ): Promise<QueryResult<RowOf<E, N, Row>>>;

  /**
   * Every edge log row of a project, newest first, page by page: see {@link iterateLogs}.
   * `for await (const row of qes.iterateLogs({ project }, { pageSize: 500 })) …`
   */
  iterateLogs(params: LogsAllParams, options?: IterateLogsOptions): AsyncGenerator<LogRow, void, undefined>;
}

const DEFAULTS = {
  timeoutMs: 35_000,
  retries: 2,
  retryDelayMs: 250,
  maxRetryDelayMs: 5_000,
  maxUrlLength: 4_096,
};

/**
 * A client for one qes server.
 *
 * ```ts
 * const qes = createClient({ baseUrl: "http://127.0.0.1:4000", apiKey: process.env.QES_API_KEY });
 * const { rows } = await qes.usageApiCounts({ project: "kzbtwfqmxrhyglnpvcas", interval: "hourly" });
 * ```
 *
 * `E` adds typed custom endpoints, as `generate-types` writes them: `createClient<QesEndpoints>(…)`.
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is the neutral element of the endpoint-map intersection
export function createClient<E extends EndpointMap = {}>(
  options: ClientOptions,
): QesClient<E & BuiltinEndpoints> {
  const cfg = {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    apiKey: options.apiKey,
    fetch: options.fetch ?? globalFetch,
    timeoutMs: nonNegative("timeoutMs", options.timeoutMs, DEFAULTS.timeoutMs),
    retries: nonNegative("retries", options.retries, DEFAULTS.retries),
    backoff: {
      baseMs: nonNegative("retryDelayMs", options.retryDelayMs, DEFAULTS.retryDelayMs),
      maxMs: nonNegative("maxRetryDelayMs", options.maxRetryDelayMs, DEFAULTS.maxRetryDelayMs),
    },
    maxUrlLength: nonNegative("maxUrlLength", options.maxUrlLength, DEFAULTS.maxUrlLength),
    headers: options.headers ?? {},
  };

  async function query(
    nameOrId: string,
    params: QueryParams,
    opts: QueryOptions = {},
  ): Promise<QueryResult<any>> {
    const wire = wireParams(params);
    if (opts.sql !== undefined) {
      if (wire.sql !== undefined && wire.sql !== opts.sql) {
        throw new TypeError(
          "Consumer SQL is given both as params.sql and options.sql; give it once, as options.sql.",
        );
      }
      wire.sql = opts.sql;
    }
    const path = `${cfg.baseUrl}/api/endpoints/query/${encodeURIComponent(nameOrId)}`;
    const search = new URLSearchParams(wire).toString();
    const getUrl = search === "" ? path : `${path}?${search}`;
    const post = getUrl.length > cfg.maxUrlLength;
    const requestId = opts.requestId ?? newRequestId();
    const headers: Record<string, string> = {
      ...cfg.headers,
      Accept: "application/json",
      "X-Request-Id": requestId,
    };
    if (cfg.apiKey !== undefined && cfg.apiKey !== "") headers["X-API-KEY"] = cfg.apiKey;
    if (opts.redactPii) headers["QES-ENDPOINT-REDACT-PII"] = "true";
    if (post) headers["Content-Type"] = "application/json; charset=utf-8";
    const init: RequestInit = post
      ? { method: "POST", headers, body: JSON.stringify(wire) }
      : { method: "GET", headers };
    return send(post ? path : getUrl, init, requestId, opts.signal);
  }

  /** one call: attempts with a timeout each, backoff between them, abort at any point */
  async function send(
    url: string,
    init: RequestInit,
    requestId: string,
    signal: AbortSignal | undefined,
  ): Promise<QueryResult<any>> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      let failure: QesApiError;
      let retryAfterMs: number | undefined;
      try {
        return await attemptOnce(url, init, requestId, signal);
      } catch (e) {
        if (!(e instanceof AttemptFailure)) throw e;
        failure = e.error;
        retryAfterMs = e.retryAfterMs;
      }
      if (!failure.retryable || attempt >= cfg.retries) throw failure;
      await sleep(backoffDelay(attempt + 1, cfg.backoff, retryAfterMs), signal);
    }
  }

  async function attemptOnce(
    url: string,
    init: RequestInit,
    requestId: string,
    signal: AbortSignal | undefined,
  ): Promise<QueryResult<any>> {
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer =
      cfg.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, cfg.timeoutMs)
        : undefined;
    let status = 0;
    let headers: Headers | undefined;
    let text: string;
    try {
      const res = await cfg.fetch(url, { ...init, signal: controller.signal });
      status = res.status;
      headers = res.headers;
      text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw abortReason(signal);
      if (timedOut) {
        throw new AttemptFailure(
          new QesApiError({
            status,
            code: "timeout",
            message: `No answer within ${cfg.timeoutMs} ms.`,
            requestId,
            cause: e,
          }),
        );
      }
      throw new AttemptFailure(
        new QesApiError({
          status,
          code: "network_error",
          message: `The request failed before an answer came: ${e instanceof Error ? e.message : String(e)}`,
          requestId,
          cause: e,
        }),
      );
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    const answeredId = headers.get("x-request-id") ?? requestId;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (status >= 200 && status < 300) {
      const result = (body as { result?: unknown } | undefined)?.result;
      if (Array.isArray(result)) {
        return {
          rows: result,
          requestId: answeredId,
          rowLimitReached: headers.get("qes-row-limit-reached") === "true",
          ignoredParams: headerList(headers.get("qes-ignored-params")),
        };
      }
      const legacy = (body as { error?: unknown } | undefined)?.error;
      if (typeof legacy === "string") {
        throw new QesApiError({ status, code: "legacy_error", message: legacy, requestId: answeredId });
      }
      throw new QesApiError({
        status,
        code: "invalid_response",
        message: `The answer is not qes's {"result": [...]}: ${snippet(text)}`,
        requestId: answeredId,
      });
    }
    const parsed = parseErrorBody(body);
    const legacy = (body as { error?: unknown } | undefined)?.error;
    const error = parsed
      ? new QesApiError({
          status,
          code: parsed.code,
          message: parsed.message,
          requestId: parsed.requestId || answeredId,
          param: parsed.param,
          allowed: parsed.allowed,
          line: parsed.line,
          column: parsed.column,
        })
      : new QesApiError({
          status,
          code: typeof legacy === "string" ? "legacy_error" : "invalid_response",
          message: typeof legacy === "string" ? legacy : `HTTP ${status}: ${snippet(text)}`,
          requestId: answeredId,
        });
    if (isRetryableStatus(status)) {
      throw new AttemptFailure(error, parseRetryAfter(headers.get("retry-after")));
    }
    throw error;
  }

  const client: QesClient<BuiltinEndpoints> = {
    baseUrl: cfg.baseUrl,
    logsAll: ((params: LogsAllParams, options?: QueryOptions) =>
      query("logs.all", logsAllWire(params), options)) as QesClient["logsAll"],
    usageApiCounts: ((params: UsageApiCountsParams, options?: QueryOptions) =>
      query(
        "usage.api-counts",
        { project: params.project, interval: params.interval },
        options,
      )) as QesClient["usageApiCounts"],
    query: query as QesClient["query"],
    iterateLogs: (params, options) =>
      iterateLogs(
        (p, o) => query("logs.all", logsAllWire(p), o) as Promise<QueryResult<LogRow>>,
        params,
        options,
      ),
  };
  return client as unknown as QesClient<E & BuiltinEndpoints>;
}

/** the global fetch, looked up per call (a browser's must be called on `globalThis`) */
const globalFetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);

/** a failed attempt the retry loop looks at; never escapes `send` */
class AttemptFailure extends Error {
  constructor(
    readonly error: QesApiError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

function logsAllWire(params: LogsAllParams): QueryParams {
  return {
    project: params.project,
    iso_timestamp_start: params.isoTimestampStart,
    iso_timestamp_end: params.isoTimestampEnd,
  };
}

/** parameter values as the strings the server reads; `undefined` and `null` are left out */
export function wireParams(params: QueryParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    out[name] = value instanceof Date ? timestampParam(value) : String(value);
  }
  return out;
}

function headerList(value: string | null): string[] {
  if (value === null || value.trim() === "") return [];
  return value.split(",").map((n) => decodeURIComponent(n.trim()));
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || "(empty body)";
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be a number ≥ 0, not ${value}`);
  return value;
}

function newRequestId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof c?.randomUUID === "function") return c.randomUUID();
  // non-secure browser contexts have no randomUUID: a random v4-shaped id is enough for tracing
  return "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, (ch) => {
    const r = Math.floor(Math.random() * 16);
    return (ch === "x" ? r : (r & 0x3) | 0x8).toString(16);
  });
}
