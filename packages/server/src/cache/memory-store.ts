import type { CacheEntry } from "./cache-entry.ts";

/** a read moves an entry to the young end at most this often (a key read 50k times a second need not move each time) */
const BUMP_MS = 1000;

/**
 * The in-process cache (no `QES_REDIS_URL`): least recently used entries beyond `maxEntries`
 * are dropped (recency counted to the second); an entry past its lifetime is a miss.
 */
export class MemoryStore {
  readonly #entries = new Map<string, { entry: CacheEntry; expiresAtMs: number; usedAtMs: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(key: string, nowMs = Date.now()): CacheEntry | undefined {
    const found = this.#entries.get(key);
    if (found === undefined) return undefined;
    if (found.expiresAtMs <= nowMs) {
      this.#entries.delete(key);
      return undefined;
    }
    if (nowMs - found.usedAtMs >= BUMP_MS) {
      // most recently used last
      found.usedAtMs = nowMs;
      this.#entries.delete(key);
      this.#entries.set(key, found);
    }
    return found.entry;
  }

  set(key: string, entry: CacheEntry, ttlMs: number): void {
    if (this.#maxEntries === 0) return;
    this.#entries.delete(key);
    // never read yet: the first read moves it
    this.#entries.set(key, {
      entry,
      expiresAtMs: entry.storedAtMs + ttlMs,
      usedAtMs: Number.NEGATIVE_INFINITY,
    });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
