import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { compileSql, tempDir } from "./helpers.ts";

const tmp = tempDir("crash-widening");
afterAll(() => tmp.cleanup());

const NOW = 1_736_931_600_000_000n;

/**
 * DuckDB 1.5 cannot replay `ALTER COLUMN … TYPE … USING <expression>` from its WAL
 * (duckdb/duckdb#20543): a process killed after an acknowledged widening and before the next
 * checkpoint left a store nobody could open ("Failure while replaying WAL file: Calling
 * DatabaseManager::GetDefaultDatabase with no default database set"). Each widening below is one
 * whose values are rewritten by such an expression: a number in a record widened to STRING (its
 * JSON text), a FLOAT64 column to STRING (core's spelling), a record to records.
 */
describe("a DuckDB process killed right after an acknowledged widening", () => {
  it.each([
    [
      "ingest",
      "a number in a record that then comes as text",
      [{ metadata: { port: 5432.5 } }, { metadata: { port: "x" } }],
    ],
    ["ingest", "a FLOAT64 field that then comes as text", [{ ratio: 0.25 }, { ratio: "n/a" }]],
    [
      "load",
      "a record that then comes as an array of records",
      [{ metadata: { tags: { a: 1 } } }, { metadata: { tags: [{ a: 2 }] } }],
    ],
  ] as const)(
    "%s: %s — the store opens again with every event",
    async (path, _what, bodies) => {
      const file = join(tmp.dir, `${path}-${bodies.length}-${Math.random().toString(36).slice(2)}.duckdb`);
      const index = new URL("../src/index.ts", import.meta.url).pathname;
      const core = new URL("../../core/src/index.ts", import.meta.url).pathname;
      const events = bodies.map((b, i) => ({
        id: `w${i}`,
        timestamp: "2025-01-15T09:00:00Z",
        event_message: `e${i}`,
        ...b,
      }));
      const script = join(tmp.dir, `widen-${Math.random().toString(36).slice(2)}.mts`);
      // each event its own call, so the second one widens what the first stored; then SIGKILL,
      // no close and no checkpoint of its own
      const store =
        path === "ingest"
          ? `for (const e of ${JSON.stringify(events)}) await b.ingest([{ source: "crash.src", events: [logEventFromJson(e, "crash.src", ${NOW}n)] }]);`
          : `for (const e of ${JSON.stringify(events)}) await b.load("crash.src", [JSON.stringify(e)]);`;
      writeFileSync(
        script,
        `import { createDuckdbBackend } from ${JSON.stringify(index)};\n` +
          `import { logEventFromJson } from ${JSON.stringify(core)};\n` +
          `const b = createDuckdbBackend({ path: ${JSON.stringify(file)} });\nawait b.init();\n${store}\n` +
          `process.kill(process.pid, "SIGKILL");\n`,
      );
      const killed = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
        cwd: new URL("..", import.meta.url).pathname,
      }).then(
        () => "exited",
        (e: { signal?: string }) => e.signal,
      );
      expect(killed).toBe("SIGKILL");
      const reopened = createDuckdbBackend({ path: file });
      await reopened.init();
      try {
        const rows = await reopened.execute(
          await compileSql(reopened, "select id from `crash.src` order by id"),
          [],
          {
            maxRows: 10,
            timeoutMs: 10_000,
          },
        );
        expect(rows.rows).toEqual(events.map((e) => ({ id: e.id })));
      } finally {
        await reopened.close();
      }
    },
    60_000,
  );
});
