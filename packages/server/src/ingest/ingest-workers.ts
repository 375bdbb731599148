import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { type PreparedIngest, QesError, type QesErrorCode, type SourceSchema } from "@qes/core";
import type { BodyFormat } from "./parse-ingest-body.ts";

/** one request's body for a worker to check and encode (ingest-worker.ts) */
export interface PrepareRequest {
  id: number;
  body: Uint8Array;
  format: BodyFormat;
  source: string;
  nowMicros: bigint;
  maxEvents: number;
  /** the source's schema as the route read it: the rows are encoded for it */
  schema: SourceSchema;
  /** the backend's `ingestPreparer` */
  preparer: string;
}

export type PrepareReply =
  | { id: number; kind: "prepared"; fields: string; ids: string[]; rows: unknown }
  /** an event the schema does not cover: the route parses the body itself and widens */
  | { id: number; kind: "uncovered" }
  /** the body's refusal, as the route would have made it */
  | {
      id: number;
      kind: "refused";
      code: QesErrorCode;
      message: string;
      details: { param?: string; line?: number; retryAfterSeconds?: number };
    }
  | { id: number; kind: "failed"; message: string }
  /** the worker ended (crashed, or was ended for not answering) with the request in it */
  | { id: number; kind: "lost"; message: string };

/**
 * Ingest workers for the main thread to hand bodies to, one per core beside the one it runs
 * on (and PostgreSQL's), at least one, at most four.
 */
