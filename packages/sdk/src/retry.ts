/** Backoff and waiting that honour an `AbortSignal`. */

export interface BackoffOptions {
  /** first delay before jitter, ms */
  baseMs: number;
  /** no delay is longer, ms */
  maxMs: number;
  /** a number in [0, 1); `Math.random` unless a test pins it */
  random?: () => number;
}

/**
 * The delay before retry `attempt` (1 for the first retry): exponential, `baseMs · 2^(attempt-1)`
 * capped at `maxMs`, with "equal jitter" — half of it fixed, the other half random — so clients that
 * failed together do not come back together, yet never retry at once.
 * A `Retry-After` the server sent (seconds) is honoured as a lower bound, still capped at `maxMs`.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions, retryAfterMs?: number): number {
  const exp = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = exp / 2 + (opts.random ?? Math.random)() * (exp / 2);
  const floor = retryAfterMs !== undefined && retryAfterMs > 0 ? Math.min(retryAfterMs, opts.maxMs) : 0;
  return Math.max(jittered, floor);
}

/** `Retry-After` as ms: delta-seconds or an HTTP date; `undefined` when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The reason an aborted signal carries (an `AbortError` DOMException unless the caller gave one). */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException("This operation was aborted", "AbortError");
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
