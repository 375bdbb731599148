import type { SourceStats } from "@qes/core";
import { Counter, collectDefaultMetrics, Gauge, Histogram, type LabelValues, Registry } from "prom-client";
import { SeriesHistogram } from "./series-histogram.ts";

export type CacheOutcome = "HIT" | "MISS" | "BYPASS";
/** why a backend query ran: a request, or warming */
export type QueryOrigin = "request" | "warm";

/** how long per-source statistics are reused between scrapes */
const SOURCE_STATS_TTL_MS = 15_000;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus metrics (`GET /metrics`), in a registry of their own so two servers
 * in one process (tests) do not share counters. Labels are bounded: endpoint names come from the
 * loaded endpoint files, never from the request path.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestSeconds = new SeriesHistogram({
    name: "qes_http_request_duration_seconds",
    help: "HTTP request latency, by route, endpoint, backend, status and cache outcome",
    labelNames: ["route", "endpoint", "backend", "status", "cache"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly querySeconds = new Histogram({
    name: "qes_query_duration_seconds",
    help: "Backend query latency (compile excluded), by endpoint, backend and origin",
    labelNames: ["endpoint", "backend", "origin"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly backendQueries = new Counter({
    name: "qes_backend_queries_total",
    help: "Queries sent to the backend, by endpoint, backend, origin (request|warm) and outcome",
    labelNames: ["endpoint", "backend", "origin", "outcome"] as const,
    registers: [this.registry],
  });

  /** per endpoint, the hit path's counts, added to their counters when scraped */
  readonly #pending = new Map<string, PendingCount>();

  readonly cacheRequests = new Counter({
    name: "qes_cache_requests_total",
    help: "Endpoint requests by cache outcome (HIT, MISS, BYPASS)",
    labelNames: ["endpoint", "outcome"] as const,
    registers: [this.registry],
    collect: () => this.#flushPending(),
  });

  readonly cacheCoalesced = new Counter({
    name: "qes_cache_coalesced_total",
    help: "Misses answered by another request's query: in this process, or by another instance (redis)",
    labelNames: ["endpoint", "scope"] as const,
    registers: [this.registry],
  });

  readonly fastHits = new Counter({
    name: "qes_cache_fast_hits_total",
    help: "Cache hits answered by the hit path in front of the router (a repeat of a request answered before); included in qes_cache_requests_total",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
    collect: () => this.#flushPending(),
  });

  readonly warmRuns = new Counter({
    name: "qes_warm_runs_total",
    help: "Warming runs (one per endpoint and interval across all instances)",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly warmRefreshes = new Counter({
    name: "qes_warm_refreshes_total",
    help: "Cache keys refreshed by warming",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly warmFailures = new Counter({
    name: "qes_warm_failures_total",
    help: "Warming refreshes (or whole runs) that failed; the last good value stays cached",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly warmKeys = new Gauge({
    name: "qes_warm_keys",
    help: "Keys kept warm at the last warming run, by endpoint",
    labelNames: ["endpoint"] as const,
    registers: [this.registry],
  });

  readonly admissionRefusals = new Counter({
    name: "qes_admission_refusals_total",
    help: "Requests refused with 429 by admission control: reason rate (QES_RATE_LIMIT_PER_MINUTE), busy (no engine slot) or heavy (a query the engine expects to be heavy, while others used the engine)",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly heavyEstimates = new Counter({
    name: "qes_heavy_query_estimates_total",
    help: "Consumer queries the engine's planner expected to be heavy before they ran (QES_POSTGRES_HEAVY_QUERY_COST)",
    registers: [this.registry],
  });

  #runningQueries: () => number = () => 0;

  readonly runningQueries = (() => {
    const running = () => this.#runningQueries();
    return new Gauge({
      name: "qes_running_queries",
      help: "Queries holding an engine slot now (requests and warming), bounded by QES_MAX_CONCURRENT_QUERIES",
      registers: [this.registry],
      collect() {
        this.set(running());
      },
    });
  })();

  /** where `qes_running_queries` reads its value (admission control) */
  countRunningQueries(count: () => number): void {
    this.#runningQueries = count;
  }

  /** 1 when Redis answers, 0 when not; only with QES_REDIS_URL */
  readonly redisUp: Gauge;

  /**
   * One endpoint's cache-hit counters for the hit path: `inc()` is an addition (a prom-client
   * `inc` hashes and validates its labels on every call); the sums reach `qes_cache_requests_total`
   * and `qes_cache_fast_hits_total` whenever either is scraped.
   */
  fastHitCounters(endpoint: string): { inc(): void } {
    let found = this.#pending.get(endpoint);
    if (found === undefined) {
      found = new PendingCount([
        [this.cacheRequests, { endpoint, outcome: "HIT" }],
        [this.fastHits, { endpoint }],
      ]);
      this.#pending.set(endpoint, found);
    }
    return found;
  }

  /** bumped by `sourcesChanged`: statistics read before it are not reused */
  #sourcesVersion = 0;

  /**
   * This process changed what sources hold (an ingest commit stored events, a retention run
   * removed some): the next scrape reads the per-source statistics again instead of answering
   * the counts of up to `SOURCE_STATS_TTL_MS` ago, which hid a source ingest had just created.
   */
  sourcesChanged(): void {
    this.#sourcesVersion++;
  }

  /**
   * Per-source gauges from the backend's `sourceStats` (catalogue reads), read at most every
   * `SOURCE_STATS_TTL_MS` however often /metrics is scraped, unless this process changed the
   * sources since (`sourcesChanged`; another instance's changes show within the TTL): events,
   * bytes, and the age of the oldest event (against `nowMicros`, the service's clock).
   */
  trackSources(stats: () => Promise<SourceStats[]>, nowMicros: () => bigint): void {
    let cached: { at: number; version: number; value: Promise<SourceStats[]> } | undefined;
    // a read that fails (the engine busy or down, a table going while it is read) answers the
    // last one that did not: every source's gauges vanished from the scrape with it
    let lastRead: SourceStats[] = [];
    const read = (): Promise<SourceStats[]> => {
      const version = this.#sourcesVersion;
      if (
        cached === undefined ||
        cached.version !== version ||
        Date.now() - cached.at > SOURCE_STATS_TTL_MS
      ) {
        const value = stats().then(
          (read) => {
            lastRead = read;
            return read;
          },
          () => lastRead,
        );
        cached = { at: Date.now(), version, value };
      }
      return cached.value;
    };
    const gauge = (name: string, help: string, pick: (s: SourceStats) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ["source"] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const s of await read()) {
            const v = pick(s);
            if (v !== undefined) this.set({ source: s.source }, v);
          }
        },
      });
    gauge("qes_source_events", "Events stored per source (the engine's count or estimate)", (s) => s.events);
    gauge("qes_source_bytes", "Bytes the events of a source take in the store (estimate)", (s) => s.bytes);
    gauge(
      "qes_source_oldest_event_age_seconds",
      "Age of the oldest stored event per source (absent when the source is empty)",
      (s) => (s.oldestMicros === null ? undefined : Number(nowMicros() - s.oldestMicros) / 1e6),
    );
  }

  #flushPending(): void {
    for (const pending of this.#pending.values()) pending.flush();
  }

  constructor(opts: { backend: string; executedQueries: () => number; redis: boolean }) {
    this.redisUp = new Gauge({
      name: "qes_redis_up",
      help: "1 when Redis answers, 0 when it does not (present only with QES_REDIS_URL)",
      registers: opts.redis ? [this.registry] : [],
    });
    this.registry.setDefaultLabels({ service: "qes" });
    collectDefaultMetrics({ register: this.registry, prefix: "qes_" });
    new Gauge({
      name: "qes_backend_executed_queries",
      help: `Queries the ${opts.backend} backend reports as executed since start`,
      registers: [this.registry],
      collect() {
        this.set(opts.executedQueries());
      },
    });
  }
}

/** a count added to one or more counter series at scrape time instead of on every event */
class PendingCount {
  #count = 0;
  readonly #series: readonly (readonly [Counter<string>, LabelValues<string>])[];

  constructor(series: readonly (readonly [Counter<string>, LabelValues<string>])[]) {
    this.#series = series;
  }

  inc(): void {
    this.#count++;
  }

  flush(): void {
    if (this.#count === 0) return;
    for (const [counter, labels] of this.#series) counter.inc(labels, this.#count);
    this.#count = 0;
  }
}
