import { QesError } from "@qes/core";

export interface QuerySlotsOptions {
  /** queries running at once in this instance (`QES_MAX_CONCURRENT_QUERIES`) */
  maxConcurrent: number;
  /** queries one caller may run at once (`QES_MAX_CONCURRENT_PER_CALLER`) */
  perCaller: number;
  /** requests one caller may have waiting for a slot; more are refused at once */
  queuePerCaller: number;
  /** longest wait for a slot before the request is refused */
  maxWaitMs: number;
  /**
   * recent engine time (slot-milliseconds, decayed) from which a caller counts as heavy: while
   * others use the engine too, it starts no query until its time decays below this; from half
   * of it, it runs one query at a time, on one core (`runsModestly`)
   */
  heavyUsageMs?: number;
  /**
   * callers the heavy mark never holds back (warming: its pace is its interval and its bounded
   * concurrency; held while others are active, the refreshes of everyone's keys would stop under
   * load). Past half the mark they still run one query at a time, modestly.
   */
  ungated?: readonly string[];
  /** the clock engine time is measured with (tests) */
  nowMs?: () => number;
}

interface Waiter {
  caller: string;
  /** the engine expects this query to be heavy (`acquire`'s `heavyQuery`) */
  heavyQuery: boolean;
  grant: () => void;
}

/** how long a refused caller is told to wait (`Retry-After`) when a slot is the problem */
const BUSY_RETRY_AFTER_SECONDS = 1;
/** engine time a caller used counts half after this long: recent use weighs most */
const USAGE_HALF_LIFE_MS = 30_000;
/** callers whose recent engine time is remembered before the negligible ones are forgotten */
const USAGE_CALLERS = 10_000;
/**
 * heavy: about 15 s of engine time within the last half-minute or so (one slot held continuously
 * decays to ~43 s): an attacker's cross joins at the query timeout, not a dashboard's queries
 */
const HEAVY_USAGE_MS = 15_000;
/** the part of `heavyUsageMs` from which a caller runs modestly among others */
const MODEST_PART = 0.5;
/**
 * another caller that started a query this recently still counts as using the engine: callers
 * whose queries take milliseconds are idle most instants between them, and a heavy caller asking
 * at such an instant would otherwise count as alone
 */
const RECENT_OTHERS_MS = 2_000;
/**
 * distinct callers whose last start is remembered: the one asking, a heavy other (warming) and a
 * light other; with two, a heavy caller that started after the light one pushed it out
 */
const LAST_STARTS = 3;

/**
 * Engine slots (DESIGN.md §11): at most `maxConcurrent` queries run in this instance and at most
 * `perCaller` of them for one caller, and one caller never gets every slot (its share is at most
 * `maxConcurrent - 1`), so while one caller floods another's query is admitted at once. A caller
 * at its share waits in a short queue of its own (`queuePerCaller`, `maxWaitMs`); beyond it,
 * 429 `too_many_requests`. A freed slot goes to the waiting caller that used the least engine
 * time lately (slot-milliseconds, halving every 30 s), not to whoever sent most: a caller whose
 * queries hold a slot for seconds waits behind callers whose queries take milliseconds, so it
 * cannot take half the engine by sending expensive queries (fair queuing by time, not by turns).
 *
 * Slots alone do not bound what a caller takes: on a busy two-core machine PostgreSQL ran an
 * attacker's two cross joins with two parallel workers each, six processes against everyone's
 * short queries, while slots were free. So whenever another caller uses or waits for the engine,
 * a caller with half of `heavyUsageMs` of recent engine time gets one slot, not its share, and its
 * query runs on one core (`runsModestly`, the backend's `ExecuteOptions.modest`); a heavy caller
 * (all of it) starts no query until its engine time has decayed below it. One core was still too
 * much: in the soak the attacker's one modest cross join after another kept a core of two busy
 * and the others' p99 went from 0.1 s to 4 s; waiting for its time to decay holds a caller to
 * about a third of one slot (15 s of slot time decays by ~0.35 s a second). Alone, a heavy
 * caller keeps the whole engine.
 */
export class QuerySlots {
  readonly #opts: QuerySlotsOptions;
  readonly #share: number;
  #running = 0;
  readonly #byCaller = new Map<string, number>();
  /** callers with waiting requests, in the order they queued (ties of usage go to the earliest) */
  readonly #queues = new Map<string, Waiter[]>();
  /** each caller's recent engine time: slot-milliseconds, decayed to `atMs` */
  readonly #usage = new Map<string, { ms: number; atMs: number }>();
  /**
   * when each running query charged to a caller started: a query counts while it runs, not only
   * once it ends — an attacker's first cross joins otherwise ran unchecked to the query timeout
   */
  readonly #inFlight = new Map<string, number[]>();
  readonly #now: () => number;
  /** the LAST_STARTS callers that started a query last (distinct, newest first), and when */
  #lastStarts: { caller: string; atMs: number }[] = [];
  /** a second look at the queues once the last start stops being recent (`#grantWaiting`) */
  #recheck: NodeJS.Timeout | undefined;

