import { schemaCoversEvent } from "./event-coverage.ts";
import { cloneSourceSchema, type SchemaChange, widenSchema } from "./infer-schema.ts";
import type { JsonObject } from "./json-value.ts";
import type { SourceSchema } from "./schema-model.ts";

/** One event's step through its source's schema, as a load is about to make it. */
export interface WideningStep {
  /** the event's input line */
  line: number;
  /** the schema before the event (a copy) */
  before: SourceSchema;
  /** the schema with the event's changes */
  after: SourceSchema;
  changes: SchemaChange[];
}

/**
 * Told of every widening a load makes, before the load applies it; throwing refuses the load,
 * which then stores nothing (`qes load` uses it to keep the stored queries it serves compiling).
 */
export type WideningCheck = (step: WideningStep) => void;

/**
 * Widens `schema` in place for one event, as every loader does (DESIGN.md §3): an event the
 * schema covers, the great majority, costs one walk and no allocation; any other widens by
 * `widenSchema`, shown first to `check` (with a copy of the schema as it was) when one is given.
 * Returns the changes, in the order a backend applies them.
 */
export function widenForEvent(
  schema: SourceSchema,
  body: JsonObject,
  line: number,
  check?: WideningCheck,
): SchemaChange[] {
  if (schemaCoversEvent(schema.fields, body)) return [];
  if (check === undefined) return widenSchema(schema, body);
  const before = cloneSourceSchema(schema);
  const changes = widenSchema(schema, body);
  if (changes.length > 0) check({ line, before, after: schema, changes });
  return changes;
}

/**
 * Does `hint` (`IngestBatch.coveredBy`: a schema found to cover every event of a batch) have
 * exactly `model`'s fields? Then no event of the batch widens `model` — widening only ever makes
 * a schema cover more, and coverage is what widening tests — and a store may skip the walk over
 * the events (a third of a second per 100,000 edge events, on the commit's path). Compared as
 * JSON text: fields in another order are not the same here, which only costs the walk.
 */
export function batchCoveredBy(model: SourceSchema, hint: SourceSchema | undefined): boolean {
  if (hint === undefined) return false;
  return hint === model || JSON.stringify(hint.fields) === JSON.stringify(model.fields);
}
