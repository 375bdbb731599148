import type { Backend, WireValue } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";
import type { SqlCase } from "./cases/case.ts";
import { ALL_CASES } from "./cases/index.ts";
import { EVENTS } from "./events.ts";

// The table-driven SQL case suite of issue 4: every case runs on every backend over the same
// hand-made events (./events.ts). Expected rows are literals written from BigQuery's documented
// semantics and DESIGN.md §3–§4, each case naming the rule it checks (./cases).

type Row = Record<string, WireValue>;

/** JSON text with object keys sorted: a canonical key for comparing rows as multisets. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function sortRows(rows: Row[]): Row[] {
  return [...rows].sort((a, b) => {
    const x = canonical(a);
    const y = canonical(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

function isOrdered(c: SqlCase): boolean {
  return c.ordered ?? /\border\s+by\b/i.test(c.sql);
}

describe("the SQL case table", () => {
  it("has at least 300 cases with unique names, each citing its rule", () => {
    expect(ALL_CASES.length).toBeGreaterThanOrEqual(300);
    const names = ALL_CASES.map((c) => c.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(ALL_CASES.filter((c) => c.rule.trim() === "").map((c) => c.name)).toEqual([]);
  });
});

describe.each(BACKENDS)("SQL cases on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, async (b) => {
    backend = b;
    for (const [source, lines] of Object.entries(EVENTS)) {
      await b.load(source, lines, { nowMicros: 1736942400000000n });
    }
  });

  it.each(ALL_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const run = () =>
      runSql(backend, c.sql, {
        ...(c.params ? { params: c.params } : {}),
        ...(c.now ? { now: c.now } : {}),
      });
    if (!Array.isArray(c.expect)) {
      await expect(run(), `${c.rule}\n${c.sql}`).rejects.toMatchObject({
        code: c.expect.error,
        ...(c.expect.message ? { message: expect.stringMatching(c.expect.message) } : {}),
      });
      return;
    }
    const rows = await run();
    if (isOrdered(c)) expect(rows, `${c.rule}\n${c.sql}`).toEqual(c.expect);
    else expect(sortRows(rows), `${c.rule}\n${c.sql}`).toEqual(sortRows(c.expect));
  });
});
