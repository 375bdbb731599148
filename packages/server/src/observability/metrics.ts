import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export type CacheOutcome = "HIT" | "MISS" | "BYPASS";
/** why a backend query ran: a request, or warming */
export type QueryOrigin = "request" | "warm";

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus metrics (`GET /metrics`), in a registry of their own so two servers
 * in one process (tests) do not share counters. Labels are bounded: endpoint names come from the
 * loaded endpoint files, never from the request path.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestSeconds = new Histogram({
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

  readonly cacheRequests = new Counter({
    name: "qes_cache_requests_total",
    help: "Endpoint requests by cache outcome (HIT, MISS, BYPASS)",
    labelNames: ["endpoint", "outcome"] as const,
    registers: [this.registry],
  });

  readonly cacheCoalesced = new Counter({
    name: "qes_cache_coalesced_total",
    help: "Misses answered by another request's query: in this process, or by another instance (redis)",
    labelNames: ["endpoint", "scope"] as const,
    registers: [this.registry],
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

  /** 1 when Redis answers, 0 when not; only with QES_REDIS_URL */
  readonly redisUp: Gauge;

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
