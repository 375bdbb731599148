import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { SourceSchema } from "@qes/core";
import type { EncodedBatch } from "./postgres-load-batch.ts";

/**
 * Worker threads that parse and encode batches of a large load, so that parsing (the load's
 * largest cost after PostgreSQL's own) uses more than one core. Batches go out round-robin and
 * come back in any order; the loader consumes them in input order. A worker that cannot start
 * or fails rejects its batches, and the loader encodes those itself.
 */

export type WorkerMessage =
  | { type: "schema"; source: SourceSchema; version: number }
  | { type: "batch"; id: number; lines: string[]; firstLine: number; now: bigint };

export type WorkerReply = { id: number; batch: EncodedBatch } | { id: number; error: string };

interface Pending {
  resolve: (batch: EncodedBatch) => void;
  reject: (e: Error) => void;
}

/** Counters of this process, for tests and benchmarks. */
export const loadWorkerStatistics = { batches: 0, failures: 0 };

/** Workers for a load: 2 on a 2-core machine (PostgreSQL takes its share), up to 3. */
export function loadWorkerCount(): number {
  return Math.min(3, Math.max(2, availableParallelism() - 1));
}

export class LoadWorkers {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly owner = new Map<number, Worker>();
  private next = 0;
  private ids = 0;
  private failed = false;
  private closing = false;

  constructor(count: number, source: SourceSchema, version: number) {
    for (let i = 0; i < count; i++) {
      // a JavaScript entry: it registers the TypeScript loader the thread does not inherit
      const worker = new Worker(new URL("./postgres-load-worker.mjs", import.meta.url));
      worker.on("message", (reply: WorkerReply) => this.settle(reply));
      worker.on("error", (e) => this.fail(worker, e));
      worker.on("exit", (code) => {
        if (code !== 0) this.fail(worker, new Error(`load worker exited with code ${code}`));
      });
      worker.unref();
      worker.postMessage({ type: "schema", source, version } satisfies WorkerMessage);
      this.workers.push(worker);
    }
  }

  /** False once a worker failed: the loader then encodes the rest itself. */
  get usable(): boolean {
    return !this.failed;
  }

  /** The schema that later batches are encoded against. */
  updateSchema(source: SourceSchema, version: number): void {
    for (const worker of this.workers)
      worker.postMessage({ type: "schema", source, version } satisfies WorkerMessage);
  }

  encode(lines: string[], firstLine: number, now: bigint): Promise<EncodedBatch> {
    const id = this.ids++;
    const worker = this.workers[this.next++ % this.workers.length]!;
    return new Promise<EncodedBatch>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.owner.set(id, worker);
      worker.postMessage({ type: "batch", id, lines, firstLine, now } satisfies WorkerMessage);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const p of this.pending.values()) p.reject(new Error("load ended"));
    this.pending.clear();
    await Promise.allSettled(this.workers.map((w) => w.terminate()));
  }

  private settle(reply: WorkerReply): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.pending.delete(reply.id);
    this.owner.delete(reply.id);
    if ("batch" in reply) {
      loadWorkerStatistics.batches++;
      pending.resolve(reply.batch);
    } else pending.reject(new Error(reply.error));
  }

  private fail(worker: Worker, e: Error): void {
    if (this.closing) return;
    if (!this.failed) loadWorkerStatistics.failures++;
    this.failed = true;
    for (const [id, w] of this.owner) {
      if (w !== worker) continue;
      this.pending.get(id)?.reject(e);
      this.pending.delete(id);
      this.owner.delete(id);
    }
  }
}
