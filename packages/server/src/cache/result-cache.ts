import type { Logger } from "pino";
import type { CacheOutcome, Metrics } from "../observability/metrics.ts";
import type { CacheEntry } from "./cache-entry.ts";
import { MemoryStore } from "./memory-store.ts";
import type { FillSource, RedisStore } from "./redis-store.ts";

export interface CachedAnswer {
  entry: CacheEntry;
  cache: CacheOutcome;
}

type Filled = { entry: CacheEntry; source: FillSource | "bypass" };

/**
 * One query shared by identical concurrent requests. It runs while anyone still waits for it:
 * when the last waiter leaves (its client went away), the query's signal aborts it in the engine.
 */
interface Flight {
  result: Promise<Filled>;
  controller: AbortController;
  /** requests waiting for it with a signal of their own; undefined once one waits without one */
  waiters: number | undefined;
  /** its admission, while requests may still ask for a slot on its behalf */
  admission?: FlightAdmission;
}

/**
 * produces a missed entry; `signal` aborts when no request waits for it any more; `admittedAs`:
 * whose slot it runs in (`AnswerOptions.admittedAs` of the ask that won), when known
 */
export type Produce = (signal: AbortSignal, admittedAs?: string) => Promise<CacheEntry>;
type Run = (signal: AbortSignal, admittedAs?: string) => Promise<Filled>;

export interface AnswerOptions {
  /** the request's id, on the log lines a failure writes */
  requestId?: string;
  /** the request's own end (client gone): it stops waiting, and its query stops when nobody else waits */
  signal?: AbortSignal;
  /**
   * called before this request starts a query of its own (never for a hit or a request that joins
   * another's query): waits for admission or throws (429); returns the release of its slot.
   * `signal` ends the wait when no request waits for the query any more.
   */
  admit?: (signal: AbortSignal) => Promise<() => void>;
  /**
   * whom `admit` admits (the caller): a request that joins a flight still waiting for admission
   * asks for a slot on its behalf too when it is another caller's, and the first slot granted runs
   * the query — a caller held back (heavy, at its share) that asked first does not hold, or get
   * refused, everyone who asks the same
   */
  admittedAs?: string;
}

type Admit = (signal: AbortSignal) => Promise<() => void>;

/**
 * The admission of one flight: a slot asked by the request that started it, and by each other
 * caller that joined it while it waited. The first slot granted is the flight's; the other asks
 * end, and a slot granted to one of them anyway is given back at once. Refused only when every
 * ask was, with the starter's refusal (as when nobody else asked: another caller's reason, its
 * rate, is not told to the others).
 */
class FlightAdmission {
  readonly #asked = new Set<string | undefined>();
  readonly #won = new AbortController();
  #signal: AbortSignal | undefined;
  #pending = 0;
  #settled = false;
  #refusal: unknown;
  #grant: (slot: { release: () => void; as: string | undefined }) => void = () => undefined;
  #refuse: (e: unknown) => void = () => undefined;

  /** the flight's slot: asked with `admit` (the starter's), and by later `offer`s */
  slot(
    signal: AbortSignal,
    admit: Admit,
    as: string | undefined,
  ): Promise<{ release: () => void; as: string | undefined }> {
    this.#signal = AbortSignal.any([signal, this.#won.signal]);
    const slot = new Promise<{ release: () => void; as: string | undefined }>((resolve, reject) => {
      this.#grant = resolve;
      this.#refuse = reject;
    });
    this.#ask(admit, as, true);
    return slot;
  }

