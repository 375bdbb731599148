import type { Backend, IngestBatch, IngestPreparerModule, LogEvent, SourceSchema } from "@qes/core";
import { logEventFromJson } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";

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

// the backends that encode ingest rows ahead (`Backend.ingestPreparer`): the rows of a batch
// encoded ahead are what the commit writes while the source has the fields they were encoded
// for; past a widening it writes the batch's events
describe.each(BACKENDS)("ingest of rows encoded ahead on $name", (fixture) => {
  let handle: BackendHandle;
  let backend: Backend;
  let preparer: IngestPreparerModule;
  beforeAll(async () => {
    handle = await fixture.create();
    backend = handle.backend;
    expect(backend.ingestPreparer).toBeDefined();
    preparer = (await import(backend.ingestPreparer!)) as IngestPreparerModule;
  });
  afterAll(() => handle?.dispose());

  /** a batch carrying the rows of `encoded` for `schema`, and `shown` as its events */
  function prepared(
    source: string,
    schema: SourceSchema,
    encoded: LogEvent[],
    shown: LogEvent[],
  ): IngestBatch {
    return {
      source,
      events: shown,
      coveredBy: schema,
      prepared: {
        fields: JSON.stringify(schema.fields),
        ids: encoded.map((e) => e.id),
        rows: preparer.prepareIngestRows(schema, encoded).rows,
      },
    };
  }

  async function messages(source: string): Promise<Record<string, unknown>> {
    const rows = await runSql(backend, `select id, event_message from \`${source}\` order by id`);
    return Object.fromEntries(rows.map((r) => [r.id, r.event_message]));
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
    // another request widens the source with a field of its own
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

  it("in one call: prepared rows before a batch that widens are written first, then widened with every row", async () => {
    const source = "prep.group";
    await backend.ingest([{ source, events: events(source, ["a"], "first", { n: 1 }) }]);
    const current = (await backend.schema()).sources[source]!;
    // the next batch makes n a STRING and adds a field: the rows encoded for the schema before
    // it are written before the change, which converts them with every stored row
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
    const rows = await runSql(
      backend,
      `select id, metadata.n as n, metadata.added as added from \`${source}\` order by id`,
    );
    expect(rows).toEqual([
      { id: "a", n: "1", added: null },
      { id: "p1", n: "2", added: null },
      { id: "p2", n: "2", added: null },
      { id: "t1", n: "two", added: true },
    ]);
  });
});
