import { type Backend, type BoundValues, type CompiledQuery, compileEndpoint } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddedMaxMemoryBytes } from "../src/clickhouse-config.ts";
import { DEADLINE_GRACE_MS, paramName } from "../src/clickhouse-executor.ts";
import { setParamsSql } from "../src/clickhouse-session-params.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

let backend: Backend;
let limited: Backend;
/** no per-query memory bound (`maxMemoryBytes: 0`): what lies past it must hold on its own */
let unbounded: Backend;
const STRING = { kind: "scalar", type: "STRING" } as const;
const INT64 = { kind: "scalar", type: "INT64" } as const;
const FLOAT64 = { kind: "scalar", type: "FLOAT64" } as const;

beforeAll(async () => {
  backend = createClickhouseBackend({ path: chdbTestPath(), database: uniqueDatabase() });
  await backend.init();
  limited = createClickhouseBackend({
    path: chdbTestPath(),
    database: uniqueDatabase(),
    maxMemoryBytes: 20 * 1024 * 1024,
  });
  await limited.init();
  unbounded = createClickhouseBackend({
    path: chdbTestPath(),
    database: uniqueDatabase(),
    maxMemoryBytes: 0,
  });
  await unbounded.init();
});
afterAll(async () => {
  await backend.close();
  await limited.close();
  await unbounded.close();
});

/** A query that runs ~20 s unless stopped (one row per block, 0.1 s per row). */
const SLOW = handQuery(
  "SELECT sum(s) AS s FROM (SELECT sleepEachRow(0.1) AS s FROM numbers(200) SETTINGS max_block_size = 1)",
  [{ name: "s", type: INT64 }],
);

/**
 * Starts `q`, aborts it (the client goes away) once the engine runs it, and returns how many
 * queries with `marker` the engine still runs once they are gone or 10 s have passed.
 */
