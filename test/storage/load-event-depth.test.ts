import { type Backend, MAX_EVENT_DEPTH, QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/** an event whose `metadata` nests `levels` objects below the event (the event itself one more) */
function nested(id: string, levels: number): string {
  return `{"id":"${id}","metadata":${'{"d":'.repeat(levels)}"leaf"${"}".repeat(levels)}}`;
}

/**
 * `qes load` takes and refuses by depth what the ingest route does (MAX_EVENT_DEPTH): a load of an
 * event 3,000 levels deep died of a stack overflow in the schema's widening ("RangeError: Maximum
 * call stack size exceeded" and a stack trace, on every backend), and one of 100 levels, which
 * POST /api/logs refuses, was stored.
 */
describe.each(BACKENDS)("a load of deeply nested events on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  for (const levels of [MAX_EVENT_DEPTH, 100, 10_000]) {
    it(`refuses an event of ${levels} levels naming its line, storing nothing of the file`, async () => {
      const err = await backend
        .load("deep.refused", ['{"id":"fine"}', nested("deep", levels), '{"id":"after"}'])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QesError);
      expect(err).toMatchObject({ code: "invalid_event", line: 2 });
      expect((err as QesError).message).toBe(
        `line 2: objects and arrays nested deeper than ${MAX_EVENT_DEPTH} levels`,
      );
      expect((await backend.schema()).sources["deep.refused"]).toBeUndefined();
    });
  }

  it("refuses the depth hidden in a key sent twice, naming the line", async () => {
    // JSON.parse keeps the last value; the exact reading of the integer sees the first
    const line = `{"id":"dup","a":${"[".repeat(10_000)}${"]".repeat(10_000)},"a":9007199254740993}`;
    const err = await backend.load("deep.dup", [line]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "invalid_event", line: 1 });
    expect((err as QesError).message).toMatch(/^line 1: objects and arrays nested deeper than/);
  });

  it("stores an event as deep as the ingest route takes, and reads its leaf back", async () => {
    // the event is one level, metadata the first of the objects below it
    await backend.load("deep.taken", [nested("deepest", MAX_EVENT_DEPTH - 1)]);
    let path = "m";
    let from = "`deep.taken` t cross join unnest(t.metadata) as m";
    for (let i = 0; i < MAX_EVENT_DEPTH - 2; i++) {
      from += ` cross join unnest(${path}.d) as d${i}`;
      path = `d${i}`;
    }
    expect(await runSql(backend, `select ${path}.d as leaf from ${from}`)).toEqual([{ leaf: "leaf" }]);
  });
});
