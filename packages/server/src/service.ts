import {
  type Backend,
  type EndpointRegistry,
  type IngestBatch,
  ingestHorizonDays,
  type LogEvent,
  QesError,
  type RetentionReport,
  type SourceDayLimit,
  type StatisticsReport,
} from "@qes/core";
import type { Logger } from "pino";
import { Admission, WARM_CALLER } from "./admission/admission.ts";
import { CallerRateLimit } from "./admission/caller-rate-limit.ts";
import { QuerySlots } from "./admission/query-slots.ts";
import { RefusalPacing } from "./admission/refusal-pacing.ts";
import { createRequestListener } from "./app.ts";
import { type ApiKey, ApiKeyVerifier, hashToken, parseApiKeys } from "./auth/api-keys.ts";
import { JwtVerifier } from "./auth/jwt.ts";
import { MemoryStore } from "./cache/memory-store.ts";
import { RedisStore } from "./cache/redis-store.ts";
import { ResultCache } from "./cache/result-cache.ts";
import { checkAtStartup } from "./check/startup-check.ts";
import { requestClock } from "./clock.ts";
import type { QesConfig } from "./config.ts";
import { loadServedEndpoints } from "./endpoint-dirs.ts";
import { CacheHitPath } from "./http/cache-hit-path.ts";
import { listen } from "./http/listen.ts";
import { BatchAdmission } from "./ingest/batch-admission.ts";
import type { StoreDays } from "./ingest/day-limit.ts";
import { GroupCommitQueue } from "./ingest/group-commit-queue.ts";
import { IngestWorkers } from "./ingest/ingest-workers.ts";
import { StoredQueryGuard } from "./ingest/stored-query-guard.ts";
import { createLogger } from "./logging/logger.ts";
import { IngestMetrics } from "./observability/ingest-metrics.ts";
import { Metrics } from "./observability/metrics.ts";
import { QueryService } from "./query/query-service.ts";
import { RedisConnection } from "./redis/redis-connection.ts";
import { dayLimitRetentionWarnings } from "./retention/retention-day-limit.ts";
import { RetentionRunner } from "./retention/retention-runner.ts";
import { shortRetentionWarnings, unheldRetentionWarnings } from "./retention/retention-warnings.ts";
import { StatisticsRunner } from "./statistics/statistics-runner.ts";
import { MemoryWarmKeys, RedisWarmKeys, type WarmKeys } from "./warming/warm-keys.ts";
import { Warmer, warmIntervalMs } from "./warming/warmer.ts";

export interface StartServiceOptions {
  config: QesConfig;
  /** an opened, initialised backend; the service does not close it */
  backend: Backend;
  /** hashes of the accepted tokens (auth/configured-keys.ts) */
  keys: ApiKey[];
  /**
   * ingest tokens beyond `QES_INGEST_KEYS` (which the service parses itself), e.g. the local
   * credential `qes serve` gives `qes load`
   */
  ingestKeys?: ApiKey[];
  /**
   * the one token that may ask this server for a retention run (`POST /api/retention`): the local
   * credential `qes serve` writes beside an embedded store, for `qes retention`
   */
  retentionToken?: string;
  logger?: Logger;
  /** default `config.host` (`QES_HOST`) */
  host?: string;
}

export interface RunningService {
  url: string;
  port: number;
  registry: EndpointRegistry;
  logger: Logger;
  metrics: Metrics;
  /** retention (QES_RETENTION_DAYS): the start-up run's reports when it ends, and one run on demand */
  retention: { firstRun: Promise<RetentionReport[]>; run(): Promise<RetentionReport[]> };
  /** the planner's statistics where the engine does not keep them: the start-up pass's report, and one pass on demand */
  statistics: { firstRun: Promise<StatisticsReport>; run(): Promise<StatisticsReport> };
  /** one warming run of an endpoint now (tests; the schedulers run it on their own) */
  warm(endpointName: string): Promise<void>;
  /**
   * graceful shutdown: stops accepting requests, waits for those in flight, stops warming (the
   * running job finishes) and closes the Redis connections
   */
  close(): Promise<void>;
}

