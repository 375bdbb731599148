import type { EndpointDefinition } from "@qes/core";
import type { RedisConnection } from "../redis/redis-connection.ts";

/**
 * The keys worth warming: per endpoint version, the specs (cache-key.ts) requested within the
 * cache lifetime, by time of last request, at most `maxKeys` (the least recently requested go
 * first). Tracking is fire-and-forget: it never delays or fails a request.
 */
export interface WarmKeys {
  /** notes a request of `spec` now */
  track(endpoint: EndpointDefinition, spec: string): void;
  /** drops specs not requested within the endpoint's cache lifetime and returns the rest */
  due(endpoint: EndpointDefinition, nowMs?: number): Promise<string[]>;
  /** removes a spec whose refresh failed: warmed again only after a request of it succeeds */
  forget(endpoint: EndpointDefinition, spec: string): Promise<void>;
}

/**
 * Whether a cache hit of an entry stored at `entryStoredAtMs` may note its key again. A warmed
 * key's entry is replaced every interval, so it is never much older than one; an entry two
 * intervals old means its refreshes failed (the warmer then forgot the key and kept the last good
 * value), and a hit of it must not bring the failing refresh back — only a request that runs the
 * query does.
 */
export function hitKeepsWarming(
  entryStoredAtMs: number,
  intervalMs: number | undefined,
  nowMs: number,
): boolean {
  return intervalMs !== undefined && nowMs - entryStoredAtMs < 2 * intervalMs;
}

/** a request re-noted within this long is not sent to Redis again (hits stay cheap) */
const RETRACK_MS = 1000;

/** in Redis: one sorted set per endpoint version, scored by last request time (ms) */
export class RedisWarmKeys implements WarmKeys {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #maxKeys: number;
  readonly #recent = new Map<string, number>();

  constructor(redis: RedisConnection, prefix: string, maxKeys: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#maxKeys = maxKeys;
  }

  setKey(endpoint: EndpointDefinition): string {
    return `${this.#prefix}warm:${endpoint.id}:${endpoint.version}`;
  }

  track(endpoint: EndpointDefinition, spec: string): void {
    if (this.#maxKeys === 0 || !this.#redis.up) return;
    const now = Date.now();
    const seenKey = `${endpoint.id}\0${spec}`;
    const seen = this.#recent.get(seenKey);
    if (seen !== undefined && now - seen < RETRACK_MS) return;
    if (this.#recent.size >= 10_000) this.#recent.clear();
    this.#recent.set(seenKey, now);
    const key = this.setKey(endpoint);
    this.#redis.client
      .multi()
      .zadd(key, now, spec)
      // keep the newest maxKeys
      .zremrangebyrank(key, 0, -(this.#maxKeys + 1))
      // a set nobody touches for two lifetimes goes away by itself
      .pexpire(key, endpoint.cacheTtlSeconds * 2000)
      .exec()
      .catch(() => this.#recent.delete(seenKey));
  }

  async forget(endpoint: EndpointDefinition, spec: string): Promise<void> {
    this.#recent.delete(`${endpoint.id}\0${spec}`);
    await this.#redis.client.zrem(this.setKey(endpoint), spec);
  }

  async due(endpoint: EndpointDefinition, nowMs = Date.now()): Promise<string[]> {
    const key = this.setKey(endpoint);
    const cutoff = nowMs - endpoint.cacheTtlSeconds * 1000;
    const replies = await this.#redis.client
      .multi()
      .zremrangebyscore(key, "-inf", `(${cutoff}`)
      .zrange(key, 0, -1)
      .exec();
    const failed = replies?.find(([e]) => e !== null)?.[0];
    if (failed) throw failed;
    return (replies?.[1]?.[1] as string[] | undefined) ?? [];
  }
}

/** in process (no Redis): a map per endpoint version in least-recently-requested order */
export class MemoryWarmKeys implements WarmKeys {
  readonly #byEndpoint = new Map<string, Map<string, number>>();
  readonly #maxKeys: number;

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  track(endpoint: EndpointDefinition, spec: string): void {
    if (this.#maxKeys === 0) return;
    const id = `${endpoint.id}:${endpoint.version}`;
    let specs = this.#byEndpoint.get(id);
    if (!specs) {
      specs = new Map();
      this.#byEndpoint.set(id, specs);
    }
    specs.delete(spec);
    specs.set(spec, Date.now());
    while (specs.size > this.#maxKeys) specs.delete(specs.keys().next().value as string);
  }

  async forget(endpoint: EndpointDefinition, spec: string): Promise<void> {
    this.#byEndpoint.get(`${endpoint.id}:${endpoint.version}`)?.delete(spec);
  }

  async due(endpoint: EndpointDefinition, nowMs = Date.now()): Promise<string[]> {
    const specs = this.#byEndpoint.get(`${endpoint.id}:${endpoint.version}`);
    if (!specs) return [];
    const cutoff = nowMs - endpoint.cacheTtlSeconds * 1000;
    for (const [spec, at] of specs) {
      if (at >= cutoff) break;
      specs.delete(spec);
    }
    return [...specs.keys()];
  }
}
