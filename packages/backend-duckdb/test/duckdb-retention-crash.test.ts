import { execFile } from "node:child_process";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { LogEvent } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { handQuery, tempDir } from "./helpers.ts";

/**
 * A DuckDB process killed (SIGKILL) at several moments of a retention run — during the DELETE,
 * * the CHECKPOINT, the time index's rebuild (a run takes ~50 ms here) — and opened again: every event inside the retention is
 * there once, the old day is all there or all gone, the time index exists, and the next run
 * removes what the killed one did not.
 */
const DAY = 86_400_000_000n;
const NOW = 1_736_942_400_000_000n; // 2025-01-15T12:00:00Z
const PER_DAY = 150_000;
const tmp = tempDir("retention-crash");
const seed = join(tmp.dir, "seed.duckdb");
afterAll(() => tmp.cleanup());

const day = (prefix: string, at: bigint): LogEvent[] =>
  Array.from({ length: PER_DAY }, (_, i) => ({
    id: `${prefix}-${i}`,
    timestamp: at + BigInt(i),
    body: { event_message: `GET | 200 | /rest/v1/t${i % 97}?id=eq.${i}`, project: `p${i % 7}` },
  }));

beforeAll(async () => {
  const backend = createDuckdbBackend({ path: seed });
  await backend.init();
  await backend.ingest([{ source: "crash.src", events: day("old", NOW - 40n * DAY) }]);
  await backend.ingest([{ source: "crash.src", events: day("new", NOW - 3_600_000_000n) }]);
  await backend.close();
}, 120_000);

describe("DuckDB retention killed part-way", () => {
  it.each([0, 5, 10, 20, 30, 40, 60])(
    "SIGKILL %i ms into the run: nothing kept is lost, the old day goes whole or not at all",
    async (afterMs) => {
      const file = join(tmp.dir, `killed-${afterMs}.duckdb`);
      copyFileSync(seed, file);
      const index = new URL("../src/index.ts", import.meta.url).pathname;
      const script = join(tmp.dir, `retain-${afterMs}.mts`);
      writeFileSync(
        script,
        `import { createDuckdbBackend } from ${JSON.stringify(index)};\n` +
          `const b = createDuckdbBackend({ path: ${JSON.stringify(file)} });\nawait b.init();\n` +
          `setTimeout(() => process.kill(process.pid, "SIGKILL"), ${afterMs});\n` +
          `await b.applyRetention({ defaultDays: 30, perSource: {} }, ${NOW}n);\nprocess.stdout.write("done");\n` +
          `process.kill(process.pid, "SIGKILL");\n`,
      );
      const out = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
        cwd: new URL("..", import.meta.url).pathname,
      }).catch((e: { signal?: string; stdout?: string }) => {
        if (e.signal !== "SIGKILL") throw e;
        return { stdout: e.stdout ?? "" };
      });
      // the first kill lands inside the run for sure (the later ones, measured, did too)
      if (afterMs === 0) expect(out.stdout).not.toContain("done");
      const backend = createDuckdbBackend({ path: file });
      await backend.init();
      try {
        const table = (await backend.schema()).sources["crash.src"]!.table;
        const stats = (await backend.sourceStats()).find((s) => s.source === "crash.src")!;
        const rows = await backend.execute(
          handQuery(
            `SELECT count(*) FILTER (WHERE id LIKE 'new-%') AS kept, count(DISTINCT id) AS ids, count(*) AS n,
               (SELECT count(*) FROM duckdb_indexes() WHERE table_name = '${table}' AND index_name = '${table}__timestamp') AS indexed
             FROM "${table}"`,
            ["kept", "ids", "n", "indexed"].map((name) => ({
              name,
              type: { kind: "scalar", type: "INT64" },
            })),
          ),
          [],
          { maxRows: 10, timeoutMs: 30_000 },
        );
        const r = rows.rows[0] as { kept: number; ids: number; n: number; indexed: number };
        expect(Number(r.kept)).toBe(PER_DAY);
        expect(Number(r.ids)).toBe(Number(r.n));
        expect([PER_DAY, 2 * PER_DAY]).toContain(Number(r.n));
        expect(Number(r.indexed)).toBe(1);
        expect(stats.events).toBe(Number(r.n));
        await backend.applyRetention({ defaultDays: 30, perSource: {} }, NOW);
        expect((await backend.sourceStats()).find((s) => s.source === "crash.src")?.events).toBe(PER_DAY);
      } finally {
        await backend.close();
      }
    },
    120_000,
  );
});
