import type { Logger } from "pino";
import type { CacheOutcome, Metrics } from "../observability/metrics.ts";
import type { CacheEntry } from "./cache-entry.ts";
import { MemoryStore } from "./memory-store.ts";
import type { FillSource, RedisStore } from "./redis-store.ts";

export interface CachedAnswer {
  entry: CacheEntry;
  cache: CacheOutcome;
}

type Flight = Promise<{ entry: CacheEntry; source: FillSource | "bypass" }>;

/**
 * Serves an endpoint's responses from Redis or the in-process LRU (DESIGN.md §7):
 * - a hit returns the stored bytes as they are;
 * - identical concurrent misses in this process share one flight (a promise per key), and the
 *   flight takes the Redis lock so identical misses on other instances wait for it too;
 * - while Redis is down every request bypasses the cache (the backend answers, still one flight
 *   per key in this process); a Redis error in the middle of a miss does the same. Query errors
 *   are never cached and reach every request that waited for them.
 */
export class ResultCache {
  readonly #store: MemoryStore | RedisStore;
  readonly #metrics: Metrics;
  readonly #logger: Logger;
  /** how long a miss waits for another instance's query before running its own */
  readonly #peerWaitMs: number;
  readonly #flights = new Map<string, Flight>();

  constructor(opts: {
    store: MemoryStore | RedisStore;
    metrics: Metrics;
    logger: Logger;
    peerWaitMs: number;
  }) {
    this.#store = opts.store;
    this.#metrics = opts.metrics;
    this.#logger = opts.logger;
    this.#peerWaitMs = opts.peerWaitMs;
  }

  get kind(): "memory" | "redis" {
    return this.#store instanceof MemoryStore ? "memory" : "redis";
  }

  async answer(
    endpoint: string,
    key: string,
    ttlMs: number,
    produce: () => Promise<CacheEntry>,
    /** the request's id, on the log lines a failure writes */
    requestId?: string,
  ): Promise<CachedAnswer> {
    const store = this.#store;
    if (store instanceof MemoryStore) {
      const hit = store.get(key);
      if (hit) return { entry: hit, cache: "HIT" };
      const { entry } = await this.#flight(endpoint, key, async () => {
        const produced = await produce();
        store.set(key, produced, ttlMs);
        return { entry: produced, source: "ran" };
      });
      return { entry, cache: "MISS" };
    }

    if (!store.available) return this.#bypass(endpoint, key, produce);
    let hit: CacheEntry | undefined;
    try {
      hit = await store.get(key);
    } catch (e) {
      this.#redisFailed(e, requestId);
      return this.#bypass(endpoint, key, produce);
    }
    if (hit) return { entry: hit, cache: "HIT" };
    const { entry, source } = await this.#flight(endpoint, key, async () => {
      let started = false;
      try {
        return await store.fill(
          key,
          ttlMs,
          () => {
            started = true;
            return produce();
          },
          this.#peerWaitMs,
          requestId,
        );
      } catch (e) {
        if (started) throw e;
        // Redis failed before our query ran: answer from the backend
        this.#redisFailed(e, requestId);
        return { entry: await produce(), source: "bypass" };
      }
    });
    if (source === "peer") this.#metrics.cacheCoalesced.inc({ endpoint, scope: "redis" });
    return { entry, cache: source === "bypass" ? "BYPASS" : source === "peer" ? "HIT" : "MISS" };
  }

  /**
   * The stored entry of a key, without a flight or any of a miss's work: synchronous for the
   * in-process store. From Redis it settles undefined on any failure or while Redis is down: the
   * caller then takes the full path, which bypasses and reports the failure.
   */
  peek(key: string): CacheEntry | undefined | Promise<CacheEntry | undefined> {
    const store = this.#store;
    if (store instanceof MemoryStore) return store.get(key);
    if (!store.available) return undefined;
    return store.get(key).catch(() => undefined);
  }

  /** stores a refreshed entry (warming); throws when the store cannot take it */
  async store(key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    if (this.#store instanceof MemoryStore) this.#store.set(key, entry, ttlMs);
    else await this.#store.set(key, entry, ttlMs);
  }

  async #bypass(endpoint: string, key: string, produce: () => Promise<CacheEntry>): Promise<CachedAnswer> {
    const { entry } = await this.#flight(endpoint, key, async () => ({
      entry: await produce(),
      source: "bypass",
    }));
    return { entry, cache: "BYPASS" };
  }

  /** one flight per key in this process: later identical requests await the first one's */
  #flight(endpoint: string, key: string, run: () => Flight): Flight {
    const running = this.#flights.get(key);
    if (running) {
      this.#metrics.cacheCoalesced.inc({ endpoint, scope: "process" });
      return running;
    }
    const flight = run().finally(() => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    this.#flights.set(key, flight);
    return flight;
  }

  #redisFailed(e: unknown, requestId: string | undefined): void {
    this.#logger.warn(
      { requestId, err: { message: (e as Error).message } },
      "redis failed; answering from the backend",
    );
  }
}
