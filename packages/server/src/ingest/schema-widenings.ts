import {
  cloneSourceSchema,
  type IngestBatch,
  type JsonObject,
  type LogSchema,
  newSourceSchema,
  type SchemaChange,
  type SourceSchema,
  schemaCoversEvent,
  widenSchema,
} from "@qes/core";

/** One event's step through its source's schema: the schema before it and after it. */
export interface Widening {
  /** the event's index in its request */
  index: number;
  /** the event's line in its body, when the body gave one event per line (NDJSON) */
  line?: number;
  before: SourceSchema;
  after: SourceSchema;
  changes: SchemaChange[];
}

/**
 * The schema changes a batch would make, event by event, as the backend's load will make them
 * (core's widenSchema, on copies: the store's schema is untouched). Events the schema already
 * covers, the great majority, cost one walk and no copy. A source the store does not hold yet
 * starts from an empty schema. Read once per request by every ingest check that needs it.
 *
 * @param checkStep sees each step as it is made and throws to refuse the batch there: every step
 *   copies the schema so far, so a body of thousands of events of new keys, checked against the
 *   field limit only after its last step, held thousands of ever larger copies (20,000 events of
 *   30 keys, 8.6 MB, ran the server out of memory)
 * @param widen widens a copy by one event; by default core's `widenSchema`, unbounded
 * @param lines each event's line in its body (NDJSON), for the refusals to name
 */
export function schemaWidenings(
  schema: LogSchema,
  batch: IngestBatch,
  checkStep: (step: Widening) => void = () => {},
  widen: (after: SourceSchema, body: JsonObject, index: number, line?: number) => SchemaChange[] = (
    after,
    body,
  ) => widenSchema(after, body),
  lines?: readonly number[],
): Widening[] {
  const steps: Widening[] = [];
  let current = schema.sources[batch.source] ?? newSourceSchema(batch.source);
  for (const [index, event] of batch.events.entries()) {
    if (schemaCoversEvent(current.fields, event.body)) continue;
    const after = cloneSourceSchema(current);
    const changes = widen(after, event.body, index, lines?.[index]);
    if (changes.length === 0) continue;
    const line = lines?.[index];
    const step: Widening = {
      index,
      ...(line === undefined ? {} : { line }),
      before: current,
      after,
      changes,
    };
    checkStep(step);
    steps.push(step);
    current = after;
  }
  return steps;
}
