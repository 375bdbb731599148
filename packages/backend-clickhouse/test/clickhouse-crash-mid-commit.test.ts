import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const tmp = mkdtempSync(join(tmpdir(), "qes-chdb-crash-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const PACKAGE = new URL("..", import.meta.url).pathname;
const INDEX = new URL("../src/index.ts", import.meta.url).pathname;
const CORE = new URL("../../core/src/index.ts", import.meta.url).pathname;
const CLIENT = createRequire(join(PACKAGE, "package.json")).resolve("@clickhouse/client");

/**
 * One process's ingest of `bodies` (by default three events, two with an id, one whose id derives
 * from its content) to `source`; with `killAfter`, the process SIGKILLs itself right after the first command whose SQL
 * matches it has run (the engine's own client, the real statement: what a kill at that moment
 * leaves on disk). Prints the staging tables found once the store is open, the ingest's results
 * and then the rows the source's table holds.
 */
const THREE_EVENTS = [0, 1, 2].map((i) => ({
  ...(i > 0 ? { id: `crash-${i}` } : {}),
  timestamp: "2026-01-15T09:00:00Z",
  event_message: `e${i}`,
  [`f${i}`]: i,
}));

function childScript(
  path: string,
  source: string,
  killAfter?: string,
  bodies: readonly Record<string, unknown>[] = THREE_EVENTS,
): string {
  return `
const { createClient } = await import(${JSON.stringify(CLIENT)});
const proto = Object.getPrototypeOf(createClient({}));
const command = proto.command;
proto.command = async function (p) {
  const r = await command.call(this, p);
  if (${JSON.stringify(killAfter ?? null)} !== null && p.query.includes(${JSON.stringify(killAfter ?? "")}))
    process.kill(process.pid, "SIGKILL");
  return r;
};
const { createClickhouseBackend } = await import(${JSON.stringify(INDEX)});
const { logEventFromJson } = await import(${JSON.stringify(CORE)});
const b = createClickhouseBackend({ path: ${JSON.stringify(path)} });
await b.init();
const count = (sql) =>
  b.execute(
    { sql, params: [], columns: [{ name: "n", type: { kind: "scalar", type: "STRING" } }], schemaVersion: 0, dialect: "clickhouse", patternParams: [] },
    [],
    { maxRows: 1, timeoutMs: 30_000 },
  ).then((r) => r.rows[0].n);
console.log(JSON.stringify({ staging: await count("SELECT toString(count()) AS n FROM system.tables WHERE startsWith(name, 'qes_staging_')") }));
const events = ${JSON.stringify(bodies)}.map((e) => logEventFromJson(e, ${JSON.stringify(source)}, 1_768_467_600_000_000n));
console.log(JSON.stringify(await b.ingest([{ source: ${JSON.stringify(source)}, events }]).catch((e) => String(e))));
const table = (await b.schema()).sources[${JSON.stringify(source)}].table;
console.log(JSON.stringify({ rows: await count("SELECT toString(count()) AS n FROM " + table) }));
await b.close();
`;
}

async function run(script: string): Promise<{ signal?: string; stdout: string }> {
  const file = join(tmp, `child-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, script);
  return promisify(execFile)(process.execPath, ["--import", "tsx", file], { cwd: PACKAGE }).then(
    ({ stdout }) => ({ stdout }),
    (e: { signal?: string; stdout: string }) => ({ signal: e.signal, stdout: e.stdout }),
  );
}

/**
 * Acknowledged means durable, and a retry stores nothing twice (DESIGN.md §10), whatever moment of
 * a commit a SIGKILL cuts. ClickHouse has no transaction over the steps of one: the source is made
 * or widened, rows are attached, the schema is stored. A process killed after the rows of a new
 * source's first request were attached and before its schema was stored left a table the restarted
 * process did not know: the shipper's retry took the source for new, skipped the check of stored
 * ids, and every event was stored twice.
 */
describe("embedded ClickHouse killed in the middle of an ingest commit", () => {
  it.each([
    ["a new source, after its rows were attached", "crash.new", "ATTACH PARTITION"],
    ["a new source, after its table was made", "crash.made", "CREATE TABLE IF NOT EXISTS"],
  ])(
    "%s: the retry stores each event once",
    async (_what, source, killAfter) => {
      const path = join(tmp, `store-${Math.random().toString(36).slice(2)}`);
      const killed = await run(childScript(path, source, killAfter));
      expect(killed.signal).toBe("SIGKILL");
      const retried = await run(childScript(path, source));
      expect(retried.signal).toBeUndefined();
      const [, , rows] = retried.stdout.trim().split("\n");
      expect(JSON.parse(rows as string)).toEqual({ rows: "3" });
    },
    120_000,
  );

  /**
   * A call's staging table holds its rows until the call ends and drops it; a process killed
   * before that left it, rows and all, and nothing ever removed it: disk lost for good at each crash.
   */
  it("the staging table of the killed call is dropped when the store opens again", async () => {
    const path = join(tmp, `store-${Math.random().toString(36).slice(2)}`);
    const killed = await run(childScript(path, "crash.staged", "ATTACH PARTITION"));
    expect(killed.signal).toBe("SIGKILL");
    const reopened = await run(childScript(path, "crash.staged"));
    expect(reopened.signal).toBeUndefined();
    const [found] = reopened.stdout.trim().split("\n");
    expect(JSON.parse(found as string)).toEqual({ staging: "0" });
  }, 120_000);

  /**
   * A source widened by a call killed after its `ADD COLUMN` (or `MODIFY COLUMN`) and before its
   * schema was stored kept a column the schema did not know (or knew with another type): every
   * later commit to it failed ("Tables have different structure" at the attach, a 500) until that
   * very request came again, and a new column's name went to the next new field.
   */
  it.each([
    ["added", "ADD COLUMN", { y: "text" }, [{ x: 2 }, { z: 5 }]],
    ["retyped", "MODIFY COLUMN", { x: "text" }, [{ x: 2 }, { x: 3 }]],
  ] as const)(
    "a column %s by the killed call's widening does not refuse later ingest",
    async (_how, killAfter, widening, later) => {
      const path = join(tmp, `store-${Math.random().toString(36).slice(2)}`);
      const at = "2026-01-15T09:00:00Z";
      const made = await run(childScript(path, "crash.wide", undefined, [{ id: "a", timestamp: at, x: 1 }]));
      expect(made.signal).toBeUndefined();
      const killed = await run(
        childScript(path, "crash.wide", killAfter, [{ id: "b", timestamp: at, ...widening }]),
      );
      expect(killed.signal).toBe("SIGKILL");
      for (const [k, body] of later.entries()) {
        const next = await run(
          childScript(path, "crash.wide", undefined, [{ id: `c${k}`, timestamp: at, ...body }]),
        );
        expect(next.signal).toBeUndefined();
        const [, result, rows] = next.stdout.trim().split("\n");
        expect(JSON.parse(result as string)).toEqual([{ source: "crash.wide", stored: 1, duplicates: 0 }]);
        expect(JSON.parse(rows as string)).toEqual({ rows: String(k + 2) });
      }
    },
    120_000,
  );
});
