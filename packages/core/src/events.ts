/**
 * The event-shaping half of core on its own (`@qes/core/events`): what a loader's worker threads
 * need to parse, check and flatten events, without the SQL compiler. A thread that imported the
 * whole of core loaded node-sql-parser's grammar and the rest of the compiler for nothing: ~0.44 s
 * of CPU per import under tsx, against ~0.07 s for these modules (docs/benchmarks.md).
 */

export * from "./errors.ts";
export * from "./ingest-preparer.ts";
export * from "./schema/event-coverage.ts";
export * from "./schema/flatten-event.ts";
export * from "./schema/infer-schema.ts";
export * from "./schema/parse-event.ts";
export * from "./schema/schema-model.ts";
export * from "./schema/timestamp-micros.ts";
