import { describe, expect, it } from "vitest";
import { fileBackend, handQuery, pairsCountQuery } from "./helpers.ts";

const DAY = 86_400_000_000n;
const NOW = 1_736_899_200_000_000n; // 2025-01-15T00:00:00Z
const INT = { kind: "scalar", type: "INT64" } as const;
const { backend } = fileBackend("retention-readers");

describe("DuckDB retention while a dashboard polls", () => {
  it("frees the row groups it empties: the rows kept still fit in one, and the blocks follow them", async () => {
    // queries begun before retention's deletes committed could still see the deleted rows, so the
    // checkpoint kept the row groups the deletes had emptied, and later checkpoints kept them too:
    // 14 cycles ended at 6 row groups and 23 blocks for 56,000 rows (one row group, 6 blocks
    // without the polling)
    const table = async () => (await backend.schema()).sources["polled.src"]!.table;
    let layout = { groups: 0, blocks: 0 };
    for (let cycle = 0; cycle < 14; cycle++) {
      // half of each cycle's events are past the retention of one day, half are kept
      const events = Array.from({ length: 8000 }, (_, i) => ({
        id: `c${cycle}-${i}`,
        timestamp: i % 2 === 0 ? NOW - 10n * DAY + BigInt(i) : NOW + BigInt(i),
        body: { metadata: { a: i } },
      }));
      await backend.ingest([{ source: "polled.src", events }]);
      const t = await table();
      let polling = true;
      const poll = (async () => {
        while (polling) {
          await backend.execute(pairsCountQuery(t, 5000), [], { maxRows: 10, timeoutMs: 60_000 });
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      const reports = await backend.applyRetention({ defaultDays: 1, perSource: {} }, NOW);
      const report = reports.find((r) => r.source === "polled.src");
      polling = false;
      await poll;
      expect(report?.deletedEvents).toBe(4000);
      const storage = await backend.execute(
        handQuery(
          `SELECT count(DISTINCT row_group_id) AS groups, count(DISTINCT block_id) AS blocks FROM pragma_storage_info('${t}') WHERE persistent`,
          [
            { name: "groups", type: INT },
            { name: "blocks", type: INT },
          ],
        ),
        [],
        { maxRows: 1, timeoutMs: 60_000 },
      );
      layout = { groups: Number(storage.rows[0]?.groups), blocks: Number(storage.rows[0]?.blocks) };
    }
    const kept = await backend.execute(
      handQuery(`SELECT count(*) AS n FROM "${await table()}"`, [{ name: "n", type: INT }]),
      [],
      { maxRows: 1, timeoutMs: 60_000 },
    );
    expect(Number(kept.rows[0]?.n)).toBe(14 * 4000);
    expect(layout.groups).toBeLessThanOrEqual(2);
    expect(layout.blocks).toBeLessThanOrEqual(12);
  }, 180_000);
});
