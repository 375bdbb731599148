import type { Backend } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

const ITEMS = 20_000;

/**
 * UNNEST of one event's huge array takes memory linear in its length. DuckDB decorrelated
 * `CROSS JOIN (SELECT unnest(<list of the JSON text>))` by a join on the JSON text itself, so each
 * of the n rows carried the whole array's text: memory n² (an array of 5,000 objects already
 * failed under the default QES_DUCKDB_MEMORY_LIMIT of 1 GiB; 200,000 take ~80 MB now).
 */
describe.each(BACKENDS)("UNNEST of one event's array of $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, async (b) => {
    backend = b;
    const items = Array.from({ length: ITEMS }, (_, i) => ({ v: i, name: `item-${i}` }));
    await backend.load("huge.array", [
      JSON.stringify({
        id: "big",
        timestamp: "2025-01-15T10:00:00Z",
        event_message: "x",
        metadata: { items },
      }),
      JSON.stringify({ id: "none", timestamp: "2025-01-15T10:00:01Z", event_message: "y", metadata: {} }),
    ]);
  });

  it(`CROSS JOIN UNNEST of ${ITEMS} records`, async () => {
    const rows = await runSql(
      backend,
      "select count(*) as n, sum(i.v) as s, max(i.name) as m from `huge.array` cross join unnest(metadata.items) as i",
    );
    expect(rows).toEqual([{ n: ITEMS, s: (ITEMS * (ITEMS - 1)) / 2, m: "item-9999" }]);
  });

  it("LEFT JOIN UNNEST … WITH OFFSET of metadata[0]'s array, keeping the event without one", async () => {
    const rows = await runSql(
      backend,
      "select id, count(*) as n, sum(o) as so, countif(i.v = o) as same from `huge.array` " +
        "left join unnest(metadata[0].items) as i with offset o on true group by id order by id",
    );
    expect(rows).toEqual([
      { id: "big", n: ITEMS, so: (ITEMS * (ITEMS - 1)) / 2, same: ITEMS },
      { id: "none", n: 1, so: null, same: 0 },
    ]);
  });
});