/** how long a miss waits for another instance's query beyond the query timeout */
const PEER_WAIT_MARGIN_MS = 5000;
/** how long start-up waits for Redis before serving without it (it joins when it connects) */
const REDIS_START_WAIT_MS = 3000;
const VERSION = "0.1.0";
/** engine slots when neither QES_MAX_CONCURRENT_QUERIES nor the backend says */
const DEFAULT_CONCURRENCY = 4;
/** longest wait for an engine slot before 429 (or the query timeout, when shorter) */
const MAX_QUEUE_WAIT_MS = 10_000;
/** what a full ingest queue asks shippers to wait: about one group commit */
const INGEST_RETRY_AFTER_SECONDS = 1;

/**
 * Loads the endpoints, compiles and sandbox-checks every one against the backend (a bad one stops
 * start-up with file, line and column), connects Redis when configured, starts warming, then
 * serves HTTP on `config.port`.
 */
/**
 * Request bodies (in units of `QES_INGEST_MAX_BYTES`) the ingest queue holds while they wait for
 * their commit; past them 429. The queue's bound in events does not bound memory on its own: a
 * request of one event may be a whole body, and 100,000 of them are a terabyte.
 */
const QUEUED_BODIES = 8;

export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const { config, backend } = opts;
  const logger = opts.logger ?? createLogger();
  const registry = await loadServedEndpoints(config.endpointDirs);
  await checkAtStartup(registry.list(), backend, logger, config.ingest.maxSources);

  const metrics = new Metrics({
    backend: backend.name,
    executedQueries: () => backend.executedQueries(),
    redis: config.redis.url !== undefined,
  });
  const clock = requestClock(config.testNowMicros);
  metrics.trackSources(() => backend.sourceStats(), clock);
  const stored = await backend.schema();
  for (const warning of [
    ...(backend.startupWarnings?.() ?? []),
    ...shortRetentionWarnings(registry.list(), stored, config.retention),
    ...unheldRetentionWarnings(stored, config.retention),
    ...dayLimitRetentionWarnings(config.retention, backend.sourceDayLimit),
  ]) {
    logger.warn(warning);
  }
  const prefix = config.redis.prefix;
  let redis: RedisConnection | undefined;
  let cache: ResultCache | undefined;
  let warmKeys: WarmKeys | undefined;
  const peerWaitMs = config.queryTimeoutMs + PEER_WAIT_MARGIN_MS;
  if (config.redis.url !== undefined) {
    redis = new RedisConnection(config.redis.url, logger);
    const connection = redis;
    redis.onState((state) => metrics.redisUp.set(state === "up" ? 1 : 0));
    metrics.redisUp.set(0);
    if (!(await redis.waitUntilUp(REDIS_START_WAIT_MS))) {
      logger.warn("redis is not answering; serving from the backend until it does");
    }
    cache = new ResultCache({ store: new RedisStore(connection, logger), metrics, logger, peerWaitMs });
    warmKeys = new RedisWarmKeys(connection, prefix, config.warmMaxKeys);
  } else if (config.cacheMaxEntries > 0) {
    cache = new ResultCache({ store: new MemoryStore(config.cacheMaxEntries), metrics, logger, peerWaitMs });
    warmKeys = new MemoryWarmKeys(config.warmMaxKeys);
  }
  const cacheKind = redis ? "redis" : cache ? "memory" : "off";

  const maxConcurrent = config.admission.maxConcurrent ?? backend.queryConcurrency ?? DEFAULT_CONCURRENCY;
  const admission = new Admission({
    slots: new QuerySlots({
      maxConcurrent,
      perCaller: config.admission.perCaller,
      queuePerCaller: Math.max(4, 2 * config.admission.perCaller),
      maxWaitMs: Math.min(config.queryTimeoutMs, MAX_QUEUE_WAIT_MS),
      ungated: [WARM_CALLER],
    }),
    metrics,
    ...(config.admission.ratePerMinute !== undefined
      ? {
          rate: new CallerRateLimit({
            perMinute: config.admission.ratePerMinute,
            ...(redis ? { redis: { client: redis.client, prefix } } : {}),
          }),
        }
      : {}),
  });
  metrics.countRunningQueries(() => admission.running);
  const queries = new QueryService({
    admission,
    backend,
    metrics,
    ...(cache ? { cache } : {}),
    ...(warmKeys ? { warmKeys } : {}),
    keyPrefix: prefix,
    queryTimeoutMs: config.queryTimeoutMs,
    clock,
    warmIntervalMs: (endpoint) => warmIntervalMs(endpoint, config.warmIntervalScale),
  });
  const warmer = new Warmer({
    registry,
    keys: warmKeys ?? new MemoryWarmKeys(0),
    refresh: (endpoint, spec, signal) => queries.refresh(endpoint, spec, signal),
    metrics,
    logger,
    intervalScale: config.warmIntervalScale,
    ...(redis && config.redis.url !== undefined
      ? { redis: { url: config.redis.url, prefix, connection: redis } }
      : {}),
  });
  if (cache) warmer.start();

  const jwt = new JwtVerifier(config.jwt);
  const ingestKeys = [
    ...(config.ingest.keys !== undefined ? parseApiKeys(config.ingest.keys, "QES_INGEST_KEYS") : []),
    ...(opts.ingestKeys ?? []),
  ];
  const ingestMetrics = new IngestMetrics(metrics.registry, () => queue.heldEvents);
  const batchAdmission = new BatchAdmission({
    maxSources: config.ingest.maxSources,
    maxFields: config.ingest.maxFields,
    storedQueryGuard: new StoredQueryGuard({ definitions: () => registry.list(), dialect: backend.dialect }),
  });
  const queue: GroupCommitQueue<LogEvent, IngestBatch> = new GroupCommitQueue<LogEvent, IngestBatch>({
    // checked again against the schema the group meets; a refusal is its batch's (the queue then commits each alone)
    commit: async (batches) => {
      batchAdmission.checkGroup(await backend.schema(), batches);
      const results = await ingestMetrics.commit(batches.length, () => backend.ingest(batches));
      metrics.sourcesChanged();
      return results;
    },
    maxEvents: config.ingest.queueEvents,
    maxBytes: QUEUED_BODIES * config.ingest.maxBytes,
    retryAfterSeconds: INGEST_RETRY_AFTER_SECONDS,
  });
  const ingestWorkers = backend.ingestPreparer
    ? new IngestWorkers(backend.ingestPreparer, undefined, undefined, (message) => logger.warn(message))
    : undefined;
  const hits = cache
    ? new CacheHitPath({
        cache,
        trackWarmKey: (endpoint, spec, storedAtMs, caller) =>
          queries.trackWarmKey(endpoint, spec, storedAtMs, caller),
        logger,
        metrics,
        backendName: backend.name,
        corsOrigins: config.corsOrigins,
      })
    : undefined;
  const retention = new RetentionRunner({
    backend,
    policy: config.retention,
    clock,
    logger,
    removed: () => metrics.sourcesChanged(),
  });
  const listener = createRequestListener({
    backend,
    registry,
    verifier: new ApiKeyVerifier([...opts.keys, ...ingestKeys]),
    ...(jwt.enabled ? { jwt } : {}),
    logger,
    clock,
    errorFormat: config.errorFormat,
    ...(config.admission.refusalsPerSecond > 0
      ? { refusals: new RefusalPacing(config.admission.refusalsPerSecond) }
      : {}),
    queries,
    metrics,
    ...(redis ? { redis } : {}),
    cacheKind,
    ...(config.metricsToken !== undefined ? { metricsToken: hashToken(config.metricsToken) } : {}),
    corsOrigins: config.corsOrigins,
    version: VERSION,
    ...(hits ? { hits } : {}),
    queue,
    ingestMaxBytes: config.ingest.maxBytes,
    ingestAdmission: batchAdmission,
    schema: () => backend.schema(),
    ...storeDaysOf(backend.sourceDayLimit),
    ...(ingestWorkers ? { ingestWorkers } : {}),
    ...(opts.retentionToken !== undefined
      ? { retentionRun: { token: hashToken(opts.retentionToken), run: () => retention.runOrThrow() } }
      : {}),
    onIngestParsed: (thread) => ingestMetrics.parsed(thread),
  });
  const firstRun = retention.start();
  // the first requests do not read days retention removes at start-up; a run longer than the
  // wait (a large DuckDB file rebuilding its time index) finishes while the server answers
  if (!(await settlesWithin(firstRun, START_RETENTION_WAIT_MS))) {
    logger.info("the start-up retention run goes on while the server answers");
  }
  let server: Awaited<ReturnType<typeof listen>>;
  const host = opts.host ?? config.host;
  try {
    server = await listen(listener, config.port, host);
  } catch (e) {
    await retention.close();
    await warmer.close();
    await redis?.close();
    throw listenError(e, host, config.port);
  }
  logger.info(
    { url: server.url, backend: backend.name, endpoints: registry.size, cache: cacheKind },
    "listening",
  );
  const statistics = new StatisticsRunner({ backend, logger });
  const firstStatistics = statistics.start();
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    registry,
    logger,
    metrics,
    retention: { firstRun, run: () => retention.run() },
    statistics: { firstRun: firstStatistics, run: () => statistics.run() },
    warm: async (name) => {
      const endpoint = registry.get(name);
      const everyMs = endpoint && warmIntervalMs(endpoint, config.warmIntervalScale);
      if (endpoint && everyMs !== undefined) await warmer.warmEndpoint(endpoint, everyMs);
    },
    close: () => {
      closing ??= (async () => {
        await server.close();
        // every acknowledged batch is committed already; this waits for any still being committed
        await queue.close();
        await ingestWorkers?.close();
        await retention.close();
        await statistics.close();
        await warmer.close();
        await redis?.close();
        logger.info("stopped");
      })();
      return closing;
    },
  };
}

