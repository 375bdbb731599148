import type { Backend } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch as batch } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/**
 * A record's JSON text may hold a number literal beyond 64 bits — core writes `1e20` as
 * `100000000000000000000`, as JSON.stringify does — and the record's other fields must still read
 * from it. ClickHouse's default JSON parser (simdjson) gave up on the whole document there, so
 * every field read from that row's JSON came back empty or NULL.
 */

describe.each(BACKENDS)("a record holding a number beyond 64 bits on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  it("its other fields, read from its JSON text, keep their values", async () => {
    const source = "json.big.numbers";
    // fields below an array are read from the JSON text on every backend
    await backend.ingest([
      batch(source, [
        '{"id":"a","event_message":"m","metadata":[{"big":100000000000000000000,"name":"alpha","n":1}]}',
        '{"id":"b","event_message":"m","metadata":[{"big":-200000000000000000000,"name":"beta","n":2}]}',
        '{"id":"c","event_message":"m","metadata":[{"big":5,"name":"gamma","n":3}]}',
      ]),
    ]);
    const rows = await runSql(
      backend,
      `select t.id, m.name, m.n, m.big from \`${source}\` as t cross join unnest(t.metadata) as m order by t.id`,
    );
    expect(rows).toEqual([
      { id: "a", name: "alpha", n: 1, big: 1e20 },
      { id: "b", name: "beta", n: 2, big: -2e20 },
      { id: "c", name: "gamma", n: 3, big: 5 },
    ]);
  });
});
