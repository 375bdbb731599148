import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";

export type RedisState = "up" | "down";

/**
 * A Redis connection for the cache and warm-key tracking that never makes a request wait for a
 * dead Redis: commands fail at once while disconnected (no offline queue) and after
 * `commandTimeoutMs` when Redis hangs; ioredis reconnects in the background (every ≤ 2 s) and
 * `state` follows. Transitions are logged once each, not every failed retry.
 */
export class RedisConnection {
  readonly client: Redis;
  #state: RedisState = "down";
  readonly #listeners = new Set<(state: RedisState) => void>();

  constructor(url: string, logger: Logger, opts: { commandTimeoutMs?: number; name?: string } = {}) {
    const options: RedisOptions = {
      enableOfflineQueue: false,
      commandTimeout: opts.commandTimeoutMs ?? 1000,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
      connectionName: opts.name ?? "qes",
    };
    this.client = new Redis(url, options);
    let lastError = "";
    this.client.on("ready", () => {
      lastError = "";
      this.#set("up");
      logger.info("redis connected");
    });
    this.client.on("error", (e: Error) => {
      // reconnect attempts repeat the same error: log each new one once
      const message = e.message;
      if (message !== lastError) {
        lastError = message;
        logger.warn({ err: { message } }, "redis error; answering from the backend until it returns");
      }
    });
    this.client.on("close", () => {
      if (this.#state === "up") logger.warn("redis connection lost; caching paused");
      this.#set("down");
    });
  }

  get state(): RedisState {
    return this.#state;
  }

  get up(): boolean {
    return this.#state === "up" && this.client.status === "ready";
  }

  /** called on every change of state */
  onState(listener: (state: RedisState) => void): void {
    this.#listeners.add(listener);
  }

  /** resolves when connected or after `ms`, whichever is first */
  waitUntilUp(ms: number): Promise<boolean> {
    if (this.up) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        resolve(false);
      }, ms);
      const listener = (state: RedisState) => {
        if (state !== "up") return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(true);
      };
      this.#listeners.add(listener);
    });
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    try {
      if (this.client.status === "ready") await this.client.quit();
      else this.client.disconnect();
    } catch {
      this.client.disconnect();
    }
  }

  #set(state: RedisState): void {
    if (state === this.#state) return;
    this.#state = state;
    for (const listener of [...this.#listeners]) listener(state);
  }
}