async function abandonWhileRunning(q: CompiledQuery, values: BoundValues, marker: string): Promise<number> {
  const ac = new AbortController();
  const pending = backend.execute(q, values, { maxRows: 10, timeoutMs: 60_000, signal: ac.signal });
  while ((await running(marker)) === 0) await new Promise((r) => setTimeout(r, 20));
  ac.abort(new Error("client went away"));
  await expect(pending).rejects.toThrow("client went away");
  const deadline = Date.now() + 10_000;
  while ((await running(marker)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return running(marker);
}

async function running(marker: string): Promise<number> {
  const r = await backend.execute(
    handQuery(
      `SELECT count() AS n FROM system.processes WHERE query LIKE '%${marker}%' AND query NOT LIKE '%system.processes%'`,
      [{ name: "n", type: INT64 }],
    ),
    [],
    { maxRows: 1, timeoutMs: 5000 },
  );
  return r.rows[0]!.n as number;
}

describe("ClickHouse execution (embedded chDB)", () => {
  it("binds parameters as query parameters: text arrives exactly, NULL as NULL, nothing is interpolated", async () => {
    const tricky = "it's \\ a '); DROP TABLE qes_schema; --\n{p2:String}";
    const r = await backend.execute(
      handQuery("SELECT {p1:Nullable(String)} AS s, {p2:Nullable(String)} IS NULL AS isnull", [
        { name: "s", type: STRING },
        { name: "isnull", type: { kind: "scalar", type: "BOOL" } },
      ]),
      [tricky, null],
      { maxRows: 10, timeoutMs: 5000 },
    );
    expect(r.rows).toEqual([{ s: tricky, isnull: true }]);
  });

  it("a modest query runs on one thread; others on the engine's threads", async () => {
    const threads = async (modest: boolean) =>
      (
        await backend.execute(
          handQuery("SELECT toString(getSetting('max_threads')) AS t", [{ name: "t", type: STRING }]),
          [],
          { maxRows: 1, timeoutMs: 5000, modest },
        )
      ).rows[0]!.t;
    expect(await threads(true)).toBe("1");
    expect(Number(await threads(false))).toBeGreaterThan(1);
  });

  it("cuts the result at the row cap and says so, also for a UNION", async () => {
    const q = handQuery("SELECT number AS n FROM numbers(100000)", [{ name: "n", type: INT64 }]);
    const r = await backend.execute(q, [], { maxRows: 10, timeoutMs: 5000 });
    expect(r.rows).toHaveLength(10);
    expect(r.rowLimitReached).toBe(true);
    const u = handQuery(
      "SELECT number AS n FROM numbers(50000) UNION ALL SELECT number AS n FROM numbers(50000)",
      [{ name: "n", type: INT64 }],
    );
    const ru = await backend.execute(u, [], { maxRows: 7, timeoutMs: 5000 });
    expect(ru.rows).toHaveLength(7);
    expect(ru.rowLimitReached).toBe(true);
    const exact = await backend.execute(
      handQuery("SELECT number AS n FROM numbers(7) ORDER BY n DESC", [{ name: "n", type: INT64 }]),
      [],
      { maxRows: 7, timeoutMs: 5000 },
    );
    expect(exact.rows.map((x) => x.n)).toEqual([6, 5, 4, 3, 2, 1, 0]);
    expect(exact.rowLimitReached).toBe(false);
  });

  it("answers from a read-ahead unless its retry flag is set, then from the query itself", async () => {
    const n = [{ name: "n", type: INT64 }];
    const withAhead = (flag: number) => ({
      ...handQuery("SELECT number AS n FROM numbers(3)", n),
      readAhead: `SELECT number + 10 AS n, ${flag} AS __retry FROM numbers(2)`,
    });
    // the flag column is not part of the rows
    expect((await backend.execute(withAhead(0), [], { maxRows: 10, timeoutMs: 5000 })).rows).toEqual([
      { n: 10 },
      { n: 11 },
    ]);
    expect((await backend.execute(withAhead(1), [], { maxRows: 10, timeoutMs: 5000 })).rows).toEqual([
      { n: 0 },
      { n: 1 },
      { n: 2 },
    ]);
    // no rows read ahead: nothing to retry (an empty result is an answer)
    const empty = { ...withAhead(1), readAhead: "SELECT 1 AS n, 1 AS __retry WHERE 0" };
    expect((await backend.execute(empty, [], { maxRows: 10, timeoutMs: 5000 })).rows).toEqual([]);
  });

  it("runs read-only: writes, DDL and file access are refused by the engine itself", async () => {
    for (const sql of [
      "INSERT INTO qes_schema (version, schema) SELECT 999, '{}'",
      "SELECT * FROM file('/etc/passwd', 'LineAsString')",
      "CREATE TABLE evil (a Int64) ENGINE = Memory",
    ]) {
      const err = await backend
        .execute(handQuery(sql, []), [], { maxRows: 10, timeoutMs: 5000 })
        .catch((e) => e);
      expect(err, sql).toMatchObject({ code: expect.stringMatching(/statement_not_allowed|sql_invalid/) });
    }
    const v = await backend.execute(
      handQuery("SELECT max(version) AS v FROM qes_schema", [{ name: "v", type: INT64 }]),
      [],
      { maxRows: 1, timeoutMs: 5000 },
    );
    expect(v.rows[0]!.v).not.toBe(999);
  });

  it("stops a query at the timeout in the engine, and the next query's rows are its own", async () => {
    const err = await backend.execute(SLOW, [], { maxRows: 10, timeoutMs: 400 }).catch((e) => e);
    expect(err).toMatchObject({ code: "query_timeout" });
    const r = await backend.execute(handQuery("SELECT 42 AS x", [{ name: "x", type: INT64 }]), [], {
      maxRows: 10,
      timeoutMs: 5000,
    });
    expect(r.rows).toEqual([{ x: 42 }]);
  });

  it("answers a deadline within ~100 ms even while the engine cannot stop (one function over a huge value)", async () => {
    // ClickHouse checks max_execution_time between blocks; sorting one array of 10M elements is a
    // single step (seconds here) it does not interrupt. The caller waited DEADLINE_GRACE_MS
    // (1 s before) beyond its deadline; the engine itself runs on until KILL QUERY's next check
    const marker = `unstoppable_${Date.now()}`;
    const q = handQuery(
      `SELECT '${marker}' AS m, length(arraySort(x -> cityHash64(x), range(10000000))) AS n`,
      [
        { name: "m", type: STRING },
        { name: "n", type: INT64 },
      ],
    );
    const timeoutMs = 300;
    const t0 = performance.now();
    const err = await backend.execute(q, [], { maxRows: 1, timeoutMs }).catch((e) => e);
    const overrun = performance.now() - t0 - timeoutMs;
    expect(err).toMatchObject({ code: "query_timeout" });
    // not answered before its deadline
    expect(overrun).toBeGreaterThanOrEqual(0);
    // answered while the engine is still inside the step it does not interrupt: the caller did not
    // wait for the engine (an order of events, not a bound on wall time, which the machine decides)
    expect(await running(marker)).toBeGreaterThan(0);
    // and the grace it is answered within is ~100 ms (1,000 ms before)
    expect(DEADLINE_GRACE_MS).toBeLessThanOrEqual(100);
    expect(
      (
        await backend.execute(handQuery("SELECT 42 AS x", [{ name: "x", type: INT64 }]), [], {
          maxRows: 1,
          timeoutMs: 5000,
        })
      ).rows,
    ).toEqual([{ x: 42 }]);
    // the engine does stop (the sort ends, KILL QUERY is seen): later tests run on a free engine
    const deadline = Date.now() + 60_000;
    while ((await running(marker)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await running(marker)).toBe(0);
  }, 90_000);

  it("an abort (client gone) kills the query in the engine", async () => {
    const marker = `abort_${Date.now()}`;
    const q = handQuery(`SELECT '${marker}' AS m, sum(s) AS s FROM (${SLOW.sql})`, [
      { name: "m", type: STRING },
      { name: "s", type: INT64 },
    ]);
    // gone from the engine long before its 20 s
    expect(await abandonWhileRunning(q, [], marker)).toBe(0);
  });

  it("an abort kills a query with bound parameters too (chDB re-formats its text and queues such calls)", async () => {
    const marker = `abort_bound_${Date.now()}`;
    const q = handQuery(
      `SELECT '${marker}' AS m, {${paramName(1)}:Nullable(String)} AS p, sum(s) AS s FROM (${SLOW.sql})`,
      [
        { name: "m", type: STRING },
        { name: "p", type: STRING },
        { name: "s", type: INT64 },
      ],
      [{ name: "p", type: "STRING", kind: "endpoint" }],
    );
    // gone from the engine long before its 20 s, and the next bound query is not queued behind it
    expect(await abandonWhileRunning(q, ["x"], marker)).toBe(0);
    const next = handQuery(
      `SELECT {${paramName(1)}:Nullable(String)} AS p`,
      [{ name: "p", type: STRING }],
      [{ name: "p", type: "STRING", kind: "endpoint" }],
    );
    expect((await backend.execute(next, ["y"], { maxRows: 1, timeoutMs: 10_000 })).rows).toEqual([
      { p: "y" },
    ]);
  });

  it("a bound query is not queued behind another caller's long bound query (issue 12: admission)", async () => {
    // chDB's binding runs every call with query parameters one after another: a cheap query waited
    // for the long one's whole run (its timeout, under a flood)
    const marker = `long_bound_${Date.now()}`;
    const long = handQuery(
      `SELECT '${marker}' AS m, {${paramName(1)}:Nullable(String)} AS p, sum(s) AS s FROM (${SLOW.sql})`,
      [
        { name: "m", type: STRING },
        { name: "p", type: STRING },
        { name: "s", type: INT64 },
      ],
      [{ name: "p", type: "STRING", kind: "endpoint" }],
    );
    const ac = new AbortController();
    const pending = backend
      .execute(long, ["x"], { maxRows: 10, timeoutMs: 60_000, signal: ac.signal })
      .catch(() => "stopped");
    try {
      while ((await running(marker)) === 0) await new Promise((r) => setTimeout(r, 20));
      const cheap = handQuery(
        `SELECT {${paramName(1)}:Nullable(String)} AS p, {${paramName(2)}:Nullable(String)} IS NULL AS n`,
        [
          { name: "p", type: STRING },
          { name: "n", type: { kind: "scalar", type: "BOOL" } },
        ],
        [
          { name: "p", type: "STRING", kind: "endpoint" },
          { name: "q", type: "STRING", kind: "endpoint" },
        ],
      );
      const r = await backend.execute(cheap, ["y'\\t\t", null], { maxRows: 1, timeoutMs: 10_000 });
      expect(r.rows).toEqual([{ p: "y'\\t\t", n: true }]);
      // answered while the long one still runs (it has ~20 s left), not queued behind it
      expect(await running(marker)).toBeGreaterThan(0);
      expect(await running(marker)).toBe(1);
    } finally {
      ac.abort(new Error("done"));
      expect(await pending).toBe("stopped");
    }
  });

  it("binds any text exactly as a value, never as SQL: 400 seeded strings of quotes, backslashes, escapes and braces", async () => {
    // the values reach chDB as string literals of a SET on the session (clickhouse-session-params.ts):
    // whatever a caller sends must come back unchanged, and nothing of it may run as SQL
    const q = handQuery(
      `SELECT {${paramName(1)}:Nullable(String)} AS a, {${paramName(2)}:Nullable(String)} AS b, 1 AS one`,
      [
        { name: "a", type: STRING },
        { name: "b", type: STRING },
        { name: "one", type: INT64 },
      ],
      [
        { name: "a", type: "STRING", kind: "endpoint" },
        { name: "b", type: "STRING", kind: "endpoint" },
      ],
    );
    const pieces = [
      "'",
      "\\",
      '"',
      "\t",
      "\n",
      "\r",
      "\0",
      "\b",
      "\f",
      "\\N",
      "{",
      "}",
      ";",
      "--",
      "/*",
      "*/",
      "`",
      "é",
      "😀",
      "x",
      " ",
      "param_p1",
      "', param_p2 = '",
      "\\'",
      "''",
    ];
    let seed = 20_251_126;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const text = () =>
      Array.from(
        { length: 1 + Math.floor(next() * 12) },
        () => pieces[Math.floor(next() * pieces.length)],
      ).join("");
    for (let i = 0; i < 200; i++) {
      const a = text();
      const b = text();
      const r = await backend.execute(q, [a, b], { maxRows: 1, timeoutMs: 10_000 });
      expect(r.rows, JSON.stringify([a, b])).toEqual([{ a, b, one: 1 }]);
    }
  });

  it("binds long parameters: past the engine's default max_query_size (an ingest's id list) on the session", async () => {
    const q = handQuery(
      `SELECT length({${paramName(1)}:Nullable(String)}) AS n, {${paramName(1)}:Nullable(String)} = {${paramName(2)}:Nullable(String)} AS same`,
      [
        { name: "n", type: INT64 },
        { name: "same", type: { kind: "scalar", type: "BOOL" } },
      ],
      [
        { name: "a", type: "STRING", kind: "endpoint" },
        { name: "b", type: "STRING", kind: "endpoint" },
      ],
    );
    // ~1.6 MB of SET, on the session
    const long = "é'\\".repeat(100_000);
    const r = await backend.execute(q, [long, long], { maxRows: 1, timeoutMs: 30_000 });
    expect(r.rows).toEqual([{ n: Buffer.byteLength(long), same: true }]);
    // 70 MB: too long for a SET, left to the binding's own (queued) path
    expect(setParamsSql({ p1: long })).not.toBeNull();
    expect(setParamsSql({ p1: "x".repeat(70_000_000) })).toBeNull();
  });

  it("refuses a result too long for a string as a 422, and goes on answering (issue 12: it ended the process)", async () => {
    // one row of 540 MB: the client's row stream made a string of it and threw outside any promise.
    // Building it takes more than the embedded engine's default memory bound (2 GiB here), also a
    // 422; the guard of the body must hold where a server's memory allows it (unbounded here)
    const huge = handQuery("SELECT arrayStringConcat(arrayMap(i -> repeat('x', 1000000), range(540))) AS s", [
      { name: "s", type: STRING },
    ]);
    const err = await unbounded.execute(huge, [], { maxRows: 10, timeoutMs: 60_000 }).catch((e) => e);
    expect(err).toMatchObject({ code: "sql_invalid" });
    expect(String(err.message)).toContain("result is larger than the service returns");
    const r = await unbounded.execute(handQuery("SELECT 42 AS x", [{ name: "x", type: INT64 }]), [], {
      maxRows: 10,
      timeoutMs: 5000,
    });
    expect(r.rows).toEqual([{ x: 42 }]);
  }, 60_000);

  it("bounds memory per query (QES_CLICKHOUSE_MAX_MEMORY) with a clear error, not a crash", async () => {
    const q = handQuery("SELECT length(groupArray(toString(number))) AS n FROM numbers(3000000)", [
      { name: "n", type: INT64 },
    ]);
    const err = await limited.execute(q, [], { maxRows: 10, timeoutMs: 30_000 }).catch((e) => e);
    expect(err).toMatchObject({ code: "sql_invalid" });
    // the bound, in the user's terms: not the engine's account of its threads and transforms
    expect(String(err.message)).toMatch(
      /^The query needs more memory than the service allows one query \(20\.00 MiB\)/,
    );
    expect(String(err.message)).not.toMatch(/Transform|Untracked/);
    const small = handQuery("SELECT length(groupArray(toString(number))) AS n FROM numbers(1000)", [
      { name: "n", type: INT64 },
    ]);
    expect((await limited.execute(small, [], { maxRows: 10, timeoutMs: 30_000 })).rows).toEqual([
      { n: 1000 },
    ]);
  });

  it("bounds each query's memory on embedded chDB by default (QES_CLICKHOUSE_MAX_MEMORY unset); 0 lifts the bound", async () => {
    // chDB's own default is 0 (no per-query bound): one groupArray of 2M strings of 1,000
    // characters took the qes process to 5.4 GB
    const setting = handQuery("SELECT toString(getSetting('max_memory_usage')) AS m", [
      { name: "m", type: STRING },
    ]);
    const bound = async (b: Backend) =>
      Number((await b.execute(setting, [], { maxRows: 1, timeoutMs: 5000 })).rows[0]!.m);
    expect(await bound(backend)).toBe(embeddedMaxMemoryBytes());
    expect(await bound(unbounded)).toBe(0);
  });

  it("the embedded default is an eighth of the memory available, within 256 MiB … 2 GiB", () => {
    const MiB = 1024 ** 2;
    expect(embeddedMaxMemoryBytes(24 * 1024 * MiB)).toBe(2048 * MiB);
    expect(embeddedMaxMemoryBytes(8 * 1024 * MiB)).toBe(1024 * MiB);
    expect(embeddedMaxMemoryBytes(1024 * MiB)).toBe(256 * MiB);
    expect(embeddedMaxMemoryBytes()).toBeGreaterThanOrEqual(256 * MiB);
  });

  it("wire values: non-finite floats, exact 64-bit integers, µs timestamps, dates, arrays", async () => {
    const r = await backend.execute(
      handQuery(
        "SELECT 1/0 AS inf, -1/0 AS ninf, 0/0 AS nan, toInt64('-9223372036854775808') AS min64, " +
          "toDateTime64('1969-12-31 23:59:59.999999', 6, 'UTC') AS ts, toDate32('1900-01-02') AS d, " +
          "[toDateTime64('2025-01-15 09:00:00.5', 6, 'UTC')] AS tss, [toInt64(1), 9007199254740993] AS ints",
        [
          { name: "inf", type: FLOAT64 },
          { name: "ninf", type: FLOAT64 },
          { name: "nan", type: FLOAT64 },
          { name: "min64", type: INT64 },
          { name: "ts", type: { kind: "scalar", type: "TIMESTAMP" } },
          { name: "d", type: { kind: "scalar", type: "DATE" } },
          { name: "tss", type: { kind: "array", element: "TIMESTAMP" } },
          { name: "ints", type: { kind: "array", element: "INT64" } },
        ],
      ),
      [],
      { maxRows: 10, timeoutMs: 5000 },
    );
    expect(r.rows).toEqual([
      {
        inf: "Infinity",
        ninf: "-Infinity",
        nan: "NaN",
        min64: "-9223372036854775808",
        ts: -1,
        d: "1900-01-02",
        tss: [1736931600500000],
        ints: [1, "9007199254740993"],
      },
    ]);
  });

  it("reads a record's JSON text at a leading-key cut for the LIMIT's rows only (lazy materialization)", async () => {
    // The order completed for ties ends with the metadata JSON text; as a sort key it was read for
    // every row of the blocks at the cut (logs.all at 1M: 1.7× the native query). Ordered outside
    // the cut rows, ClickHouse reads it after the inner LIMIT, for its rows only.
    const source = "test.lazy";
    await backend.load(source, [
      '{"id":"a","timestamp":1736931600000000,"project":"p","event_message":"x","metadata":{"k":1}}',
      '{"id":"b","timestamp":1736931601000000,"project":"p","event_message":"y","metadata":{"k":2}}',
    ]);
    const schema = await backend.schema();
    const sql = `select id, metadata from \`${source}\` where project = 'p' order by timestamp desc limit 1`;
    const q = compileEndpoint(
      {
        id: "00000000-0000-4000-8000-00000000c4a2",
        name: "lazy",
        sql,
        sqlFile: "lazy.sql",
        maxRows: 10,
        cacheTtlSeconds: 0,
        sandboxable: true,
        redactPii: false,
        params: {},
        version: sql,
      },
      { schema, dialect: backend.dialect },
    );
    const rows = await backend.execute(q, [], { maxRows: 10, timeoutMs: 10_000 });
    expect(rows.rows).toEqual([{ id: "b", metadata: [{ k: 2 }] }]);
    const plan = await backend.execute(
      handQuery(`EXPLAIN ${q.sql}`, [{ name: "explain", type: STRING }]),
      [],
      {
        maxRows: 1000,
        timeoutMs: 10_000,
      },
    );
    const lazy = plan.rows.map((r) => String(r.explain)).find((l) => l.includes("Lazily read columns"));
    expect(lazy ?? "no column read lazily").toContain(schema.sources[source]!.fields.metadata!.column!);
  });

  it("health answers; a closed backend is unavailable", async () => {
    await backend.health();
    const other = createClickhouseBackend({ path: chdbTestPath(), database: uniqueDatabase() });
    await other.init();
    await other.close();
    await expect(other.health()).rejects.toMatchObject({ code: "backend_unavailable" });
  });

  it("refuses a second chDB data directory in the same process, naming both", async () => {
    const other = createClickhouseBackend({ path: `${chdbTestPath()}-other`, database: "qes" });
    await expect(other.init()).rejects.toMatchObject({
      code: "backend_unavailable",
      message: expect.stringContaining("one engine per process"),
    });
  });
});