export function ingestWorkerCount(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** a worker that failed this many times in a row is not started again: the main thread parses */
const MAX_FAILURES = 3;

/**
 * How long a request waits for its worker's answer before the worker is ended (its requests then
 * fail over to the main thread). A body of `QES_INGEST_MAX_BYTES` takes a worker about a second;
 * a thread that does not answer would otherwise hold its requests, and their share of the bodies
 * read at once, for good while the server looks healthy.
 */
const ANSWER_WITHIN_MS = 30_000;

/**
 * How long a new thread may take to load (the TypeScript loader and core, ~0.3 s on a quiet
 * machine, several seconds on a loaded one) before it is ended. Its requests' answer times start
 * when it has loaded: a slow start on a busy host is not a thread that does not answer, and three
 * such "failures" in a row would leave every body to the main thread for good.
 */
const LOAD_WITHIN_MS = 60_000;

interface Pending {
  resolve(reply: PrepareReply): void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** resolved when the thread has loaded and takes requests */
  loaded: Promise<void>;
}

/**
 * Worker threads that parse and check ingest bodies and encode their rows for a backend with an
 * `ingestPreparer` (PostgreSQL), so that the server's main thread — which reads requests and
 * drives the group commits, one statement answer at a time — is not held for ~100 ms per 5,000
 * events while a commit's next statement waits for it. What comes back is a request's ids and
 * rows, not its events: handing a structured clone of the events back would cost the main thread
 * about what parsing did. A worker that fails (or cannot start) answers its requests with
 * `undefined`, and the route parses them itself; a body is never lost to a worker.
 */
export class IngestWorkers {
  readonly #preparer: string;
  readonly #count: number;
  readonly #answerWithinMs: number;
  readonly #entry: URL;
  #workers: Slot[] = [];
  #ids = 0;
  #failures = 0;
  #closed = false;

  readonly #log: ((message: string) => void) | undefined;

  constructor(
    preparer: string,
    count = ingestWorkerCount(),
    answerWithinMs = ANSWER_WITHIN_MS,
    /** told of each failure (the bodies then go to the main thread) */
    log?: (message: string) => void,
    /** the thread's entry: ingest-worker.mjs, or a test's that loads it slowly */
    entry: URL = new URL("./ingest-worker.mjs", import.meta.url),
  ) {
    this.#entry = entry;
    this.#preparer = preparer;
    this.#count = count;
    this.#answerWithinMs = answerWithinMs;
    this.#log = log;
  }

  /**
   * The request's prepared rows, with the schema they are for; `undefined` when the route must
   * parse the body itself (an event the schema does not cover, or no worker). Throws the body's
   * refusal (QesError) as the route's own parsing would.
   */
  async prepare(request: Omit<PrepareRequest, "id" | "preparer">): Promise<PreparedIngest | undefined> {
    const slot = this.#slot();
    if (slot === undefined) return undefined;
    const id = this.#ids++;
    // a copy, handed over without another: the route keeps the body to parse it again should
    // the commit meet another schema than the rows were encoded for
    const body = new Uint8Array(request.body);
    const reply = await new Promise<PrepareReply>((resolve) => {
      // ending the worker answers each of its requests (`failed`, #start)
      let answered = false;
      let timer: NodeJS.Timeout | undefined;
      void slot.loaded.then(() => {
        if (answered) return;
        timer = setTimeout(() => void slot.worker.terminate(), this.#answerWithinMs);
        timer.unref();
      });
      slot.pending.set(id, {
        resolve: (r) => {
          answered = true;
          clearTimeout(timer);
          resolve(r);
        },
      });
      slot.worker.postMessage({ ...request, body, id, preparer: this.#preparer } satisfies PrepareRequest, [
        body.buffer as ArrayBuffer,
      ]);
    });
    switch (reply.kind) {
      case "prepared":
        this.#failures = 0;
        return { fields: reply.fields, ids: reply.ids, rows: reply.rows };
      case "refused": {
        const d = reply.details;
        throw new QesError(reply.code, reply.message, {
          ...(d.param !== undefined ? { param: d.param } : {}),
          ...(d.line !== undefined ? { line: d.line } : {}),
          ...(d.retryAfterSeconds !== undefined ? { retryAfterSeconds: d.retryAfterSeconds } : {}),
        });
      }
      case "uncovered":
        return undefined;
      case "failed":
        this.#failed(reply.message);
        return undefined;
      case "lost":
        return undefined;
    }
  }

  /** one failure in a row more; past MAX_FAILURES no worker is started again */
  #failed(message: string): void {
    if (this.#closed) return;
    this.#failures++;
    this.#log?.(
      this.#failures >= MAX_FAILURES
        ? `ingest worker failed (${message}); ${MAX_FAILURES} failures in a row: ingest bodies are parsed on the main thread from now on`
        : `ingest worker failed (${message}); its bodies are parsed on the main thread`,
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }

  /** the worker with the fewest requests, started when fewer than `count` run */
  #slot(): Slot | undefined {
    if (this.#closed || this.#failures >= MAX_FAILURES) return undefined;
    if (this.#workers.length < this.#count) return this.#start();
    let best = this.#workers[0];
    for (const w of this.#workers) if (best === undefined || w.pending.size < best.pending.size) best = w;
    return best;
  }

  #start(): Slot {
    // a JavaScript entry: it registers the TypeScript loader the thread does not inherit
    const worker = new Worker(this.#entry);
    let loaded!: () => void;
    const slot: Slot = {
      worker,
      pending: new Map<number, Pending>(),
      loaded: new Promise((r) => (loaded = r)),
    };
    this.#workers.push(slot);
    const loading = setTimeout(() => void worker.terminate(), LOAD_WITHIN_MS);
    loading.unref();
    worker.on("message", (reply: PrepareReply | { kind: "ready" }) => {
      if (reply.kind === "ready") {
        clearTimeout(loading);
        loaded();
        return;
      }
      const pending = slot.pending.get(reply.id);
      slot.pending.delete(reply.id);
      pending?.resolve(reply);
    });
    let gone = false;
    const fail = (message: string) => {
      if (gone) return;
      gone = true;
      clearTimeout(loading);
      this.#workers = this.#workers.filter((w) => w !== slot);
      // one failure, however many requests it held
      this.#failed(message);
      for (const [id, pending] of slot.pending) pending.resolve({ id, kind: "lost", message });
      slot.pending.clear();
    };
    worker.on("error", (e) => fail(e.message));
    worker.on("exit", (code) => fail(`ingest worker exited with code ${code}`));
    worker.unref();
    return slot;
  }
}