  /** a joiner's ask, when it is another caller's and the flight still waits */
  offer(admit: Admit, as: string): void {
    if (this.#settled || this.#signal === undefined || this.#asked.has(as)) return;
    this.#ask(admit, as, false);
  }

  #ask(admit: Admit, as: string | undefined, starter: boolean): void {
    this.#asked.add(as);
    this.#pending++;
    admit(this.#signal as AbortSignal).then(
      (release) => {
        if (this.#settled) {
          release();
          return;
        }
        this.#settled = true;
        this.#won.abort();
        this.#grant({ release, as });
      },
      (e: unknown) => {
        if (starter || this.#refusal === undefined) this.#refusal = e;
        if (--this.#pending === 0 && !this.#settled) {
          this.#settled = true;
          this.#refuse(this.#refusal);
        }
      },
    );
  }
}

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
    produce: Produce,
    opts: AnswerOptions = {},
  ): Promise<CachedAnswer> {
    const { requestId } = opts;
    const store = this.#store;
    if (store instanceof MemoryStore) {
      const hit = store.get(key);
      if (hit) return { entry: hit, cache: "HIT" };
      const { entry } = await this.#flight(
        endpoint,
        key,
        async (signal, as) => {
          const produced = await produce(signal, as);
          store.set(key, produced, ttlMs);
          return { entry: produced, source: "ran" };
        },
        opts,
      );
      return { entry, cache: "MISS" };
    }

    if (!store.available) return this.#bypass(endpoint, key, produce, opts);
    let hit: CacheEntry | undefined;
    try {
      hit = await store.get(key);
    } catch (e) {
      this.#redisFailed(e, requestId);
      return this.#bypass(endpoint, key, produce, opts);
    }
    if (hit) return { entry: hit, cache: "HIT" };
    const { entry, source } = await this.#flight(
      endpoint,
      key,
      async (signal, as) => {
        let started = false;
        try {
          return await store.fill(
            key,
            ttlMs,
            () => {
              started = true;
              return produce(signal, as);
            },
            this.#peerWaitMs,
            requestId,
            signal,
          );
        } catch (e) {
          if (started || signal.aborted) throw e;
          // Redis failed before our query ran: answer from the backend
          this.#redisFailed(e, requestId);
          return { entry: await produce(signal, as), source: "bypass" };
        }
      },
      opts,
    );
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

  async #bypass(endpoint: string, key: string, produce: Produce, opts: AnswerOptions): Promise<CachedAnswer> {
    const { entry } = await this.#flight(
      endpoint,
      key,
      async (signal, as) => ({ entry: await produce(signal, as), source: "bypass" }),
      opts,
    );
    return { entry, cache: "BYPASS" };
  }

  /**
   * One flight per key in this process: later identical requests join the first one's query.
   * The flight is admitted first (`opts.admit`); a request that joins it costs nothing.
   */
  async #flight(endpoint: string, key: string, run: Run, opts: AnswerOptions): Promise<Filled> {
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      opts.signal?.throwIfAborted();
      const { admit, admittedAs } = opts;
      // the flight exists from the first request on, admission included: identical requests that
      // arrive while it waits for a slot join it instead of each waiting for a slot of their own
      // (another caller's asks on the flight's behalf: FlightAdmission)
      const admission = admit ? new FlightAdmission() : undefined;
      flight = this.#start(
        key,
        admit && admission
          ? async (signal) => {
              const { release, as } = await admission.slot(signal, admit, admittedAs);
              try {
                return await run(signal, as);
              } finally {
                release();
              }
            }
          : run,
      );
      if (admission) flight.admission = admission;
    } else {
      this.#metrics.cacheCoalesced.inc({ endpoint, scope: "process" });
      if (opts.admit && opts.admittedAs !== undefined) flight.admission?.offer(opts.admit, opts.admittedAs);
    }
    return waitFor(flight, opts.signal);
  }

  #start(key: string, run: Run): Flight {
    const controller = new AbortController();
    const result = run(controller.signal).finally(() => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    const flight: Flight = { controller, waiters: 0, result };
    // a flight whose every waiter left still settles; nobody reads its outcome
    result.catch(() => undefined);
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

/**
 * Waits for a flight on behalf of one request. A request with a signal leaves as soon as it
 * aborts (its promise rejects with the signal's reason); the last such request to leave aborts
 * the flight's query. A waiter without a signal (warming, tests) keeps the flight running.
 */
function waitFor(flight: Flight, signal: AbortSignal | undefined): Promise<Filled> {
  if (signal === undefined) {
    flight.waiters = undefined;
    return flight.result;
  }
  if (flight.waiters !== undefined) flight.waiters++;
  return new Promise<Filled>((resolve, reject) => {
    const leave = () => {
      if (flight.waiters !== undefined && --flight.waiters === 0) flight.controller.abort(signal.reason);
      reject(signal.reason);
    };
    if (signal.aborted) {
      leave();
      return;
    }
    signal.addEventListener("abort", leave, { once: true });
    flight.result.then(
      (filled) => {
        signal.removeEventListener("abort", leave);
        resolve(filled);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", leave);
        reject(e);
      },
    );
  });
}
