import { QesError } from "@qes/core";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

/**
 * `QES_RATE_LIMIT_PER_MINUTE` per caller (rate-limiter-flexible): counted in Redis when it is
 * configured, so every instance shares one budget per caller, else in process. While Redis does
 * not answer, each instance counts in process (the library's insurance limiter): the limit holds
 * per instance instead of failing requests.
 */
export class CallerRateLimit {
  readonly #limiter: RateLimiterMemory | RateLimiterRedis;

  constructor(opts: { perMinute: number; redis?: { client: Redis; prefix: string } }) {
    const base = { points: opts.perMinute, duration: 60 };
    const memory = new RateLimiterMemory({ ...base, keyPrefix: "qes-rate" });
    this.#limiter = opts.redis
      ? new RateLimiterRedis({
          ...base,
          storeClient: opts.redis.client,
          keyPrefix: `${opts.redis.prefix}rate`,
          rejectIfRedisNotReady: true,
          insuranceLimiter: memory,
        })
      : memory;
  }

  /** counts one request of `caller`; 429 `too_many_requests` with `Retry-After` beyond the limit */
  async consume(caller: string): Promise<void> {
    try {
      await this.#limiter.consume(caller);
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        throw new QesError(
          "too_many_requests",
          "This caller has sent more queries this minute than QES_RATE_LIMIT_PER_MINUTE allows.",
          { retryAfterSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)) },
        );
      }
      // neither Redis nor the insurance limiter could count: let the request through
    }
  }
}
