import {
  type IngestBatch,
  type LogEvent,
  logEventFromJson,
  newSourceSchema,
  type SourceSchema,
} from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { prepareIngestRows } from "../src/postgres-ingest-prepare.ts";
import { dropStorage, ownerQuery, TEST_POSTGRES_URL, uniqueSchema } from "./helpers.ts";

const NOW = 1_736_942_400_000_000n;

function events(
  source: string,
  ids: string[],
  message: string,
  metadata: Record<string, unknown> = {},
): LogEvent[] {
  return ids.map((id, i) =>
    logEventFromJson(
      {
        id,
        timestamp: `2025-01-15T10:00:0${i % 10}Z`,
        event_message: `${message} ${id}`,
        metadata: { level: "info", ...metadata },
      },
      source,
      NOW,
      `event ${i}`,
    ),
  );
}

/** a batch carrying `rows` encoded for `schema` from `encoded`, and `shown` as its events */
function prepared(source: string, schema: SourceSchema, encoded: LogEvent[], shown: LogEvent[]): IngestBatch {
  return {
    source,
    events: shown,
    coveredBy: schema,
    prepared: {
      fields: JSON.stringify(schema.fields),
      ids: encoded.map((e) => e.id),
      rows: prepareIngestRows(schema, encoded).rows,
    },
  };
}

// the rows of a batch encoded ahead (IngestBatch.prepared) are what the commit writes while the
// source has the fields they were encoded for; past a widening it writes the batch's events
describe("PostgreSQL ingest of rows encoded ahead", () => {
  const schema = uniqueSchema("prepared");
  let backend: PostgresBackend;
  beforeAll(async () => {
    backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await backend.init();
  });
  afterAll(async () => {
    await backend.close();
    await dropStorage(schema);
  });

  async function messages(source: string): Promise<Record<string, string>> {
    const table = (await backend.schema()).sources[source]!.table;
    const { rows } = await ownerQuery<{ id: string; event_message: string }>(
      `select id, event_message from "${schema}"."${table}" order by id`,
    );
    return Object.fromEntries(rows.map((r) => [r.id, r.event_message]));
  }

  it("writes the prepared rows when the fields match, leaving out ids stored or repeated", async () => {
    const source = "prep.match";
    await backend.ingest([{ source, events: events(source, ["a"], "first") }]);
    const current = (await backend.schema()).sources[source]!;
    // b twice and a already stored: only b and c are new
    const encoded = events(source, ["a", "b", "b", "c"], "rows");
    const results = await backend.ingest([
      prepared(source, current, encoded, events(source, ["x"], "events")),
    ]);
    expect(results).toEqual([{ source, stored: 2, duplicates: 2 }]);
    expect(await messages(source)).toEqual({ a: "first a", b: "rows b", c: "rows c" });
  });

  it("writes the events when the source was widened since the rows were encoded", async () => {
    const source = "prep.stale";
    await backend.ingest([{ source, events: events(source, ["a"], "first") }]);
    const old = (await backend.schema()).sources[source]!;
    // another request widens the source with a field of its own
    await backend.ingest([{ source, events: events(source, ["w"], "widening", { extra: 1 }) }]);
    const encoded = events(source, ["s1", "s2"], "rows");
    const shown = events(source, ["s1", "s2"], "events");
    const results = await backend.ingest([prepared(source, old, encoded, shown)]);
    expect(results).toEqual([{ source, stored: 2, duplicates: 0 }]);
    expect(await messages(source)).toEqual({
      a: "first a",
      w: "widening w",
      s1: "events s1",
      s2: "events s2",
    });
  });

  it("in one group: prepared rows before a batch that widens are stored first, then converted with every row", async () => {
    const source = "prep.group";
    await backend.ingest([{ source, events: events(source, ["a"], "first", { n: 1 }) }]);
    const current = (await backend.schema()).sources[source]!;
    const encoded = events(source, ["p1", "p2"], "rows", { n: 2 });
    // n becomes a STRING in the next batch: the ALTER converts the prepared rows already written
    const widening = events(source, ["t1"], "text", { n: "two" });
    const results = await backend.ingest([
      prepared(source, current, encoded, events(source, ["p1", "p2"], "events", { n: 9 })),
      { source, events: widening },
    ]);
    expect(results).toEqual([
      { source, stored: 2, duplicates: 0 },
      { source, stored: 1, duplicates: 0 },
    ]);
    expect(await messages(source)).toEqual({ a: "first a", p1: "rows p1", p2: "rows p2", t1: "text t1" });
    const table = (await backend.schema()).sources[source]!.table;
    const column = (await backend.schema()).sources[source]!.fields.metadata!.fields!.n!.column!;
    const { rows } = await ownerQuery<{ id: string; n: string }>(
      `select id, "${column}" as n from "${schema}"."${table}" order by id`,
    );
    expect(rows).toEqual([
      { id: "a", n: "1" },
      { id: "p1", n: "2" },
      { id: "p2", n: "2" },
      { id: "t1", n: "two" },
    ]);
  });

  it("the preparer refuses an instant PostgreSQL cannot hold, as the commit would", () => {
    const source = "prep.range";
    const [event] = events(source, ["far"], "m");
    const far = { ...event!, timestamp: 253_402_300_800_000_000n }; // 10000-01-01
    expect(() => prepareIngestRows(newSourceSchema(source), [far])).toThrow(/"timestamp" is out of range/);
  });
});
