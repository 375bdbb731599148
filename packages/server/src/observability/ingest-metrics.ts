import type { IngestResult } from "@qes/core";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * Metrics of `POST /api/logs` (request counts and latency are in `qes_http_request_duration_seconds`
 * under route `/api/logs`). No label carries a source name: sources are named by clients, and a
 * label per name would let any ingest token grow the series without bound.
 */
export class IngestMetrics {
  readonly #events: Counter<"outcome">;
  readonly #commitBatches: Histogram;
  readonly #commitSeconds: Histogram;
  readonly #parsed: Counter<"thread">;

  constructor(registry: Registry, heldEvents: () => number) {
    this.#events = new Counter({
      name: "qes_ingest_events_total",
      help: "Ingested events by outcome: stored, or duplicate (an id already stored in its source)",
      labelNames: ["outcome"] as const,
      registers: [registry],
    });
    this.#commitBatches = new Histogram({
      name: "qes_ingest_commit_requests",
      help: "Requests committed together in one transaction (group commit)",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    });
    this.#commitSeconds = new Histogram({
      name: "qes_ingest_commit_duration_seconds",
      help: "Time of one group commit in the backend, durable when it ends",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.#parsed = new Counter({
      name: "qes_ingest_bodies_parsed_total",
      help: "Ingest request bodies parsed (and their rows encoded) by thread: an ingest worker, or the main thread (no worker, or new fields to widen for). A worker-parsed body whose rows the commit cannot use (its source widened meanwhile) is parsed again on the main thread, and counted under both",
      labelNames: ["thread"] as const,
      registers: [registry],
    });
    new Gauge({
      name: "qes_ingest_queued_events",
      help: "Events accepted and waiting for (or in) their commit; QES_INGEST_QUEUE_EVENTS bounds it",
      registers: [registry],
      collect() {
        this.set(heldEvents());
      },
    });
  }

  /** one request's body parsed, on an ingest worker or on the main thread */
  parsed(thread: "worker" | "main"): void {
    this.#parsed.inc({ thread });
  }

  /** runs one commit, counting what it stored */
  async commit(requests: number, run: () => Promise<IngestResult[]>): Promise<IngestResult[]> {
    const end = this.#commitSeconds.startTimer();
    const results = await run();
    end();
    this.#commitBatches.observe(requests);
    for (const r of results) {
      this.#events.inc({ outcome: "stored" }, r.stored);
      this.#events.inc({ outcome: "duplicate" }, r.duplicates);
    }
    return results;
  }
}
