import { QesError } from "@qes/core";

/** what one request hands the queue: the events of one source */
export interface QueuedBatch<E> {
  source: string;
  events: readonly E[];
  /** rows encoded ahead: their ids count the batch's events, which are then made only on use */
  prepared?: { ids: readonly unknown[] };
}

/** a batch's events, counted without making them */
export function eventCount(batch: QueuedBatch<unknown>): number {
  return batch.prepared?.ids.length ?? batch.events.length;
}

/** what the store reports per batch, in the order the batches were given */
export interface CommittedBatch {
  source: string;
  stored: number;
  duplicates: number;
}

export interface GroupCommitQueueOptions<E, B extends QueuedBatch<E> = QueuedBatch<E>> {
  /** stores every batch in one transaction and resolves once it is durable (`Backend.ingest`) */
  commit(batches: readonly B[]): Promise<readonly CommittedBatch[]>;
  /** most events waiting or being committed; beyond it, 429 */
  maxEvents: number;
  /**
   * most bytes of request bodies waiting or being committed; beyond it, 429 — except for a
   * request alone in the queue. Events alone do not bound memory: a request of one event can be
   * the whole of `QES_INGEST_MAX_BYTES`.
   */
  maxBytes?: number;
  /** `Retry-After` of a 429 */
  retryAfterSeconds: number;
}

interface Waiting<B> {
  batch: B;
  bytes: number;
  resolve(result: CommittedBatch): void;
  reject(error: unknown): void;
}

/**
 * Group commit with backpressure (DESIGN.md §10). Requests arriving while a commit runs wait
 * together and go to the store in one call, so N concurrent requests cost one transaction, not N.
 * The queue is bounded in events: a request that does not fit is refused at once with 429
 * `too_many_requests` and `Retry-After` (shippers retry), never buffered. A request's promise
 * settles only after its events are committed — or with the error that kept them out.
 */
export class GroupCommitQueue<E, B extends QueuedBatch<E> = QueuedBatch<E>> {
  readonly #opts: GroupCommitQueueOptions<E, B>;
  #waiting: Waiting<B>[] = [];
  /** events waiting plus events in the commit under way */
  #held = 0;
  /** their requests' body bytes */
  #heldBytes = 0;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(opts: GroupCommitQueueOptions<E, B>) {
    this.#opts = opts;
  }

  /** bytes of the requests waiting or being committed now */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** events waiting or being committed now */
  get heldEvents(): number {
    return this.#held;
  }

  /** most events one request may hold (`QES_INGEST_QUEUE_EVENTS`): a body is refused past it as soon as it is counted */
  get capacity(): number {
    return this.#opts.maxEvents;
  }

  /** true when not even one more event fits: the route refuses before reading a body */
  get full(): boolean {
    return this.#held >= this.#opts.maxEvents;
  }

  /**
   * Queues one request's batch; resolves with its result once committed. Throws 413 when the
   * batch alone is larger than the queue, 429 when it does not fit now, 503 after `close()`.
   */
  submit(batch: B, bytes = 0): Promise<CommittedBatch> {
    const n = eventCount(batch);
    if (this.#closed) {
      return Promise.reject(new QesError("backend_unavailable", "The server is shutting down; send again."));
    }
    if (n > this.#opts.maxEvents) return Promise.reject(tooManyEvents(this.#opts.maxEvents, n));
    if (this.#held + n > this.#opts.maxEvents) {
      return Promise.reject(this.busy());
    }
    const maxBytes = this.#opts.maxBytes ?? Number.POSITIVE_INFINITY;
    if (this.#heldBytes > 0 && this.#heldBytes + bytes > maxBytes) {
      return Promise.reject(
        new QesError(
          "too_many_requests",
          `The ingest queue is full (${this.#heldBytes} bytes of requests waiting to be committed, of ${maxBytes}); send again shortly.`,
          { retryAfterSeconds: this.#opts.retryAfterSeconds },
        ),
      );
    }
    this.#held += n;
    this.#heldBytes += bytes;
    return new Promise<CommittedBatch>((resolve, reject) => {
      this.#waiting.push({ batch, bytes, resolve, reject });
      this.#running ??= this.#drain();
    });
  }

  /** the 429 a request gets when the queue cannot take it */
  busy(): QesError {
    return new QesError(
      "too_many_requests",
      `The ingest queue is full (${this.#held} of ${this.#opts.maxEvents} events waiting to be committed); send again shortly.`,
      { retryAfterSeconds: this.#opts.retryAfterSeconds },
    );
  }

  /** refuses new batches and resolves once every accepted one is committed (or failed) */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const group = this.#waiting;
        this.#waiting = [];
        await this.#commitGroup(group);
        for (const w of group) {
          this.#held -= eventCount(w.batch);
          this.#heldBytes -= w.bytes;
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  async #commitGroup(group: Waiting<B>[]): Promise<void> {
    try {
      const results = await this.#opts.commit(group.map((w) => w.batch));
      group.forEach((w, i) => {
        const r = results[i];
        if (r) w.resolve(r);
        else w.reject(new QesError("internal", "the store reported no result for a batch"));
      });
    } catch (e) {
      if (group.length === 1) {
        (group[0] as Waiting<B>).reject(e);
        return;
      }
      // one batch's failure must not refuse its neighbours': commit each alone to find whose it was
      for (const w of group) await this.#commitGroup([w]);
    }
  }
}

/**
 * The 413 of a request holding more events than the queue takes (`QES_INGEST_QUEUE_EVENTS`);
 * `n` when it was counted to the end, else it is "more than" the limit.
 */
export function tooManyEvents(maxEvents: number, n?: number): QesError {
  return new QesError(
    "request_too_large",
    `The request holds ${n ?? `more than ${maxEvents}`} events; at most ${maxEvents} fit in one request (QES_INGEST_QUEUE_EVENTS).`,
  );
}
