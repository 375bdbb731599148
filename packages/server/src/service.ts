import { type Backend, type EndpointRegistry, QesError } from "@qes/core";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { type ApiKey, ApiKeyVerifier } from "./auth/api-keys.ts";
import { JwtVerifier } from "./auth/jwt.ts";
import { MemoryStore } from "./cache/memory-store.ts";
import { RedisStore } from "./cache/redis-store.ts";
import { ResultCache } from "./cache/result-cache.ts";
import { checkEndpoints, formatProblem } from "./check/check-endpoints.ts";
import { requestClock } from "./clock.ts";
import type { QesConfig } from "./config.ts";
import { loadServedEndpoints } from "./endpoint-dirs.ts";
import { CacheHitPath } from "./http/cache-hit-path.ts";
import { listen } from "./http/listen.ts";
import { createLogger } from "./logging/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { QueryService } from "./query/query-service.ts";
import { RedisConnection } from "./redis/redis-connection.ts";
import { MemoryWarmKeys, RedisWarmKeys, type WarmKeys } from "./warming/warm-keys.ts";
import { Warmer } from "./warming/warmer.ts";

export interface StartServiceOptions {
  config: QesConfig;
  /** an opened, initialised backend; the service does not close it */
  backend: Backend;
  /** hashes of the accepted tokens (auth/configured-keys.ts) */
  keys: ApiKey[];
  logger?: Logger;
  /** default 0.0.0.0 */
  host?: string;
}

export interface RunningService {
  url: string;
  port: number;
  registry: EndpointRegistry;
  logger: Logger;
  metrics: Metrics;
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

/**
 * Loads the endpoints, compiles and sandbox-checks every one against the backend (a bad one stops
 * start-up with file, line and column), connects Redis when configured, starts warming, then
 * serves HTTP on `config.port`.
 */
export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const { config, backend } = opts;
  const logger = opts.logger ?? createLogger();
  const registry = await loadServedEndpoints(config.endpointDirs);
  const problems = checkEndpoints(registry.list(), await backend.schema(), backend.dialect);
  const first = problems[0];
  if (first) {
    throw new QesError("invalid_config", problems.map(formatProblem).join("\n"), {
      file: first.file,
      ...(first.line !== undefined ? { line: first.line } : {}),
      ...(first.column !== undefined ? { column: first.column } : {}),
    });
  }

  const metrics = new Metrics({
    backend: backend.name,
    executedQueries: () => backend.executedQueries(),
    redis: config.redis.url !== undefined,
  });
  const clock = requestClock(config.testNowMicros);
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

  const queries = new QueryService({
    backend,
    metrics,
    ...(cache ? { cache } : {}),
    ...(warmKeys ? { warmKeys } : {}),
    keyPrefix: prefix,
    queryTimeoutMs: config.queryTimeoutMs,
    clock,
  });
  const warmer = new Warmer({
    registry,
    keys: warmKeys ?? new MemoryWarmKeys(0),
    refresh: (endpoint, spec) => queries.refresh(endpoint, spec),
    metrics,
    logger,
    intervalScale: config.warmIntervalScale,
    ...(redis && config.redis.url !== undefined
      ? { redis: { url: config.redis.url, prefix, connection: redis } }
      : {}),
  });
  if (cache) warmer.start();

  const jwt = new JwtVerifier(config.jwt);
  const hits = cache
    ? new CacheHitPath({
        cache,
        trackWarmKey: (endpoint, spec) => queries.trackWarmKey(endpoint, spec),
        logger,
        metrics,
        backendName: backend.name,
        corsOrigins: config.corsOrigins,
      })
    : undefined;
  const app = createApp({
    backend,
    registry,
    verifier: new ApiKeyVerifier(opts.keys),
    ...(jwt.enabled ? { jwt } : {}),
    logger,
    clock,
    errorFormat: config.errorFormat,
    queries,
    metrics,
    ...(redis ? { redis } : {}),
    cacheKind,
    corsOrigins: config.corsOrigins,
    version: VERSION,
    ...(hits ? { hits } : {}),
  });
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(hits ? hits.before(app) : app, config.port, opts.host);
  } catch (e) {
    await warmer.close();
    await redis?.close();
    throw e;
  }
  logger.info(
    { url: server.url, backend: backend.name, endpoints: registry.size, cache: cacheKind },
    "listening",
  );
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    registry,
    logger,
    metrics,
    warm: async (name) => {
      const endpoint = registry.get(name);
      if (endpoint) await warmer.warmEndpoint(endpoint);
    },
    close: () => {
      closing ??= (async () => {
        await server.close();
        await warmer.close();
        await redis?.close();
        logger.info("stopped");
      })();
      return closing;
    },
  };
}
