import type { EndpointDefinition, EndpointRegistry } from "@qes/core";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "../observability/metrics.ts";
import type { RedisConnection } from "../redis/redis-connection.ts";
import type { WarmKeys } from "./warm-keys.ts";

/**
 * refreshes one cache key from its spec; throws when the query fails (the old value stays).
 * `signal` aborts it at the end of the warming round.
 */
export type RefreshKey = (endpoint: EndpointDefinition, spec: string, signal: AbortSignal) => Promise<void>;

export interface WarmerOptions {
  registry: EndpointRegistry;
  keys: WarmKeys;
  refresh: RefreshKey;
  metrics: Metrics;
  logger: Logger;
  /** `QES_WARM_INTERVAL_SCALE` */
  intervalScale: number;
  /** with Redis: BullMQ job schedulers; without: in-process timers */
  redis?: { url: string; prefix: string; connection: RedisConnection };
}

/** refreshes at a time within one warming run (each also takes an engine slot) */
const REFRESH_CONCURRENCY = 2;
const QUEUE_NAME = "warm";
const SCHEDULER_PREFIX = "warm:";

/** one scheduler per endpoint id: every instance upserting it yields one */
function schedulerId(endpoint: EndpointDefinition): string {
  return `${SCHEDULER_PREFIX}${endpoint.id}`;
}

/** the interval of an endpoint's warming, after `QES_WARM_INTERVAL_SCALE`, at least 100 ms */
export function warmIntervalMs(endpoint: EndpointDefinition, scale: number): number | undefined {
  if (endpoint.warmIntervalSeconds === undefined || endpoint.cacheTtlSeconds === 0) return undefined;
  return Math.max(100, Math.round(endpoint.warmIntervalSeconds * 1000 * scale));
}

/**
 * Cache warming (DESIGN.md §7): every `warmIntervalSeconds` each endpoint's keys requested within
 * its cache lifetime are queried again and stored with a fresh lifetime, so callers keep hitting.
 *
 * With Redis, one BullMQ job scheduler per endpoint (`upsertJobScheduler` is atomic per id, so
 * every instance upserting it yields one) produces one job per interval, and whichever instance's
 * worker takes it runs the refresh: once per interval across all instances. Without Redis an
 * in-process timer per endpoint does the same for the in-process cache. A failed refresh is
 * counted and logged and the last good value stays until its lifetime ends.
 */
export class Warmer {
  readonly #opts: WarmerOptions;
  readonly #timers: NodeJS.Timeout[] = [];
  #queue?: Queue;
  #worker?: Worker;
  #bullConnections: Redis[] = [];
  #closed = false;

  constructor(opts: WarmerOptions) {
    this.#opts = opts;
  }

