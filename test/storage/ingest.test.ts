import {
  type Backend,
  cloneSourceSchema,
  type IngestBatch,
  logEventFromJson,
  parseJsonText,
  QesError,
  widenForEvent,
} from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch as batch, INGEST_NOW as NOW } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

async function rows(backend: Backend, source: string) {
  return runSql(backend, `select id, event_message, timestamp from \`${source}\` order by event_message, id`);
}

describe.each(BACKENDS)("Backend.ingest on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  it("creates a new source, widens its schema and answers queries", async () => {
    const results = await backend.ingest([
      batch("ingest.new", [
        '{"id":"a","timestamp":"2025-01-15T09:00:00Z","event_message":"one","metadata":{"status":200}}',
        '{"id":"b","timestamp":"2025-01-15T10:00:00Z","event_message":"two","metadata":{"status":"x"}}',
      ]),
    ]);
    expect(results).toEqual([{ source: "ingest.new", stored: 2, duplicates: 0 }]);
    const schema = await backend.schema();
    expect(schema.sources["ingest.new"]?.fields.metadata?.fields?.status).toMatchObject({ type: "STRING" });
    const got = await runSql(
      backend,
      "select id, m.status from `ingest.new` cross join unnest(metadata) as m order by id",
    );
    expect(got).toEqual([
      { id: "a", status: "200" },
      { id: "b", status: "x" },
    ]);
  });

  it("stores an id once: repeated inside one call, across batches of a call, and on retry", async () => {
    const events = [
      '{"id":"d1","timestamp":"2025-01-15T09:00:00Z","event_message":"first"}',
      '{"id":"d1","timestamp":"2025-01-15T09:00:00Z","event_message":"first again"}',
      '{"id":"d2","timestamp":"2025-01-15T09:00:01Z","event_message":"second"}',
    ];
    const first = await backend.ingest([
      batch("ingest.dedupe", events),
      batch("ingest.dedupe", [events[2]!]),
    ]);
    expect(first).toEqual([
      { source: "ingest.dedupe", stored: 2, duplicates: 1 },
      { source: "ingest.dedupe", stored: 0, duplicates: 1 },
    ]);
    const retry = await backend.ingest([batch("ingest.dedupe", events)]);
    expect(retry).toEqual([{ source: "ingest.dedupe", stored: 0, duplicates: 3 }]);
    expect((await rows(backend, "ingest.dedupe")).map((r) => r.id)).toEqual(["d1", "d2"]);
  });

  it("stores an id once when two calls race with the same events", async () => {
    const events = Array.from({ length: 50 }, (_, i) => `{"id":"c${i}","event_message":"race"}`);
    const [a, b] = await Promise.all([
      backend.ingest([batch("ingest.race", events)]),
      backend.ingest([batch("ingest.race", events)]),
    ]);
    expect(a![0]!.stored + b![0]!.stored).toBe(50);
    expect(a![0]!.duplicates + b![0]!.duplicates).toBe(50);
    expect(await rows(backend, "ingest.race")).toHaveLength(50);
  });

  it("derives the id of an event without one from its content, so a retry stores nothing", async () => {
    // no timestamp: the defaulted load time differs between the tries, the id must not
    const events = [
      '{"event_message":"no id, no time"}',
      '{"event_message":"no id","timestamp":1736931600000000}',
    ];
    expect(await backend.ingest([batch("ingest.derived", events, NOW)])).toEqual([
      { source: "ingest.derived", stored: 2, duplicates: 0 },
    ]);
    expect(await backend.ingest([batch("ingest.derived", events, NOW + 5_000_000n)])).toEqual([
      { source: "ingest.derived", stored: 0, duplicates: 2 },
    ]);
    // the same id is another event in another source
    expect(await backend.ingest([batch("ingest.derived.other", events, NOW)])).toEqual([
      { source: "ingest.derived.other", stored: 2, duplicates: 0 },
    ]);
    const got = await rows(backend, "ingest.derived");
    expect(got).toHaveLength(2);
    expect(got.map((r) => r.timestamp)).toContain(Number(NOW));
  });

  it("stores nothing of a call when one batch fails, not even a source it created", async () => {
    const before = await backend.schema();
    const bad: IngestBatch = { source: " ", events: batch("x", ['{"event_message":"x"}']).events };
    await expect(
      backend.ingest([batch("ingest.atomic", ['{"id":"ok","event_message":"kept?"}']), bad]),
    ).rejects.toBeInstanceOf(QesError);
    expect((await backend.schema()).sources["ingest.atomic"]).toBeUndefined();
    expect((await backend.schema()).version).toBe(before.version);
  });

  it("widens by the events when a batch's coveredBy is not the store's schema (the route saw it before another request widened it)", async () => {
    const source = "ingest.hint";
    await backend.ingest([batch(source, ['{"id":"h0","timestamp":"2025-01-15T09:00:00Z","n":1}'])]);
    const seen = cloneSourceSchema((await backend.schema()).sources[source]!);
    // another request widens the source after the route looked at it
    await backend.ingest([batch(source, ['{"id":"h1","timestamp":"2025-01-15T09:01:00Z","m":"x"}'])]);
    // the route's hint: its (stale) schema widened by the batch's events, covering them
    const next = batch(source, ['{"id":"h2","timestamp":"2025-01-15T09:02:00Z","n":"text","q":5}']);
    const hint = cloneSourceSchema(seen);
    for (const [i, e] of next.events.entries()) widenForEvent(hint, e.body, i);
    await backend.ingest([{ ...next, coveredBy: hint }]);
    const fields = (await backend.schema()).sources[source]!.fields;
    expect(Object.fromEntries(["n", "m", "q"].map((f) => [f, fields[f]?.type]))).toEqual({
      n: "STRING",
      m: "STRING",
      q: "INT64",
    });
    expect(await runSql(backend, `select id, n, m, q from \`${source}\` order by id`)).toEqual([
      { id: "h0", n: "1", m: null, q: null },
      { id: "h1", n: null, m: "x", q: null },
      { id: "h2", n: "text", m: null, q: 5 },
    ]);
  });

  it("rolls back earlier batches when a later batch fails inside the engine", async () => {
    await backend.ingest([batch("ingest.rollback", ['{"id":"r0","event_message":"before"}'])]);
    // an event core would refuse, handed over directly so that the failure comes from the
    // backend after the first batch (and a new source) were written in the same transaction
    const unstorable: IngestBatch = {
      source: "ingest.rollback.second",
      events: [{ id: "r2", timestamp: 2n ** 63n, body: { event_message: "x", metadata: { v: 1 } } }],
    };
    await expect(
      backend.ingest([
        batch("ingest.rollback", ['{"id":"r1","event_message":"in the failing call"}']),
        unstorable,
      ]),
    ).rejects.toThrow();
    expect((await rows(backend, "ingest.rollback")).map((r) => r.id)).toEqual(["r0"]);
    expect((await backend.schema()).sources["ingest.rollback.second"]).toBeUndefined();
    // the backend is usable afterwards, and r1 was not half-stored
    expect(
      await backend.ingest([batch("ingest.rollback", ['{"id":"r1","event_message":"in the failing call"}'])]),
    ).toEqual([{ source: "ingest.rollback", stored: 1, duplicates: 0 }]);
  });
});

