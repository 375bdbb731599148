import type { Metrics } from "../observability/metrics.ts";
import type { CallerRateLimit } from "./caller-rate-limit.ts";
import type { QuerySlots } from "./query-slots.ts";

/** the caller warming runs as: its refreshes take engine slots like anyone's, with a share of their own */
export const WARM_CALLER = "warm";

/**
 * Admission control (DESIGN.md §11) of requests that need the engine: a cache hit, or a request
 * that joins an identical request's query, never comes here. A request counts against its
 * caller's rate (`QES_RATE_LIMIT_PER_MINUTE`), then waits for an engine slot (`QuerySlots`).
 */
export class Admission {
  readonly #slots: QuerySlots;
  readonly #rate: CallerRateLimit | undefined;
  readonly #metrics: Metrics;

  constructor(opts: { slots: QuerySlots; rate?: CallerRateLimit; metrics: Metrics }) {
    this.#slots = opts.slots;
    this.#rate = opts.rate;
    this.#metrics = opts.metrics;
  }

  /**
   * admits one query of `caller` or throws 429; resolves to the release of its slot.
   * `estimateHeavy`, when given, is asked once a slot is held (so that estimates are bounded by
   * the slots like queries) and only while others use the engine: a query the engine expects to
   * be heavy then gives its slot back and waits as a heavy caller's query would
   * (`QuerySlots.heldBack`).
   */
  async admit(
    caller: string,
    signal?: AbortSignal,
    estimateHeavy?: () => Promise<boolean>,
  ): Promise<() => void> {
    try {
      await this.#rate?.consume(caller);
    } catch (e) {
      this.#metrics.admissionRefusals.inc({ reason: "rate" });
      throw e;
    }
    const release = await this.#slot(caller, signal, false);
    // alone, a heavy query runs anyway: no plan to ask for
    if (estimateHeavy === undefined || !this.#slots.heldBack(caller, true)) return release;
    let heavy: boolean;
    try {
      heavy = await estimateHeavy();
    } catch (e) {
      release();
      throw e;
    }
    if (!heavy) return release;
    this.#metrics.heavyEstimates.inc();
    if (!this.#slots.heldBack(caller, true)) return release;
    release();
    return this.#slot(caller, signal, true);
  }

  async #slot(caller: string, signal: AbortSignal | undefined, heavyQuery: boolean): Promise<() => void> {
    try {
      return await this.#slots.acquire(caller, signal, undefined, heavyQuery);
    } catch (e) {
      if ((e as { code?: unknown }).code === "too_many_requests")
        this.#metrics.admissionRefusals.inc({ reason: heavyQuery ? "heavy" : "busy" });
      throw e;
    }
  }

  /**
   * a slot for a warming refresh (no rate: warming's pace is its interval); `forCaller`, who asked
   * for the key, is charged its engine time too
   */
  warmSlot(signal?: AbortSignal, forCaller?: string): Promise<() => void> {
    return this.#slots.acquire(WARM_CALLER, signal, forCaller);
  }

  /**
   * whether the heavy mark holds `caller` back now, or would hold back a query of its that the
   * engine expects to be heavy (`heavyQuery`; `QuerySlots.heldBack`)
   */
  heldBack(caller: string, heavyQuery = false): boolean {
    return this.#slots.heldBack(caller, heavyQuery);
  }

  /** whether `caller`'s query admitted now runs on one core (`QuerySlots.runsModestly`) */
  runsModestly(caller: string): boolean {
    return this.#slots.runsModestly(caller);
  }

  get running(): number {
    return this.#slots.running;
  }
}
