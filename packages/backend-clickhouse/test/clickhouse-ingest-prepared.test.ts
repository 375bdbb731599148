import {
  type Backend,
  type IngestBatch,
  type LogEvent,
  logEventFromJson,
  type SourceSchema,
} from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareIngestRows } from "../src/clickhouse-ingest-prepare.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

const NOW = 1_736_942_400_000_000n;
const STRING = { kind: "scalar", type: "STRING" } as const;

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

/** a batch carrying rows encoded for `schema` from `encoded`, and `shown` as its events */
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

// the rows of a batch encoded ahead are what the commit writes while the source has the fields
// they were encoded for; past a widening it writes the batch's events
describe("ClickHouse ingest of rows encoded ahead", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = createClickhouseBackend({ path: chdbTestPath(), database: uniqueDatabase() });
    await backend.init();
  });
  afterAll(async () => {
    await backend.close();
  });

  async function messages(source: string): Promise<Record<string, string>> {
    const table = (await backend.schema()).sources[source]!.table;
    const r = await backend.execute(
      handQuery(`SELECT id, event_message FROM ${table} ORDER BY id`, [
        { name: "id", type: STRING },
        { name: "event_message", type: STRING },
      ]),
      [],
      { maxRows: 1000, timeoutMs: 10_000 },
    );
    return Object.fromEntries(r.rows.map((row) => [row.id as string, row.event_message as string]));
  }

  it("writes the prepared rows when the fields match, leaving out ids stored or repeated", async () => {
    const source = "prep.match";
    await backend.ingest([{ source, events: events(source, ["a"], "first") }]);
    const current = (await backend.schema()).sources[source]!;
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
    await backend.ingest([{ source, events: events(source, ["w"], "widening", { extra: 1 }) }]);
    const results = await backend.ingest([
      prepared(source, old, events(source, ["s1", "s2"], "rows"), events(source, ["s1", "s2"], "events")),
    ]);
    expect(results).toEqual([{ source, stored: 2, duplicates: 0 }]);
    expect(await messages(source)).toEqual({
      a: "first a",
      w: "widening w",
      s1: "events s1",
      s2: "events s2",
    });
  });

  it("in one call: prepared rows before a batch that widens are staged first, then widened with every row", async () => {
    const source = "prep.group";
    await backend.ingest([{ source, events: events(source, ["a"], "first", { n: 1 }) }]);
    const current = (await backend.schema()).sources[source]!;
    const results = await backend.ingest([
      prepared(
        source,
        current,
        events(source, ["p1", "p2"], "rows", { n: 2 }),
        events(source, ["p1"], "events"),
      ),
      { source, events: events(source, ["t1"], "text", { n: "two", added: true }) },
    ]);
    expect(results).toEqual([
      { source, stored: 2, duplicates: 0 },
      { source, stored: 1, duplicates: 0 },
    ]);
    expect(await messages(source)).toEqual({ a: "first a", p1: "rows p1", p2: "rows p2", t1: "text t1" });
    const schema = (await backend.schema()).sources[source]!;
    const column = schema.fields.metadata!.fields!.n!.column!;
    const r = await backend.execute(
      handQuery(`SELECT id, toString(${column}) AS n FROM ${schema.table} ORDER BY id`, [
        { name: "id", type: STRING },
        { name: "n", type: STRING },
      ]),
      [],
      { maxRows: 1000, timeoutMs: 10_000 },
    );
    expect(r.rows).toEqual([
      { id: "a", n: "1" },
      { id: "p1", n: "2" },
      { id: "p2", n: "2" },
      { id: "t1", n: "two" },
    ]);
  });
});
