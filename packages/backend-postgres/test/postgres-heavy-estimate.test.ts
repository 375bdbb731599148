import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { freshBackend, handQuery, scalar, tableOf } from "./helpers.ts";

/**
 * Issue 12: the planner's estimate of a query before it runs (`estimateHeavy`), which admission
 * control asks so that a new caller's first cross join does not take a core for the query
 * timeout before its caller has any engine time on record.
 */
describe("estimateHeavy (EXPLAIN's total cost against QES_POSTGRES_HEAVY_QUERY_COST)", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;
  let table: string;
  beforeAll(async () => {
    ({ backend, dispose } = await freshBackend("heavy", { heavyQueryCost: 1_000_000 }));
    const lines = Array.from({ length: 2_000 }, (_, i) =>
      JSON.stringify({ id: `e${i}`, timestamp: 1_736_942_400_000_000 + i, event_message: `m${i}` }),
    );
    await backend.load("heavy.logs", lines);
    table = await tableOf(backend, "heavy.logs");
  });
  afterAll(async () => {
    await dispose?.();
  });

  const n = [scalar("n", "INT64")];
  const opts = { timeoutMs: 5_000 };

  it("says heavy for a three-way cross join and not for a scan or a filtered read, running none of them", async () => {
    const before = backend.executedQueries();
    const cross = handQuery(
      `select count(*) as n from ${table} a, ${table} b, ${table} c where length(a.id) + length(b.id) + length(c.id) > $1`,
      n,
      [["i", "INT64"]],
    );
    expect(await backend.estimateHeavy(cross, ["5"], opts)).toBe(true);
    expect(await backend.estimateHeavy(handQuery(`select count(*) as n from ${table}`, n), [], opts)).toBe(
      false,
    );
    const filtered = handQuery(`select count(*) as n from ${table} where id = $1`, n, [["id", "STRING"]]);
    expect(await backend.estimateHeavy(filtered, ["e1"], opts)).toBe(false);
    // estimates are plans, not runs: nothing counted as executed
    expect(backend.executedQueries()).toBe(before);
  });

  it("leaves a query that fails while planning to execute, which reports it as the query's error", async () => {
    // PostgreSQL folds 1/0 while planning: EXPLAIN fails as the query would
    const failing = handQuery("select 1 / 0 as n", n);
    expect(await backend.estimateHeavy(failing, [], opts)).toBe(false);
    await expect(backend.execute(failing, [], { maxRows: 10, timeoutMs: 5_000 })).rejects.toMatchObject({
      code: "sql_invalid",
    });
  });

  it("a query whose planning alone outlasts the time limit is the query's timeout, not planned again to run", async () => {
    // eight-way joins, each planned on its own: seconds of planning within the token limit
    const branch = (i: number) => {
      const t = "abcdefgh".split("").map((x) => `${x}${i}`);
      const joins = t.slice(1).map((x, j) => `${t[j]}.id = ${x}.id`);
      return `select count(*) as n from ${t.map((x) => `${table} ${x}`).join(", ")} where ${joins.join(" and ")}`;
    };
    const planned = handQuery(Array.from({ length: 150 }, (_, i) => branch(i)).join(" union all "), n);
    const before = backend.executedQueries();
    await expect(backend.estimateHeavy(planned, [], { timeoutMs: 200 })).rejects.toMatchObject({
      code: "query_timeout",
    });
    expect(backend.executedQueries()).toBe(before);
  });

  it("rejects with the signal's reason once the request is gone", async () => {
    const gone = new AbortController();
    gone.abort(new Error("client gone"));
    const q = handQuery(`select count(*) as n from ${table}`, n);
    await expect(backend.estimateHeavy(q, [], { ...opts, signal: gone.signal })).rejects.toThrow(
      "client gone",
    );
  });
});

describe("QES_POSTGRES_HEAVY_QUERY_COST = 0", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ backend, dispose } = await freshBackend("heavyoff", { heavyQueryCost: 0 }));
  });
  afterAll(async () => {
    await dispose?.();
  });

  it("never says heavy", async () => {
    const q = handQuery(
      "select count(*) as n from generate_series(1, 100000) a, generate_series(1, 100000) b, generate_series(1, 100000) c",
      [scalar("n", "INT64")],
    );
    expect(await backend.estimateHeavy(q, [], { timeoutMs: 5_000 })).toBe(false);
  });
});
