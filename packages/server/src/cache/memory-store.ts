import type { CacheEntry } from "./cache-entry.ts";

/**
 * The in-process cache (no `QES_REDIS_URL`): least recently used entries beyond `maxEntries`
 * are dropped; an entry past its lifetime is a miss.
 */
export class MemoryStore {
  readonly #entries = new Map<string, { entry: CacheEntry; expiresAtMs: number }>();
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
    // most recently used last
    this.#entries.delete(key);
    this.#entries.set(key, found);
    return found.entry;
  }

  set(key: string, entry: CacheEntry, ttlMs: number): void {
    if (this.#maxEntries === 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { entry, expiresAtMs: entry.storedAtMs + ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
