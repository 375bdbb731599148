import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openChdbEngine } from "../../packages/backend-clickhouse/src/clickhouse-connection.ts";
import { startQes } from "../http/support/qes-process.ts";

/**
 * `qes serve` on embedded ClickHouse under a pinned clock (QES_TEST_NOW, how tests date events):
 * its retention keeps the events of the pinned day and the 30 before it, so no table may carry a
 * TTL, which expires parts by the engine's own clock at the next merge (ingested events of the
 * pinned "yesterday" were gone seconds after their 200).
 */
const dir = mkdtempSync(join(tmpdir(), "qes-ch-pinned-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("qes serve on ClickHouse with QES_TEST_NOW", () => {
  it("keeps ingested events of the pinned days through merges", async () => {
    const path = join(dir, "qes.chdb");
    const server = await startQes({
      QES_BACKEND: "clickhouse",
      QES_CLICKHOUSE_PATH: path,
      QES_TEST_NOW: "2025-01-15T12:00:00Z",
      QES_SEED: "false",
      QES_API_KEYS: "pinned-query-token-0123456789",
      QES_INGEST_KEYS: "pinned-ingest-token-0123456789",
    });
    try {
      for (let r = 0; r < 4; r++) {
        const res = await fetch(`${server.url}/api/logs?source_name=pinned.logs`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": "pinned-ingest-token-0123456789" },
          body: JSON.stringify([{ id: `e${r}`, timestamp: "2025-01-14T11:00:00Z", event_message: `m${r}` }]),
        });
        expect(res.status).toBe(200);
      }
    } finally {
      expect(await server.stop("SIGTERM")).toBe(0);
    }
    const engine = await openChdbEngine(path, "qes");
    try {
      const text = async (query: string) =>
        engine.owner.use(async (c) => (await c.query({ query, format: "TabSeparatedRaw" })).text());
      const table = (
        await text(
          "SELECT name FROM system.tables WHERE database = 'qes' AND name LIKE '%pinned%' AND name NOT LIKE '.%'",
        )
      )
        .trim()
        .split("\n")[0]!;
      await engine.owner.use((c) => c.command({ query: `OPTIMIZE TABLE qes.${table} FINAL` }));
      expect((await text(`SELECT id FROM qes.${table} ORDER BY id`)).trim().split("\n")).toEqual([
        "e0",
        "e1",
        "e2",
        "e3",
      ]);
    } finally {
      await engine.close();
    }
  }, 180_000);
});