  /** the endpoints that warm, with their interval */
  warmed(): { endpoint: EndpointDefinition; everyMs: number }[] {
    const out: { endpoint: EndpointDefinition; everyMs: number }[] = [];
    for (const endpoint of this.#opts.registry.list()) {
      const everyMs = warmIntervalMs(endpoint, this.#opts.intervalScale);
      if (everyMs !== undefined) out.push({ endpoint, everyMs });
    }
    return out;
  }

  /** starts the schedulers (Redis) or timers; never waits for Redis */
  start(): void {
    const warmed = this.warmed();
    if (warmed.length === 0) return;
    const redis = this.#opts.redis;
    if (!redis) {
      for (const { endpoint, everyMs } of warmed) {
        let busy = false;
        const timer = setInterval(() => {
          if (busy) return;
          busy = true;
          this.warmEndpoint(endpoint, everyMs).finally(() => {
            busy = false;
          });
        }, everyMs);
        timer.unref();
        this.#timers.push(timer);
      }
      return;
    }
    this.#startBullmq(redis, warmed);
  }

  #startBullmq(
    redis: NonNullable<WarmerOptions["redis"]>,
    warmed: { endpoint: EndpointDefinition; everyMs: number }[],
  ): void {
    const { logger } = this.#opts;
    const prefix = `${redis.prefix.endsWith(":") ? redis.prefix : `${redis.prefix}:`}bull`;
    // BullMQ needs connections that retry forever (maxRetriesPerRequest: null); they are ours to close
    const connect = () => {
      const c = new Redis(redis.url, { maxRetriesPerRequest: null, connectionName: "qes-warm" });
      c.on("error", () => undefined);
      this.#bullConnections.push(c);
      return c;
    };
    this.#queue = new Queue(QUEUE_NAME, { connection: connect(), prefix });
    this.#queue.on("error", (e) => logger.debug({ err: { message: e.message } }, "warm queue error"));
    this.#worker = new Worker(
      QUEUE_NAME,
      async (job) => {
        const endpoint = this.#opts.registry.get(String(job.data?.endpointId ?? ""));
        const everyMs = endpoint && warmIntervalMs(endpoint, this.#opts.intervalScale);
        if (endpoint && everyMs !== undefined) await this.warmEndpoint(endpoint, everyMs);
      },
      { connection: connect(), prefix, concurrency: 2, autorun: true },
    );
    this.#worker.on("error", (e) => logger.debug({ err: { message: e.message } }, "warm worker error"));

    // (re)upsert the schedulers now and whenever Redis comes back, in case it lost them
    const upsert = async () => {
      if (this.#closed) return;
      const queue = this.#queue;
      if (!queue) return;
      try {
        const wanted = new Set(warmed.map(({ endpoint }) => schedulerId(endpoint)));
        for (const { endpoint, everyMs } of warmed) {
          await queue.upsertJobScheduler(
            schedulerId(endpoint),
            { every: everyMs },
            {
              name: `warm ${endpoint.name}`,
              data: { endpointId: endpoint.id },
              opts: { removeOnComplete: true, removeOnFail: 100 },
            },
          );
        }
        // an endpoint removed, or no longer warmed, since a scheduler was made for it: its
        // scheduler would make a job per interval forever that every worker then ignores
        const stale: string[] = [];
        for (const scheduler of await queue.getJobSchedulers()) {
          if (scheduler.key.startsWith(SCHEDULER_PREFIX) && !wanted.has(scheduler.key)) {
            await queue.removeJobScheduler(scheduler.key);
            stale.push(scheduler.key);
          }
        }
        logger.info(
          {
            schedulers: warmed.map(({ endpoint, everyMs }) => ({ endpoint: endpoint.name, everyMs })),
            ...(stale.length > 0 ? { removed: stale } : {}),
          },
          "warming scheduled",
        );
      } catch (e) {
        logger.warn(
          { err: { message: (e as Error).message } },
          "warming not scheduled yet; retrying when redis is up",
        );
      }
    };
    redis.connection.onState((state) => {
      if (state === "up") void upsert();
    });
    if (redis.connection.up) void upsert();
  }

  /**
   * One warming run of an endpoint: refresh every due key, at most `REFRESH_CONCURRENCY` at a time,
   * within `budgetMs` (the interval: a run never outlasts it, so runs never pile up). A refresh
   * still running at the end is aborted in the engine; one that fails or is aborted leaves the
   * warm set (a request that succeeds brings it back); keys not reached wait for the next run.
   * Never throws.
   */
  async warmEndpoint(endpoint: EndpointDefinition, budgetMs: number): Promise<void> {
    const { metrics, logger, keys, refresh } = this.#opts;
    const labels = { endpoint: endpoint.name };
    metrics.warmRuns.inc(labels);
    const deadline = AbortSignal.timeout(Math.max(1, budgetMs));
    let specs: string[];
    try {
      specs = await keys.due(endpoint);
    } catch (e) {
      metrics.warmFailures.inc(labels);
      logger.warn({ endpoint: endpoint.name, err: { message: (e as Error).message } }, "warming run failed");
      return;
    }
    metrics.warmKeys.set(labels, specs.length);
    let failed = 0;
    let next = 0;
    const worker = async () => {
      while (next < specs.length && !this.#closed && !deadline.aborted) {
        const spec = specs[next++] as string;
        try {
          await refresh(endpoint, spec, deadline);
          metrics.warmRefreshes.inc(labels);
        } catch (e) {
          failed++;
          metrics.warmFailures.inc(labels);
          const busy = (e as { code?: unknown }).code === "too_many_requests";
          // the engine was busy: the key did nothing wrong and stays
          if (!busy) await keys.forget(endpoint, spec).catch(() => undefined);
          logger.warn(
            {
              endpoint: endpoint.name,
              err: { message: deadline.aborted ? "the warming round ran out of time" : (e as Error).message },
            },
            busy
              ? "warming refresh skipped: the engine is busy"
              : "warming refresh failed; the key is no longer warmed, the last good value stays cached",
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, specs.length) }, worker));
    logger.debug({ endpoint: endpoint.name, keys: specs.length, failed }, "warming run");
  }

  /** stops timers, lets the worker finish its job, closes the BullMQ connections */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    // with Redis down there is no job to finish and nothing to say goodbye to: do not wait
    const up = this.#opts.redis?.connection.up ?? false;
    if (!up) for (const c of this.#bullConnections) c.disconnect();
    const closing: Promise<unknown>[] = [];
    if (this.#worker) closing.push(withTimeout(this.#worker.close(!up), up ? 10_000 : 500));
    if (this.#queue) closing.push(withTimeout(this.#queue.close(), up ? 5_000 : 500));
    await Promise.allSettled(closing);
    for (const c of this.#bullConnections) c.disconnect();
  }
}

function withTimeout(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
