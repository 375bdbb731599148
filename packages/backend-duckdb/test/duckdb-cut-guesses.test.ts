import { join } from "node:path";
import type { DuckDBInstance } from "@duckdb/node-api";
import {
  type Backend,
  bindRequestParams,
  type CompiledQuery,
  compileEndpoint,
  type EndpointDefinition,
  logEventFromJson,
} from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CutGuesses, cutGuessKey } from "../src/duckdb-cut-guesses.ts";
import { executeOnDuckdb } from "../src/duckdb-executor.ts";
import { createDuckdbBackend } from "../src/index.ts";
import { tempDir } from "./helpers.ts";

// A cut-first query tried first with the cut of its last run (CutGuesses): the guess must never
// change a row — whatever was written, deleted or tied since — and must spare the cut's scan when
// it holds.

const tmp = tempDir("cut-guesses");
const file = join(tmp.dir, "qes.duckdb");
let backend: Backend;
const run = { maxRows: 1000, timeoutMs: 10_000 };
const SOURCE = "guess.src";
const table = "`guess.src`";
const BASE = Date.UTC(2025, 0, 15);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const NOW = BigInt(BASE + 40 * DAY) * 1000n;

/** a seeded generator, so that a failure replays */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

let serial = 0;
/** events of `projects` at minutes drawn from [from, to) — few distinct minutes, so many ties */
function events(n: number, from: number, to: number, rnd: () => number, projects = ["a", "b", "c"]) {
  return Array.from({ length: n }, () => {
    const minute = from + Math.floor(rnd() * (to - from));
    return {
      id: `e${String(serial++).padStart(6, "0")}`,
      timestamp: new Date(BASE + minute * MINUTE).toISOString(),
      project: projects[Math.floor(rnd() * projects.length)]!,
      event_message: `m${Math.floor(rnd() * 7)}`,
    };
  });
}

async function ingest(rows: object[]): Promise<void> {
  await backend.ingest([
    { source: SOURCE, events: rows.map((r, i) => logEventFromJson(r as never, SOURCE, NOW, `event ${i}`)) },
  ]);
}

let compiledSchema: Awaited<ReturnType<Backend["schema"]>> | undefined;
async function compile(sql: string): Promise<CompiledQuery> {
  return (await compileWithParams(sql, [])).compiled;
}

/** `sql` with string parameters `params` (endpoint parameters, as a request binds them) */
async function compileWithParams(
  sql: string,
  params: string[],
): Promise<{ endpoint: EndpointDefinition; compiled: CompiledQuery }> {
  const endpoint: EndpointDefinition = {
    id: "00000000-0000-4000-8000-00000000c0f2",
    name: "cut-guesses",
    sql,
    sqlFile: "cut-guesses.sql",
    maxRows: 1000,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params: Object.fromEntries(params.map((name) => [name, { required: false, kind: "string" as const }])),
    version: sql,
  };
  compiledSchema = await backend.schema();
  return {
    endpoint,
    compiled: compileEndpoint(endpoint, { schema: compiledSchema, dialect: backend.dialect }),
  };
}

/** the same query in one statement: no cut-first plan, so no guess */
function oneStep(q: CompiledQuery): CompiledQuery {
  const { cutFirst: _two, ...rest } = q;
  return rest;
}

beforeAll(async () => {
  backend = createDuckdbBackend({ path: file });
  await backend.init();
  await ingest(events(400, 0, 60, random(1)));
});
afterAll(async () => {
  await backend.close();
  tmp.cleanup();
});

