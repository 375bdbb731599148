import { duckdbDialect } from "@qes/backend-duckdb";
import {
  builtinLogSchema,
  type EndpointDefinition,
  type LogEvent,
  type LogSchema,
  widenSchema,
} from "@qes/core";
import { beforeAll, describe, expect, it } from "vitest";
import { loadServedEndpoints } from "../src/endpoint-dirs.ts";
import { schemaWidenings } from "../src/ingest/schema-widenings.ts";
import { StoredQueryGuard } from "../src/ingest/stored-query-guard.ts";
import { refusal } from "./fixtures/refusal.ts";

/**
 * The guard compiles the served stored queries against the schema a request would leave (the
 * last of its widening steps), not once per step: 200 new fields cost one compilation of each
 * query, and a refusal still names the event whose step first breaks one.
 */
const EDGE = "cloudflare.logs.prod";
const STEPS = 200;

let definitions: readonly EndpointDefinition[];
let schema: LogSchema;
beforeAll(async () => {
  definitions = (await loadServedEndpoints([])).list();
  schema = builtinLogSchema();
  const edge = schema.sources[EDGE]!;
  widenSchema(edge, { event_message: "GET /rest/v1/x", metadata: { request: { path: "/rest/v1/x" } } });
});

/** a guard over the built-in queries that counts how often it asks for them (once per compilation pass) */
function countingGuard(): { guard: StoredQueryGuard; passes: () => number } {
  let passes = 0;
  const guard = new StoredQueryGuard({
    definitions: () => {
      passes++;
      return definitions;
    },
    dialect: duckdbDialect,
  });
  return { guard, passes: () => passes };
}

/** `STEPS` events, each adding a field of its own; event `breakAt` (if any) sends `metadata.request` as text */
function events(breakAt?: number): LogEvent[] {
  return Array.from({ length: STEPS }, (_, i) => ({
    id: `e${i}`,
    timestamp: 0n,
    body:
      i === breakAt
        ? { event_message: "x", metadata: { request: "oops" } }
        : { event_message: "x", metadata: { [`extra_${i}`]: i } },
  }));
}

describe("the stored-query guard", () => {
  it("compiles the served queries once for a request of many widenings that breaks none", () => {
    const { guard, passes } = countingGuard();
    const steps = schemaWidenings(schema, { source: EDGE, events: events() });
    expect(steps).toHaveLength(STEPS);
    guard.check(schema, EDGE, steps);
    // the pass that learns which queries compile today, and one over the last step's schema
    expect(passes()).toBe(2);
  });

  it("names the first event that breaks a query, by bisection, wherever it is", () => {
    for (const at of [0, 1, 117, STEPS - 1]) {
      const { guard, passes } = countingGuard();
      const steps = schemaWidenings(schema, { source: EDGE, events: events(at) });
      const e = refusal(() => guard.check(schema, EDGE, steps));
      expect(e.code).toBe("invalid_event");
      expect(e.message).toMatch(
        new RegExp(
          `^event ${at}: field "metadata.request" would change from RECORD to STRING, and a stored query this server runs`,
        ),
      );
      expect(e.logged).toMatchObject({ storedQuery: "usage.api-counts", source: EDGE });
      expect(passes()).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(STEPS)) + 1);
    }
  });

  it("names the event's line too when the body gave its events' lines (NDJSON)", () => {
    const { guard } = countingGuard();
    const batch = { source: EDGE, events: events(117) };
    const lines = batch.events.map((_, i) => 2 * i + 1);
    const steps = schemaWidenings(schema, batch, undefined, undefined, lines);
    const e = refusal(() => guard.check(schema, EDGE, steps));
    expect(e.message).toMatch(/^event 117 \(line 235\): field "metadata.request" would change/);
    expect(e.line).toBe(235);
  });
});
