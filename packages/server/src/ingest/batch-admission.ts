import {
  batchCoveredBy,
  type IngestBatch,
  type LogSchema,
  newSourceSchema,
  type SourceSchema,
} from "@qes/core";
import { checkFieldNames, widenWithinFieldLimit } from "./field-limit.ts";
import { schemaWidenings } from "./schema-widenings.ts";
import { checkSourceLimit } from "./source-limit.ts";
import type { StoredQueryGuard } from "./stored-query-guard.ts";

export interface BatchAdmissionOptions {
  /** `QES_INGEST_MAX_SOURCES` */
  maxSources: number;
  /** `QES_INGEST_MAX_FIELDS` */
  maxFields: number;
  storedQueryGuard: StoredQueryGuard;
}

/**
 * What an ingest batch may do to the store's schema: create a source within
 * `QES_INGEST_MAX_SOURCES`, add fields within `QES_INGEST_MAX_FIELDS`, and widen none a served
 * stored query needs. Checked twice. The route checks each request against the schema it reads,
 * to refuse early, before the queue. The commit checks the group again, in commit order, against
 * the schema the batches really meet: requests parsed while an earlier one was being committed
 * were all checked against the schema before it, so six requests of 900 new keys each passed a
 * limit of 1,000 together (DuckDB then ran out of memory committing 2,700 columns for one row,
 * PostgreSQL refused past 1,600 with a 422), and eight first requests to new sources all
 * passed a source limit with room for two.
 */
export class BatchAdmission {
  readonly #opts: BatchAdmissionOptions;

  constructor(opts: BatchAdmissionOptions) {
    this.#opts = opts;
  }

  /** a request for a source the store lacks, when it holds as many as it may (before the body is read) */
  checkSource(schema: LogSchema, source: string): void {
    checkSourceLimit(schema, source, this.#opts.maxSources);
  }

  /**
   * Refuses `batch` (400, naming the event, and its line when `lines` gives the events' lines) when it may not be made over `schema`; else returns
   * the source's schema after it (the batch's `coveredBy`; a new source's own when its events
   * bring only the fields every source has).
   */
  check(schema: LogSchema, batch: IngestBatch, lines?: readonly number[]): SourceSchema {
    this.checkSource(schema, batch.source);
    const { maxFields } = this.#opts;
    const widenings = schemaWidenings(
      schema,
      batch,
      checkFieldNames,
      (after, body, index, line) => widenWithinFieldLimit(after, body, maxFields, batch.source, index, line),
      lines,
    );
    this.#opts.storedQueryGuard.check(schema, batch.source, widenings);
    return widenings.at(-1)?.after ?? schema.sources[batch.source] ?? newSourceSchema(batch.source);
  }

  /**
   * The commit's check of a group over the store's `schema`: throws the first batch's refusal.
   * A batch whose checked schema (`coveredBy`) is the one its source has by then adds nothing and
   * costs no walk — every batch of a quiet store; one that would widen it is checked again.
   */
  checkGroup(schema: LogSchema, batches: readonly IngestBatch[]): void {
    let current = schema;
    for (const batch of batches) {
      const held = current.sources[batch.source];
      if (held !== undefined && batchCoveredBy(held, batch.coveredBy)) continue;
      current = { ...current, sources: { ...current.sources, [batch.source]: this.check(current, batch) } };
    }
  }
}
