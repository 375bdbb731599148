import type { Backend, BoundValues, CompiledQuery, EndpointDefinition, QueryResult } from "@qes/core";
import { QesError } from "@qes/core";
import type { CacheEntry } from "../cache/cache-entry.ts";
import { cacheKey, paramsOfSpec, parseSpecText, specText } from "../cache/cache-key.ts";
import type { ResultCache } from "../cache/result-cache.ts";
import type { Clock } from "../clock.ts";
import type { CacheOutcome, Metrics, QueryOrigin } from "../observability/metrics.ts";
import { redactRows } from "../redaction/redact-ip.ts";
import type { WarmKeys } from "../warming/warm-keys.ts";
import { prepareEndpointQuery } from "./run-endpoint-query.ts";

export interface QueryServiceDeps {
  backend: Backend;
  metrics: Metrics;
  /** absent: nothing is cached (every answer is BYPASS) */
  cache?: ResultCache;
  /** where requested keys of warmed endpoints are noted */
  warmKeys?: WarmKeys;
  /** `QES_REDIS_PREFIX`, the first part of every cache key */
  keyPrefix: string;
  queryTimeoutMs: number;
  clock: Clock;
}

export interface AnswerRequest {
  endpoint: EndpointDefinition;
  /** request parameters (pinned JWT values applied), unknown ones included */
  params: Record<string, string>;
  consumerSql?: string;
  redact: boolean;
  nowMicros: bigint;
  /** aborts an uncached query when the client goes away (shared flights are never aborted) */
  signal?: AbortSignal;
  /** the request's id, for log lines written on its behalf */
  requestId?: string;
}

export interface Answer {
  entry: CacheEntry;
  cache: CacheOutcome;
  /** request parameters the endpoint does not declare */
  ignored: string[];
  /** the cache key and spec (cache-key.ts) when the answer went through the cache */
  cached?: { key: string; spec: string };
}

/**
 * Answers endpoint requests: validate and bind (400/422 before anything else), then the cache
 * (key = endpoint id + version + canonical declared params + consumer SQL + redaction), and on a
 * miss the backend. Rows are redacted and serialised once, when the query ran; the bytes are what
 * is cached and sent.
 */
export class QueryService {
  readonly #deps: QueryServiceDeps;

  constructor(deps: QueryServiceDeps) {
    this.#deps = deps;
  }

  async answer(req: AnswerRequest): Promise<Answer> {
    const { endpoint } = req;
    const { compiled, bound } = await prepareEndpointQuery(
      this.#deps.backend,
      endpoint,
      req.params,
      req.consumerSql,
      req.nowMicros,
    );
    const cache = this.#deps.cache;
    if (endpoint.cacheTtlSeconds === 0 || cache === undefined) {
      const entry = await this.#produce(endpoint, compiled, bound.values, req.redact, "request", req.signal);
      return { entry, cache: "BYPASS", ignored: bound.ignored };
    }
    const spec = specText({
      canonical: bound.canonical,
      consumerSql: req.consumerSql ?? null,
      redact: req.redact,
    });
    this.trackWarmKey(endpoint, spec);
    const key = cacheKey(this.#deps.keyPrefix, endpoint, spec);
    const answer = await cache.answer(
      endpoint.name,
      key,
      endpoint.cacheTtlSeconds * 1000,
      () => this.#produce(endpoint, compiled, bound.values, req.redact, "request"),
      req.requestId,
    );
    return { ...answer, ignored: bound.ignored, cached: { key, spec } };
  }

  /** notes a request of a warmed endpoint (fire and forget) */
  trackWarmKey(endpoint: EndpointDefinition, spec: string): void {
    if (endpoint.warmIntervalSeconds !== undefined) this.#deps.warmKeys?.track(endpoint, spec);
  }

  /** warming: runs a noted request again (with a fresh CURRENT_TIMESTAMP) and stores the result */
  async refresh(endpoint: EndpointDefinition, text: string): Promise<void> {
    const cache = this.#deps.cache;
    const spec = parseSpecText(text);
    if (!cache || !spec) return;
    const { compiled, bound } = await prepareEndpointQuery(
      this.#deps.backend,
      endpoint,
      paramsOfSpec(spec),
      spec.consumerSql ?? undefined,
      this.#deps.clock(),
    );
    const entry = await this.#produce(endpoint, compiled, bound.values, spec.redact, "warm");
    await cache.store(cacheKey(this.#deps.keyPrefix, endpoint, text), entry, endpoint.cacheTtlSeconds * 1000);
  }

  /** one backend query → redacted when asked → serialised once */
  async #produce(
    endpoint: EndpointDefinition,
    compiled: CompiledQuery,
    values: BoundValues,
    redact: boolean,
    origin: QueryOrigin,
    signal?: AbortSignal,
  ): Promise<CacheEntry> {
    const { backend, metrics } = this.#deps;
    const labels = { endpoint: endpoint.name, backend: backend.name, origin };
    const started = performance.now();
    let result: QueryResult;
    try {
      result = await backend.execute(compiled, values, {
        maxRows: endpoint.maxRows,
        timeoutMs: this.#deps.queryTimeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      const outcome = e instanceof QesError && e.code === "query_timeout" ? "timeout" : "error";
      metrics.backendQueries.inc({ ...labels, outcome });
      metrics.querySeconds.observe(labels, (performance.now() - started) / 1000);
      throw e;
    }
    metrics.backendQueries.inc({ ...labels, outcome: "ok" });
    metrics.querySeconds.observe(labels, (performance.now() - started) / 1000);
    const rows = redact ? redactRows(result.rows) : result.rows;
    return {
      body: Buffer.from(JSON.stringify({ result: rows }), "utf8"),
      storedAtMs: Date.now(),
      rowLimitReached: result.rowLimitReached,
    };
  }
}
