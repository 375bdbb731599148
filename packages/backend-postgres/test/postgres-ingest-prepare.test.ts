import { logEventFromJson, newSourceSchema, QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { prepareIngestRows } from "../src/postgres-ingest-prepare.ts";

describe("PostgreSQL's ingest preparer", () => {
  it("refuses an instant outside the years a TIMESTAMP holds, as the commit would", () => {
    const event = logEventFromJson({ id: "far", event_message: "m" }, "s", 1_736_942_400_000_000n, "event 0");
    const far = { ...event, timestamp: 253_402_300_800_000_000n }; // 10000-01-01
    expect(() => prepareIngestRows(newSourceSchema("s"), [far])).toThrow(QesError);
    expect(() => prepareIngestRows(newSourceSchema("s"), [far])).toThrow(/"timestamp" is out of range/);
  });

  it("keeps each event's row, UTC day and time, in order", () => {
    const at = (iso: string, id: string) =>
      logEventFromJson({ id, timestamp: iso, event_message: id }, "s", 0n, "event");
    const { rows } = prepareIngestRows(newSourceSchema("s"), [
      at("2025-01-15T23:59:59.999999Z", "a"),
      at("2025-01-16T00:00:00Z", "b"),
    ]);
    const { texts, days, micros } = rows as { texts: string[]; days: Int32Array; micros: BigInt64Array };
    expect(texts.map((t) => t.split("\t")[0])).toEqual(["a", "b"]);
    expect([...days]).toEqual([20103, 20104]);
    expect([...micros]).toEqual([1_736_985_599_999_999n, 1_736_985_600_000_000n]);
  });
});