/** how long start-up waits for the first retention run before it listens */
const START_RETENTION_WAIT_MS = 10_000;

/** whether `work` settles within `ms` */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the server could not listen, naming the settings that chose the address: Node says only
 * `getaddrinfo ENOTFOUND x` or `EADDRINUSE`, which does not tell an operator what to change.
 */
function listenError(e: unknown, host: string, port: number): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const [param, why] =
    code === "ENOTFOUND" || code === "EAI_AGAIN"
      ? ["QES_HOST", `"${host}" is not a name this machine resolves`]
      : code === "EADDRNOTAVAIL"
        ? ["QES_HOST", `"${host}" is not an address of this machine (127.0.0.1, 0.0.0.0 and :: always are)`]
        : code === "EADDRINUSE"
          ? ["PORT", `${port} is in use on ${host} by another process`]
          : code === "EACCES"
            ? ["PORT", `${port} needs privileges this process lacks; use one above 1023`]
            : [undefined, undefined];
  if (param === undefined) return e instanceof Error ? e : new Error(String(e));
  return new QesError("invalid_config", `cannot listen on ${host}:${port}: ${param} ${why}`, {
    param,
    cause: e,
  });
}

/** `AppDeps.storeDays` of a backend that bounds a source's days */
function storeDaysOf(limit: SourceDayLimit | undefined): {
  storeDays?: StoreDays;
} {
  return limit === undefined ? {} : { storeDays: { horizonDays: ingestHorizonDays(limit) } };
}
