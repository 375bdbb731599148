import {
  cloneSourceSchema,
  type IngestBatch,
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
  before: SourceSchema;
  after: SourceSchema;
  changes: SchemaChange[];
}

/**
 * The schema changes a batch would make, event by event, as the backend's load will make them
 * (core's widenSchema, on copies: the store's schema is untouched). Events the schema already
 * covers, the great majority, cost one walk and no copy. A source the store does not hold yet
 * starts from an empty schema. Read once per request by every ingest check that needs it.
 */
export function schemaWidenings(schema: LogSchema, batch: IngestBatch): Widening[] {
  const steps: Widening[] = [];
  let current = schema.sources[batch.source] ?? newSourceSchema(batch.source);
  for (const [index, event] of batch.events.entries()) {
    if (schemaCoversEvent(current.fields, event.body)) continue;
    const after = cloneSourceSchema(current);
    const changes = widenSchema(after, event.body);
    if (changes.length === 0) continue;
    steps.push({ index, before: current, after, changes });
    current = after;
  }
  return steps;
}