  constructor(opts: QuerySlotsOptions) {
    this.#opts = opts;
    this.#share = Math.max(1, Math.min(opts.perCaller, opts.maxConcurrent - 1));
    this.#now = opts.nowMs ?? (() => performance.now());
  }

  /** a caller's recent engine time in slot-milliseconds (metrics, tests) */
  usageMs(caller: string): number {
    return this.#decayed(caller, this.#now());
  }

  /**
   * whether the heavy mark holds `caller` back now: it starts no query of its own while another
   * caller runs one, or one that is not heavy itself waits or started one lately. `heavyQuery`:
   * the query asked about is one the engine expects to be heavy, which is held back the same way
   * whatever its caller's recent engine time (a new caller's first cross join included).
   */
  heldBack(caller: string, heavyQuery = false): boolean {
    if (this.#opts.ungated?.includes(caller)) return false;
    const now = this.#now();
    return (
      (heavyQuery || this.#heavy(caller, now)) &&
      this.#othersActive(caller, now, (other) => !this.#heavy(other, now), true)
    );
  }

  /** queries running now (metrics, tests) */
  get running(): number {
    return this.#running;
  }

  /**
   * A slot for one query of `caller`: at once when one is free, after a short wait in the caller's
   * queue, or 429. The returned function frees it (once). `signal` ends the wait (client gone).
   * `onBehalfOf`: another caller the query is done for (warming a key it asked for), whose
   * engine time it counts as well. `heavyQuery`: the engine expects the query to be heavy
   * (`Backend.estimateHeavy`); it waits while others use the engine (`heldBack`).
   */
  async acquire(
    caller: string,
    signal?: AbortSignal,
    onBehalfOf?: string,
    heavyQuery = false,
  ): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#free(caller, heavyQuery)) return this.#take(caller, onBehalfOf);
    const queue = this.#queues.get(caller) ?? [];
    if (queue.length >= this.#opts.queuePerCaller) throw this.#busy(caller, heavyQuery);
    await new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        caller,
        heavyQuery,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const leave = (e: unknown) => {
        const q = this.#queues.get(caller);
        const at = q?.indexOf(waiter) ?? -1;
        if (q && at !== -1) {
          q.splice(at, 1);
          if (q.length === 0) this.#queues.delete(caller);
        }
        signal?.removeEventListener("abort", onAbort);
        reject(e);
        // a heavy caller may have waited for this one to be gone
        this.#grantWaiting();
      };
      const onAbort = () => {
        clearTimeout(timer);
        leave(signal?.reason);
      };
      timer = setTimeout(() => leave(this.#busy(caller, heavyQuery)), this.#opts.maxWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
      this.#queues.set(caller, queue);
      this.#grantWaiting();
    });
    // granted: the slot was taken on this waiter's behalf by #release
    return this.#releaser(caller, onBehalfOf);
  }

  /**
   * whether `caller`'s query, admitted now, should run modestly: the caller is heavy and another
   * caller is running or waiting (alone, a heavy caller may use the whole engine)
   */
  runsModestly(caller: string): boolean {
    const now = this.#now();
    return this.#heavy(caller, now, MODEST_PART) && this.#othersActive(caller, now);
  }

  #heavy(caller: string, nowMs: number, part = 1): boolean {
    return this.#decayed(caller, nowMs) >= part * (this.#opts.heavyUsageMs ?? HEAVY_USAGE_MS);
  }

  /**
   * whether a caller other than `caller` runs a query, or waits for one or started one within
   * RECENT_OTHERS_MS (of those, only the ones `counts`: a heavy caller is not held back by another
   * heavy caller's wait, while one running holds it, so that the two take turns). `lightWaits`:
   * a wait counts only for a query not expected heavy — two callers' heavy queries waiting each
   * held the other back until both were refused, with the engine idle.
   */
  #othersActive(
    caller: string,
    nowMs: number,
    counts: (other: string) => boolean = () => true,
    lightWaits = false,
  ): boolean {
    if (this.#running > (this.#byCaller.get(caller) ?? 0)) return true;
    for (const [waiting, queue] of this.#queues)
      if (waiting !== caller && counts(waiting) && (!lightWaits || queue.some((w) => !w.heavyQuery)))
        return true;
    return this.#lastStarts.some(
      (s) => s.caller !== caller && nowMs - s.atMs <= RECENT_OTHERS_MS && counts(s.caller),
    );
  }

  #started(caller: string): void {
    const atMs = this.#now();
    this.#lastStarts = [
      { caller, atMs },
      ...this.#lastStarts.filter((s) => s.caller !== caller).slice(0, LAST_STARTS - 1),
    ];
  }

  /** queries `caller` may run at once now: none while held back, one while modest among others */
  #shareOf(caller: string, heavyQuery: boolean): number {
    if (this.heldBack(caller, heavyQuery)) return 0;
    return this.runsModestly(caller) ? 1 : this.#share;
  }

  #free(caller: string, heavyQuery: boolean): boolean {
    return (
      this.#running < this.#opts.maxConcurrent &&
      (this.#byCaller.get(caller) ?? 0) < this.#shareOf(caller, heavyQuery)
    );
  }

  /** the refusal of `caller`'s query: which limit it met, so that the caller knows what to change */
  #busy(caller: string, heavyQuery: boolean): QesError {
    if (heavyQuery && this.heldBack(caller, true) && !this.heldBack(caller)) {
      return tooMany(
        "The engine expects this query to be heavy, and it runs only while no other caller uses the engine; " +
          "try again when the service is quieter, or make the query cheaper.",
      );
    }
    return tooMany(
      (this.#byCaller.get(caller) ?? 0) >= this.#shareOf(caller, heavyQuery)
        ? "Too many queries of this caller are running or waiting; try again shortly."
        : "The service is running as many queries as it can; try again shortly.",
    );
  }

  #take(caller: string, onBehalfOf: string | undefined): () => void {
    this.#started(caller);
    this.#running++;
    this.#byCaller.set(caller, (this.#byCaller.get(caller) ?? 0) + 1);
    return this.#releaser(caller, onBehalfOf);
  }

  #releaser(caller: string, onBehalfOf?: string): () => void {
    let released = false;
    const startedMs = this.#now();
    const charged = onBehalfOf !== undefined && onBehalfOf !== caller ? [caller, onBehalfOf] : [caller];
    for (const c of charged) {
      const starts = this.#inFlight.get(c);
      if (starts) starts.push(startedMs);
      else this.#inFlight.set(c, [startedMs]);
    }
    return () => {
      if (released) return;
      released = true;
      const ms = this.#now() - startedMs;
      for (const c of charged) {
        const starts = this.#inFlight.get(c) ?? [];
        starts.splice(starts.indexOf(startedMs), 1);
        if (starts.length === 0) this.#inFlight.delete(c);
        this.#used(c, ms);
      }
      this.#running--;
      const n = (this.#byCaller.get(caller) ?? 1) - 1;
      if (n === 0) this.#byCaller.delete(caller);
      else this.#byCaller.set(caller, n);
      this.#grantWaiting();
    };
  }

  /** recent engine time: what ended, decayed, and what runs now */
  #decayed(caller: string, nowMs: number): number {
    let running = 0;
    for (const at of this.#inFlight.get(caller) ?? []) running += nowMs - at;
    return this.#recorded(caller, nowMs) + running;
  }

  #recorded(caller: string, nowMs: number): number {
    const u = this.#usage.get(caller);
    return u ? u.ms * 0.5 ** ((nowMs - u.atMs) / USAGE_HALF_LIFE_MS) : 0;
  }

  #used(caller: string, ms: number): void {
    const now = this.#now();
    // read before the delete (which moves the caller to the newest end of the map)
    const before = this.#recorded(caller, now);
    this.#usage.delete(caller);
    if (this.#usage.size >= USAGE_CALLERS) {
      for (const [c] of this.#usage) if (this.#decayed(c, now) < 1) this.#usage.delete(c);
    }
    this.#usage.set(caller, { ms: before + ms, atMs: now });
  }

  /** hands free slots, one at a time, to the waiting caller under its share that used least */
  #grantWaiting(): void {
    this.#grantFree();
    // a caller still waiting with slots free may wait for others' recent use to age, and no
    // release may come to look again (the others' queries are done): a timer does
    if (this.#recheck || this.#queues.size === 0 || this.#running >= this.#opts.maxConcurrent) return;
    const now = this.#now();
    const expiries = this.#lastStarts.map((s) => s.atMs + RECENT_OTHERS_MS + 1 - now).filter((ms) => ms > 0);
    if (expiries.length === 0) return;
    this.#recheck = setTimeout(
      () => {
        this.#recheck = undefined;
        this.#grantWaiting();
      },
      Math.min(...expiries),
    );
    this.#recheck.unref();
  }

  #grantFree(): void {
    while (this.#running < this.#opts.maxConcurrent) {
      const now = this.#now();
      let next: string | undefined;
      let at = 0;
      let least = Number.POSITIVE_INFINITY;
      for (const [caller, queue] of this.#queues) {
        // its first waiter that may start: a query expected heavy and held back does not hold up
        // the caller's light ones queued behind it (they waited until it was refused)
        const first = queue.findIndex((w) => this.#free(caller, w.heavyQuery));
        if (first === -1) continue;
        const used = this.#decayed(caller, now);
        if (used < least) {
          least = used;
          next = caller;
          at = first;
        }
      }
      if (next === undefined) return;
      const queue = this.#queues.get(next) as Waiter[];
      const [waiter] = queue.splice(at, 1) as [Waiter];
      this.#queues.delete(next);
      // served: behind the others among equals
      if (queue.length > 0) this.#queues.set(next, queue);
      this.#started(next);
      this.#running++;
      this.#byCaller.set(next, (this.#byCaller.get(next) ?? 0) + 1);
      waiter.grant();
    }
  }
}

function tooMany(message: string): QesError {
  return new QesError("too_many_requests", message, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS });
}
