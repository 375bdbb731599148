import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RedisConnection } from "../redis/redis-connection.ts";
import { type CacheEntry, decodeEntry, encodeEntry } from "./cache-entry.ts";

/** how long a lock lives without a heartbeat: a holder that dies frees the key this soon */
const LOCK_TTL_MS = 5000;
const HEARTBEAT_MS = 1500;
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 50;

// only the holder (same token) may extend or release its lock
const EXTEND_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

type LockedRedis = Redis & {
  qesExtendLock(key: string, token: string, ttlMs: number): Promise<number>;
  qesReleaseLock(key: string, token: string): Promise<number>;
};

/** where a filled entry came from */
export type FillSource = "ran" | "peer";

/**
 * The shared cache in Redis: one binary value per key (entry header + response bytes) with the
 * endpoint's lifetime as PX. `fill` is the cross-instance single flight: the instance that takes
 * `<key>:lock` (SET NX PX, kept alive by a heartbeat) runs the query; the others poll for the value
 * (5 → 50 ms) and run the query themselves only when the lock disappears without a value (its
 * holder died or failed) or the wait outlasts the query timeout.
 */
export class RedisStore {
  readonly #redis: LockedRedis;
  readonly #connection: RedisConnection;
  readonly #logger: Logger;
  readonly #reads = new Map<string, Promise<CacheEntry | undefined>>();

  constructor(connection: RedisConnection, logger: Logger) {
    this.#connection = connection;
    this.#logger = logger;
    const redis = connection.client;
    redis.defineCommand("qesExtendLock", { numberOfKeys: 1, lua: EXTEND_LOCK });
    redis.defineCommand("qesReleaseLock", { numberOfKeys: 1, lua: RELEASE_LOCK });
    this.#redis = redis as LockedRedis;
  }

  /** false while Redis is down: the caller bypasses the cache without trying */
  get available(): boolean {
    return this.#connection.up;
  }

  /**
   * The entry of a key. Identical concurrent reads share one GET: a popular key read by many
   * requests at once costs one round trip and one parse, not one per request.
   */
  get(key: string): Promise<CacheEntry | undefined> {
    const running = this.#reads.get(key);
    if (running) return running;
    const read = this.#redis
      .getBuffer(key)
      .then((value) => (value === null ? undefined : decodeEntry(value)));
    this.#reads.set(key, read);
    const done = () => {
      if (this.#reads.get(key) === read) this.#reads.delete(key);
    };
    read.then(done, done);
    return read;
  }

  async set(key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    await this.#redis.set(key, encodeEntry(entry), "PX", Math.max(1, Math.round(ttlMs)));
  }

  /**
   * Gets the entry of a missed key once across all instances: runs `produce` here (and stores
   * its entry) or takes the entry another instance stored. `maxWaitMs` bounds the wait for a peer.
   */
  async fill(
    key: string,
    ttlMs: number,
    produce: () => Promise<CacheEntry>,
    maxWaitMs: number,
    requestId?: string,
    /** nobody waits any more: stop polling for a peer's value */
    signal?: AbortSignal,
  ): Promise<{ entry: CacheEntry; source: FillSource }> {
    const lockKey = `${key}:lock`;
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      signal?.throwIfAborted();
      const token = randomUUID();
      const acquired = await this.#redis.set(lockKey, token, "PX", LOCK_TTL_MS, "NX");
      if (acquired === "OK") return this.#fillHoldingLock(key, lockKey, token, ttlMs, produce, requestId);

      // another instance is running the query: wait for its value, or for its lock to go
      let pause = POLL_FIRST_MS;
      let lockGone = false;
      while (!lockGone && Date.now() < deadline) {
        await sleep(pause);
        signal?.throwIfAborted();
        pause = Math.min(POLL_MAX_MS, Math.ceil(pause * 1.5));
        const replies = await this.#redis.multi().getBuffer(key).exists(lockKey).exec();
        const value = replies?.[0]?.[1] as Buffer | null | undefined;
        const entry = value ? decodeEntry(value) : undefined;
        if (entry) return { entry, source: "peer" };
        lockGone = replies?.[1]?.[1] === 0;
      }
      if (!lockGone) {
        // waited as long as a query may take: run it here rather than fail the request
        const entry = await produce();
        await this.#trySet(key, entry, ttlMs, requestId);
        return { entry, source: "ran" };
      }
      // the holder finished without a value (failed) or died: try to take the lock ourselves
    }
  }

  async #fillHoldingLock(
    key: string,
    lockKey: string,
    token: string,
    ttlMs: number,
    produce: () => Promise<CacheEntry>,
    requestId: string | undefined,
  ): Promise<{ entry: CacheEntry; source: FillSource }> {
    const heartbeat = setInterval(() => {
      this.#redis.qesExtendLock(lockKey, token, LOCK_TTL_MS).catch(() => undefined);
    }, HEARTBEAT_MS);
    heartbeat.unref();
    try {
      // a peer may have stored the value between our miss and our lock
      const existing = await this.get(key);
      if (existing) return { entry: existing, source: "peer" };
      const entry = await produce();
      await this.#trySet(key, entry, ttlMs, requestId);
      return { entry, source: "ran" };
    } finally {
      clearInterval(heartbeat);
      this.#redis.qesReleaseLock(lockKey, token).catch(() => undefined);
    }
  }

  async #trySet(key: string, entry: CacheEntry, ttlMs: number, requestId?: string): Promise<void> {
    try {
      await this.set(key, entry, ttlMs);
    } catch (e) {
      this.#logger.warn(
        { requestId, err: { message: (e as Error).message } },
        "could not store a result in redis",
      );
    }
  }
}
