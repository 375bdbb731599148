import { QesError } from "@qes/core";

/** `Retry-After` of a request refused because too many bodies are being read: shippers retry */
const RETRY_AFTER_SECONDS = 1;

/** one request's share of the budget: what it took so far, given back by `release` */
export interface BodyReservation {
  /** counts `bytes` more of this request's decompressed body; throws 429 past the budget */
  take(bytes: number): void;
  release(): void;
}

/**
 * Bounds the decompressed bytes of the ingest bodies being read, parsed and shaped at once (DESIGN.md
 * §10: "no unbounded buffer"). The queue bounds events waiting for their commit, but a body is
 * counted as events only once it is parsed: 32 concurrent 10 MB bodies took the server from
 * 160 MB to 920 MB of RSS, each parsed whole before 31 of them were refused with 429, and the growth
 * had no bound but the number of clients. A request whose bytes would pass the budget is refused
 * with 429 and `Retry-After` as the queue refuses one. One request alone always fits (the budget
 * is at least `QES_INGEST_MAX_BYTES`).
 */
export class IngestBodyBudget {
  readonly #maxBytes: number;
  #inFlight = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** decompressed body bytes held by requests now */
  get inFlightBytes(): number {
    return this.#inFlight;
  }

  reserve(): BodyReservation {
    let held = 0;
    let released = false;
    return {
      take: (bytes) => {
        // the first bytes of a request are always admitted when nothing else is in flight
        if (this.#inFlight + bytes > this.#maxBytes && this.#inFlight > held) throw this.#busy();
        held += bytes;
        this.#inFlight += bytes;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight -= held;
      },
    };
  }

  #busy(): QesError {
    return new QesError(
      "too_many_requests",
      `The server is reading as many ingest bodies as it holds at once (${this.#inFlight} of ${this.#maxBytes} bytes); send again shortly.`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS },
    );
  }
}