describe("DuckDB: a cut-first query tried with its last cut", () => {
  it("answers as the one-statement form through new, older, tied and deleted rows", async () => {
    const rnd = random(7);
    const queries = [
      `select id, event_message from ${table} where project = 'a' order by timestamp desc limit 25`,
      `select id from ${table} where project = 'b' order by timestamp desc limit 1`,
      `select id, project from ${table} order by timestamp desc limit 60`,
      `select id from ${table} where project = 'c' order by timestamp limit 20`,
      `with l as (select id, timestamp from ${table} where event_message != 'm3') ` +
        `select id from l order by timestamp desc limit 40`,
      // more rows than the project has at some points: never a guess that is short
      `select id from ${table} where project = 'rare' order by timestamp desc limit 5`,
    ];
    // count the guesses tried, so that the test shows it exercised them
    const guesses = (backend as unknown as { cutGuesses: CutGuesses }).cutGuesses;
    const guess = guesses.guess.bind(guesses);
    let tried = 0;
    guesses.guess = (key, t) => {
      const value = guess(key, t);
      if (value !== undefined) tried++;
      return value;
    };
    let newest = 60;
    let oldest = 0;
    for (let step = 0; step < 40; step++) {
      const what = Math.floor(rnd() * 5);
      if (what === 0) {
        // newer rows, some on the newest minute already stored (ties at a guess's value)
        await ingest(events(1 + Math.floor(rnd() * 30), newest - 1, newest + 3, rnd));
        newest += 3;
      } else if (what === 1) {
        // rows older than every guess: they change no answer of a newest-first query
        await ingest(events(1 + Math.floor(rnd() * 30), oldest - 5, oldest, rnd));
        oldest -= 5;
      } else if (what === 2) {
        await ingest(events(1 + Math.floor(rnd() * 3), oldest, newest, rnd, ["rare"]));
      } else if (what === 3 && step > 20) {
        // retention: the oldest day goes, so a guess may now be past the true cut of an
        // oldest-first query, and short for a newest-first one
        const minutes = BigInt(Math.ceil(oldest / (24 * 60)) + 1) * BigInt(DAY) * 1000n;
        await backend.applyRetention({ defaultDays: 1, perSource: {} }, BigInt(BASE) * 1000n + minutes);
      }
      for (const sql of queries) {
        const q = await compile(sql);
        expect(q.cutFirst, sql).toBeDefined();
        const twice = [await backend.execute(q, [], run), await backend.execute(q, [], run)];
        const plain = await backend.execute(oneStep(q), [], run);
        expect(twice[0]!.rows, `step ${step}: ${sql}`).toEqual(plain.rows);
        expect(twice[1]!.rows, `step ${step}, again: ${sql}`).toEqual(plain.rows);
      }
    }
    expect(tried).toBeGreaterThan(200);
  });

  it("skips the cut's scan when the last cut still gives the LIMIT's rows", async () => {
    const q = await compile(`select id from ${table} where project = 'a' order by timestamp desc limit 10`);
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const guesses = new CutGuesses();
    const conn = await instance.connect();
    try {
      const first = await executeOnDuckdb(conn, q, [], run, guesses);
      expect(first.rows).toHaveLength(10);
      expect(guesses.guess(cutGuessKey(q.cutFirst!.sql, []), q.cutFirst!.table)).toBeDefined();
      // a cut step that fails if it runs: the guess answers without it
      const noCut: CompiledQuery = {
        ...q,
        cutFirst: { ...q.cutFirst!, cut: "SELECT error('the cut ran')" },
      };
      expect((await executeOnDuckdb(conn, noCut, [], run, guesses)).rows).toEqual(first.rows);
      // without a guess it runs, and the failure is the query's
      await expect(executeOnDuckdb(conn, noCut, [], run, new CutGuesses())).rejects.toThrow(/the cut ran/);
      // a guess that is past the true cut returns too few rows: the cut is computed after all
      const late = new CutGuesses();
      late.remember(cutGuessKey(q.cutFirst!.sql, []), q.cutFirst!.table, "2999-01-01 00:00:00");
      expect((await executeOnDuckdb(conn, q, [], run, late)).rows).toEqual(first.rows);
      late.remember(cutGuessKey(q.cutFirst!.sql, []), q.cutFirst!.table, "2999-01-01 00:00:00");
      await expect(executeOnDuckdb(conn, noCut, [], run, late)).rejects.toThrow(/the cut ran/);
    } finally {
      conn.closeSync();
    }
  });

  it("keeps the guess of a query that reads the request's clock, whose value changes each request", async () => {
    const q = await compile(
      `select id from ${table} where project = 'a' and timestamp > timestamp_sub(current_timestamp(), interval 400 day) order by timestamp desc limit 10`,
    );
    expect(q.params.map((p) => p.kind)).toEqual(["now"]);
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const guesses = new CutGuesses();
    const conn = await instance.connect();
    try {
      const first = await executeOnDuckdb(conn, q, ["2025-03-01 00:00:00"], run, guesses);
      expect(first.rows).toHaveLength(10);
      const noCut: CompiledQuery = { ...q, cutFirst: { ...q.cutFirst!, cut: "SELECT error('the cut ran')" } };
      // a second later by the clock: the last cut still answers
      const again = await executeOnDuckdb(conn, noCut, ["2025-03-01 00:00:01"], run, guesses);
      expect(again.rows).toEqual(
        (await executeOnDuckdb(conn, oneStep(q), ["2025-03-01 00:00:01"], run)).rows,
      );
    } finally {
      conn.closeSync();
    }
  });

  it("runs the one-statement form when the rows past the cut are too many to hold", async () => {
    // 3,000 newer rows of other projects over 5 old rows of one: the cut is the oldest of the 5
    await ingest(events(5, -3000, -2990, random(3), ["scarce"]));
    await ingest(events(3000, 0, 60, random(4), ["x", "y"]));
    const q = await compile(
      `select id from ${table} where project = 'scarce' order by timestamp desc limit 5`,
    );
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const guesses = new CutGuesses();
    const conn = await instance.connect();
    try {
      const want = (await executeOnDuckdb(conn, oneStep(q), [], run)).rows;
      expect(want).toHaveLength(5);
      // the cut-first select fails if it runs: it must not, neither now nor when remembered
      const noMain: CompiledQuery = { ...q, cutFirst: { ...q.cutFirst!, sql: "SELECT error('main ran')" } };
      expect((await executeOnDuckdb(conn, noMain, [], run, guesses)).rows).toEqual(want);
      expect(guesses.guess(cutGuessKey(noMain.cutFirst!.sql, []), q.cutFirst!.table)).toBeNull();
      const noCut: CompiledQuery = {
        ...noMain,
        cutFirst: { ...noMain.cutFirst!, cut: "SELECT error('cut ran')" },
      };
      expect((await executeOnDuckdb(conn, noCut, [], run, guesses)).rows).toEqual(want);
      // and through the backend, the same rows
      expect((await backend.execute(q, [], run)).rows).toEqual(want);
    } finally {
      conn.closeSync();
    }
  });

  it("keeps one cut per set of values: the same SQL with other parameters answers for its own", async () => {
    // a parameter in the WHERE changes the cut; one only in the select list does not reach it
    const { endpoint, compiled: q } = await compileWithParams(
      `select id, @tag as tag, timestamp from ${table} where project = @p order by timestamp desc limit 7`,
      ["p", "tag"],
    );
    expect(q.cutFirst).toBeDefined();
    for (const [p, tag] of [
      ["a", "x"],
      ["b", "y"],
      ["a", "z"],
      ["c", "x"],
      ["absent", "x"],
      ["a", "x"],
      ["b", "x"],
    ] as const) {
      const values = bindRequestParams(endpoint, q, { p, tag }, NOW).values;
      const want = await backend.execute(oneStep(q), values, run);
      expect(await backend.execute(q, values, run), `${p} ${tag}`).toEqual(want);
      expect(await backend.execute(q, values, run), `${p} ${tag}, again`).toEqual(want);
    }
  });

  it("cut short by maxRows below the LIMIT, a guess past the true cut gives the same first rows", async () => {
    // the guess returns fewer than the LIMIT's rows but more than maxRows: those are still the
    // first rows of the order (every row past the guess comes before every other row)
    const q = await compile(`select id, timestamp from ${table} order by timestamp desc limit 200`);
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const conn = await instance.connect();
    const small = { maxRows: 7, timeoutMs: 10_000 };
    try {
      const want = await executeOnDuckdb(conn, oneStep(q), [], small);
      expect(want.rowLimitReached).toBe(true);
      const newest = (await executeOnDuckdb(conn, oneStep(q), [], run)).rows;
      // guesses from the 3rd to the 150th newest row's time, and past the newest
      for (const i of [2, 6, 7, 8, 40, 150]) {
        const guesses = new CutGuesses();
        const at = new Date(Number(newest[i]!.timestamp) / 1000)
          .toISOString()
          .replace("T", " ")
          .replace("Z", "");
        guesses.remember(cutGuessKey(q.cutFirst!.sql, []), q.cutFirst!.table, at);
        expect(await executeOnDuckdb(conn, q, [], small, guesses), `row ${i}`).toEqual(want);
      }
    } finally {
      conn.closeSync();
    }
  });

  it("answers as the one-statement form while rows are written concurrently", async () => {
    const q = await compile(
      `select id, project from ${table} where project in ('a', 'b') order by timestamp desc limit 20`,
    );
    const rnd = random(11);
    const answers: Promise<{ rows: unknown[] }>[] = [];
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 25; i++) {
      writes.push(ingest(events(40, 60 + i, 62 + i, rnd)));
      answers.push(backend.execute(q, [], run));
    }
    await Promise.all(writes);
    // each answer is one snapshot's: LIMIT's worth of rows, no id twice
    for (const answer of await Promise.all(answers)) {
      expect(answer.rows).toHaveLength(20);
      expect(new Set(answer.rows.map((r) => (r as { id: string }).id)).size).toBe(20);
    }
    const want = await backend.execute(oneStep(q), [], run);
    expect(await backend.execute(q, [], run)).toEqual(want);
    expect(await backend.execute(q, [], run)).toEqual(want);
  });

  it("reads back the cut of the first and last instants a source can hold", async () => {
    // the cut travels as DuckDB's text of the timestamp and is read back by the next statement
    const edge = (timestamp: string) => ({
      id: `e${String(serial++).padStart(6, "0")}`,
      timestamp,
      project: "edge",
    });
    await ingest([
      edge("0001-01-01T00:00:00Z"),
      edge("0001-01-01T00:00:00.000001Z"),
      edge("1969-12-31T23:59:59.5Z"),
      edge("9999-12-31T23:59:59.999999Z"),
      edge("9999-12-31T23:59:59.999999Z"),
    ]);
    for (const sql of [
      `select id, timestamp from ${table} where project = 'edge' order by timestamp desc limit 1`,
      `select id, timestamp from ${table} where project = 'edge' order by timestamp desc limit 3`,
      `select id, timestamp from ${table} where project = 'edge' order by timestamp limit 1`,
      `select id, timestamp from ${table} where project = 'edge' order by timestamp limit 2`,
      `select id, timestamp from ${table} where project = 'edge' order by timestamp limit 0`,
    ]) {
      const q = await compile(sql);
      const want = await backend.execute(oneStep(q), [], run);
      expect(await backend.execute(q, [], run), sql).toEqual(want);
      expect(await backend.execute(q, [], run), `${sql}, again`).toEqual(want);
    }
  });

  it("forgets a cut once its table took more than 1,024 rows since, or on a load or retention", () => {
    const guesses = new CutGuesses();
    guesses.remember("k", "t", "2025-01-15 00:00:00");
    guesses.wrote("t", 1000);
    guesses.wrote("other", 5000);
    expect(guesses.guess("k", "t")).toBe("2025-01-15 00:00:00");
    // a key remembered for another table is not that table's
    expect(guesses.guess("k", "other")).toBeUndefined();
    guesses.remember("k", "t", "2025-01-15 00:00:00");
    guesses.wrote("t", 1025);
    expect(guesses.guess("k", "t")).toBeUndefined();
    guesses.remember("k", "t", "2025-01-16 00:00:00");
    expect(guesses.guess("k", "t")).toBe("2025-01-16 00:00:00");
    guesses.clear();
    expect(guesses.guess("k", "t")).toBeUndefined();
  });

  it("keeps a bounded number of cuts", () => {
    const guesses = new CutGuesses();
    for (let i = 0; i < 5000; i++) guesses.remember(`key ${i} ${"x".repeat(2000)}`, "t", "v");
    let kept = 0;
    for (let i = 0; i < 5000; i++) if (guesses.guess(`key ${i} ${"x".repeat(2000)}`, "t")) kept++;
    expect(kept).toBeGreaterThan(0);
    expect(kept * 2000).toBeLessThanOrEqual(8 * 1024 * 1024);
  });
});
