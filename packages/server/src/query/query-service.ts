import type { Backend, BoundValues, CompiledQuery, EndpointDefinition, QueryResult } from "@qes/core";
import { QesError, redactRows } from "@qes/core";
import { LRUCache } from "lru-cache";
import type { Admission } from "../admission/admission.ts";
import type { CacheEntry } from "../cache/cache-entry.ts";
import { cacheKey, paramsOfSpec, parseSpecText, specText } from "../cache/cache-key.ts";
import type { ResultCache } from "../cache/result-cache.ts";
import type { Clock } from "../clock.ts";
import type { CacheOutcome, Metrics, QueryOrigin } from "../observability/metrics.ts";
import { hitKeepsWarming, type WarmKeys } from "../warming/warm-keys.ts";
import { type PreparedEndpointQuery, prepareEndpointQuery } from "./run-endpoint-query.ts";
import { compiledForOldModel } from "./stale-model.ts";

export interface QueryServiceDeps {
  backend: Backend;
  metrics: Metrics;
  /** absent: nothing is cached (every answer is BYPASS) */
  cache?: ResultCache;
  /** an endpoint's warming interval after QES_WARM_INTERVAL_SCALE (warmer.ts) */
  warmIntervalMs: (endpoint: EndpointDefinition) => number | undefined;
  /** where requested keys of warmed endpoints are noted */
  warmKeys?: WarmKeys;
  /** `QES_REDIS_PREFIX`, the first part of every cache key */
  keyPrefix: string;
  queryTimeoutMs: number;
  clock: Clock;
  /** engine slots and rates; absent = every query runs at once */
  admission?: Admission;
}

export interface AnswerRequest {
  endpoint: EndpointDefinition;
  /** request parameters (pinned JWT values applied), unknown ones included */
  params: Record<string, string>;
  consumerSql?: string;
  redact: boolean;
  nowMicros: bigint;
  /** who asks (`Principal.caller`): admission control counts per caller */
  caller: string;
  /**
   * the client went away: the request stops waiting, and its query stops in the engine unless
   * identical requests still wait for it
   */
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

/** callers remembered as the last to ask for a warmed key (`QueryService.refresh`) */
const MAX_ASKERS = 10_000;

/** a warmed key of this process's asker memory: the endpoint's version and the request's spec */
function askerKey(endpoint: EndpointDefinition, spec: string): string {
  return `${endpoint.id}:${endpoint.version}\0${spec}`;
}

/**
 * Answers endpoint requests: validate and bind (400/422 before anything else), then the cache
 * (key = endpoint id + version + canonical declared params + consumer SQL + redaction), and on a
 * miss the backend. Rows are redacted and serialised once, when the query ran; the bytes are what
 * is cached and sent.
 */
export class QueryService {
  readonly #deps: QueryServiceDeps;
  /**
   * who last asked for each warmed key, in this process: a refresh is warming's query but done
   * for them. Without it a caller held back as heavy kept its expensive consumer SQL running every
   * interval through warming, uncharged, by asking again from the cache (hits cost no admission).
   */
  readonly #askers = new LRUCache<string, string>({ max: MAX_ASKERS });

  constructor(deps: QueryServiceDeps) {
    this.#deps = deps;
  }

