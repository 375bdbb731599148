import { type Backend, QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/**
 * `qes load` refuses a timestamp outside the years 0001–9999 as the ingest route does: before,
 * DuckDB stored the year 0000 (or -1200), ClickHouse a time in 2025–2026 (its DateTime64 wrapped,
 * a silently different value) and PostgreSQL refused it.
 */
describe.each(BACKENDS)("a load's timestamps outside BigQuery's range on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  for (const timestamp of ['"0000-12-31T00:00:00Z"', "-62135596800000001", "-99999999999999999"]) {
    it(`refuses ${timestamp}, naming the line; nothing of the file is stored`, async () => {
      const err = await backend
        .load("ts.refused", ['{"id":"fine"}', `{"id":"old","timestamp":${timestamp}}`])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QesError);
      expect(err).toMatchObject({ code: "invalid_event", line: 2 });
      expect((err as QesError).message).toBe(
        'line 2: "timestamp" is outside the years 0001–9999 that every backend can store',
      );
      expect((await backend.schema()).sources["ts.refused"]).toBeUndefined();
    });
  }

  it("stores the first and the last microsecond of the range as sent", async () => {
    await backend.load("ts.edges", [
      '{"id":"first","timestamp":"0001-01-01T00:00:00Z"}',
      '{"id":"last","timestamp":"9999-12-31T23:59:59.999999Z"}',
    ]);
    expect(await runSql(backend, "select id, timestamp from `ts.edges` order by id")).toEqual([
      { id: "first", timestamp: "-62135596800000000" },
      { id: "last", timestamp: "253402300799999999" },
    ]);
  });

  // PostgreSQL's partition of 9999-12-31 ends at 10000-01-01, a bound of five year digits the
  // partition list did not read: the next load or ingest of that day made the partition again and
  // failed ("relation … already exists")
  it("stores later events of the last day and of the first day beside the first ones", async () => {
    await backend.load("ts.again", [
      '{"id":"last-1","timestamp":"9999-12-31T00:00:00Z"}',
      '{"id":"first-1","timestamp":"0001-01-01T00:00:00Z"}',
    ]);
    await backend.load("ts.again", ['{"id":"last-2","timestamp":"9999-12-31T10:00:00Z"}']);
    await backend.ingest([
      ingestBatch("ts.again", ['{"id":"last-3","timestamp":"9999-12-31T23:59:59.999999Z"}']),
    ]);
    await backend.ingest([ingestBatch("ts.again", ['{"id":"first-2","timestamp":"0001-01-01T23:00:00Z"}'])]);
    expect(await runSql(backend, "select id from `ts.again` order by id")).toEqual(
      ["first-1", "first-2", "last-1", "last-2", "last-3"].map((id) => ({ id })),
    );
  });
});