describe("logEventFromJson", () => {
  it("gives the same id for the same event in any key order, another for another source or body", () => {
    const a = logEventFromJson(parseJsonText('{"a":1,"b":{"c":2,"d":[1,2]}}'), "s", NOW);
    const b = logEventFromJson(parseJsonText('{"b":{"d":[1,2],"c":2},"a":1}'), "s", NOW + 1n);
    const c = logEventFromJson(parseJsonText('{"a":1,"b":{"c":2,"d":[1,2]}}'), "t", NOW);
    const d = logEventFromJson(parseJsonText('{"a":1,"b":{"c":2,"d":[2,1]}}'), "s", NOW);
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
    expect(d.id).not.toBe(a.id);
    expect(a.timestamp).toBe(NOW);
  });

  it("keeps a given id and timestamp and refuses what cannot be an event, naming it", () => {
    const e = logEventFromJson(
      parseJsonText('{"id":42,"timestamp":"2025-01-15T09:00:00.123456Z"}'),
      "s",
      NOW,
    );
    expect(e).toMatchObject({ id: "42", timestamp: 1_736_931_600_123_456n });
    const reason = (text: string) => {
      try {
        logEventFromJson(parseJsonText(text), "s", NOW, "event 3");
      } catch (err) {
        expect(err).toMatchObject({ code: "invalid_event" });
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(reason("[1]")).toMatch(/^event 3: an event must be a JSON object, got an array/);
    expect(reason('{"timestamp":"yesterday"}')).toMatch(/^event 3: "timestamp" is "yesterday"/);
    expect(reason('{"timestamp":"10000-01-01T00:00:00Z"}')).toMatch(/^event 3: "timestamp"/);
    expect(reason('{"timestamp":-62135596800000001}')).toMatch(/outside the years 0001–9999/);
  });
});
