import { type Backend, type IngestBatch, nowMicros } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

function batch(source: string, ids: string[], body: Record<string, unknown> = {}): IngestBatch {
  const timestamp = nowMicros();
  return {
    source,
    events: ids.map((id) => ({ id, timestamp, body: { event_message: `m ${id}`, ...body } })),
  };
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** as if `backend` had just asked the schema's version: its cache is trusted for reads */
function justChecked(backend: Backend): void {
  Object.assign(backend, { checkedAt: Date.now() + 60_000 });
}

// Two qes instances on one ClickHouse database (one chDB engine here, two backends): a write goes
// by the stored schema, not by one the other instance changed since this one last looked.
describe("ClickHouse writes of two instances on one database", () => {
  const database = uniqueDatabase("qes_inst");
  let a: Backend;
  let b: Backend;
  beforeAll(async () => {
    a = createClickhouseBackend({ path: chdbTestPath(), database });
    await a.init();
    b = createClickhouseBackend({ path: chdbTestPath(), database });
    await b.init();
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("a retry sent to the other instance right after the first made the source is a duplicate, not stored again", async () => {
    await b.schema();
    justChecked(b);
    expect(await a.ingest([batch("inst.new", range("first", 10))])).toEqual([
      { source: "inst.new", stored: 10, duplicates: 0 },
    ]);
    expect(await b.ingest([batch("inst.new", range("first", 10))])).toEqual([
      { source: "inst.new", stored: 0, duplicates: 10 },
    ]);
    // and the source's schema b wrote back still holds what a stored
    expect(Object.keys((await a.schema()).sources)).toContain("inst.new");
  });

  it("events sent to the other instance right after the first widened the source are stored, with the new field", async () => {
    await a.ingest([batch("inst.wide", range("base", 3))]);
    await b.schema();
    await a.ingest([batch("inst.wide", range("widened", 3), { metadata: { added: 1 } })]);
    justChecked(b);
    expect(
      await b.ingest([batch("inst.wide", range("after", 3), { metadata: { added: 2, more: "x" } })]),
    ).toEqual([{ source: "inst.wide", stored: 3, duplicates: 0 }]);
    const fields = (await b.schema()).sources["inst.wide"]!.fields;
    expect(Object.keys(fields.metadata!.fields!).sort()).toEqual(["added", "more"]);
  });
});