  async answer(req: AnswerRequest): Promise<Answer> {
    const { endpoint } = req;
    const prepare = () =>
      prepareEndpointQuery(
        this.#deps.backend,
        endpoint,
        req.params,
        req.consumerSql,
        req.nowMicros,
        req.redact,
      );
    const prepared = await prepare();
    const { compiled, bound } = prepared;
    const { cache, admission } = this.#deps;
    // asked when the query starts, after its admission: a heavy caller among others runs modestly
    // (the caller whose slot it runs in: another caller's, when that one's ask won the flight's slot)
    const produce = (signal: AbortSignal | undefined, admittedAs = req.caller) =>
      this.#produceOnCurrentModel(
        endpoint,
        prepared,
        prepare,
        req.redact,
        "request",
        signal,
        admission?.runsModestly(admittedAs),
      );
    const estimate = this.#heavyEstimate(compiled, bound.values, req.consumerSql);
    const admit =
      admission &&
      ((signal: AbortSignal | undefined) =>
        admission.admit(req.caller, signal, estimate && (() => estimate(signal))));
    if (endpoint.cacheTtlSeconds === 0 || cache === undefined) {
      const release = admit ? await admit(req.signal) : undefined;
      try {
        const entry = await produce(req.signal);
        return { entry, cache: "BYPASS", ignored: bound.ignored };
      } finally {
        release?.();
      }
    }
    const spec = specText({
      canonical: bound.canonical,
      consumerSql: req.consumerSql ?? null,
      redact: req.redact,
    });
    const key = cacheKey(this.#deps.keyPrefix, endpoint, spec);
    const answer = await cache.answer(endpoint.name, key, endpoint.cacheTtlSeconds * 1000, produce, {
      ...(req.requestId !== undefined ? { requestId: req.requestId } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      ...(admit ? { admit, admittedAs: req.caller } : {}),
    });
    // warmed only once it worked: a request that failed, timed out or was abandoned is not re-run
    if (answer.cache === "HIT") this.trackWarmKey(endpoint, spec, answer.entry.storedAtMs, req.caller);
    else this.trackWarmKey(endpoint, spec, undefined, req.caller);
    return { ...answer, ignored: bound.ignored, cached: { key, spec } };
  }

  /**
   * notes a request of a warmed endpoint (fire and forget); a cache hit gives its entry's time,
   * and an entry its refreshes left behind is not noted (`hitKeepsWarming`)
   */
  trackWarmKey(endpoint: EndpointDefinition, spec: string, hitStoredAtMs?: number, caller?: string): void {
    if (endpoint.warmIntervalSeconds === undefined) return;
    if (
      hitStoredAtMs !== undefined &&
      !hitKeepsWarming(hitStoredAtMs, this.#deps.warmIntervalMs(endpoint), Date.now())
    )
      return;
    if (caller !== undefined) this.#askers.set(askerKey(endpoint, spec), caller);
    this.#deps.warmKeys?.track(endpoint, spec);
  }

  /**
   * warming: runs a noted request again (with a fresh CURRENT_TIMESTAMP) and stores the result.
   * `signal` ends it (the warming round's end); it takes an engine slot like any query.
   */
  async refresh(endpoint: EndpointDefinition, text: string, signal?: AbortSignal): Promise<void> {
    const cache = this.#deps.cache;
    const spec = parseSpecText(text);
    if (!cache || !spec) return;
    const now = this.#deps.clock();
    const prepare = () =>
      prepareEndpointQuery(
        this.#deps.backend,
        endpoint,
        paramsOfSpec(spec),
        spec.consumerSql ?? undefined,
        now,
        spec.redact,
      );
    const prepared = await prepare();
    const { compiled, bound } = prepared;
    const admission = this.#deps.admission;
    const asker = this.#askers.get(askerKey(endpoint, text));
    // done for the caller who asked: not while the heavy mark holds it back (the warmer keeps the
    // key and skips it, as when the engine is busy), and its engine time is that caller's
    if (asker !== undefined && admission?.heldBack(asker)) throw heldBackAsker();
    // nor, while others use the engine, when its consumer SQL is a query the planner expects to
    // be heavy: asked alone once, a cross join was cached and warmed, then refreshed every interval
    // among others without an estimate (asked before warming's slot, which counts as another's)
    const estimate =
      asker !== undefined && admission?.heldBack(asker, true)
        ? this.#heavyEstimate(compiled, bound.values, spec.consumerSql ?? undefined)
        : undefined;
    const release = await admission?.warmSlot(signal, asker);
    let entry: CacheEntry;
    try {
      if (estimate && (await estimate(signal))) throw heldBackAsker();
      entry = await this.#produceOnCurrentModel(endpoint, prepared, prepare, spec.redact, "warm", signal);
    } finally {
      release?.();
    }
    await cache.store(cacheKey(this.#deps.keyPrefix, endpoint, text), entry, endpoint.cacheTtlSeconds * 1000);
  }

  /** warming: a noted request whose refresh failed is not warmed again until it works again */
  forgetWarmKey(endpoint: EndpointDefinition, spec: string): Promise<void> {
    return this.#deps.warmKeys?.forget(endpoint, spec) ?? Promise.resolve();
  }

  /**
   * the engine's estimate of whether a consumer's query is heavy, asked at admission
   * (`Admission.admit`); stored queries are the operator's and are not estimated
   */
  #heavyEstimate(
    compiled: CompiledQuery,
    values: BoundValues,
    consumerSql: string | undefined,
  ): ((signal: AbortSignal | undefined) => Promise<boolean>) | undefined {
    const { backend, queryTimeoutMs } = this.#deps;
    if (consumerSql === undefined || backend.estimateHeavy === undefined) return undefined;
    const estimateHeavy = backend.estimateHeavy.bind(backend);
    return (signal) =>
      estimateHeavy(compiled, values, { timeoutMs: queryTimeoutMs, ...(signal ? { signal } : {}) });
  }

  /**
   * `#produce`, and once more compiled anew when the engine refused the query because it was
   * compiled for a model another instance has just widened (`compiledForOldModel`)
   */
  async #produceOnCurrentModel(
    endpoint: EndpointDefinition,
    prepared: PreparedEndpointQuery,
    prepare: () => Promise<PreparedEndpointQuery>,
    redact: boolean,
    origin: QueryOrigin,
    signal?: AbortSignal,
    modest = false,
  ): Promise<CacheEntry> {
    try {
      return await this.#produce(
        endpoint,
        prepared.compiled,
        prepared.bound.values,
        redact,
        origin,
        signal,
        modest,
      );
    } catch (e) {
      if (!(await compiledForOldModel(this.#deps.backend, prepared.compiled, e))) throw e;
      const again = await prepare();
      return this.#produce(endpoint, again.compiled, again.bound.values, redact, origin, signal, modest);
    }
  }

  /** one backend query → redacted when asked → serialised once */
  async #produce(
    endpoint: EndpointDefinition,
    compiled: CompiledQuery,
    values: BoundValues,
    redact: boolean,
    origin: QueryOrigin,
    signal?: AbortSignal,
    modest = false,
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
        ...(modest ? { modest } : {}),
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

/** warming skips a key done for a caller held back now (the warmer keeps it, as when busy) */
function heldBackAsker(): QesError {
  return new QesError("too_many_requests", "the caller this key is warmed for is held back", {
    retryAfterSeconds: 1,
  });
}
