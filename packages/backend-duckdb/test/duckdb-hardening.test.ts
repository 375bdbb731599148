import { existsSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { type Backend, QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeOnDuckdb } from "../src/duckdb-executor.ts";
import { createDuckdbBackend, duckdbInstanceOptions } from "../src/index.ts";
import { handQuery, tempDir } from "./helpers.ts";

const tmp = tempDir("hardening");
let backend: Backend;
const run = { maxRows: 1000, timeoutMs: 10_000 };
const count = handQuery("select count(*) as n from src_cloudflare_logs_prod", [
  { name: "n", type: { kind: "scalar", type: "INT64" } },
]);

beforeAll(async () => {
  backend = createDuckdbBackend({ path: join(tmp.dir, "qes.duckdb"), threads: 2, memoryLimit: "512MB" });
  await backend.init();
  await backend.load("cloudflare.logs.prod", ['{"event_message":"x"}']);
});
afterAll(async () => {
  await backend.close();
  tmp.cleanup();
});

async function refusal(sql: string): Promise<QesError> {
  const before = backend.executedQueries();
  const e = await backend.execute(handQuery(sql, []), [], run).catch((err: unknown) => err);
  expect(backend.executedQueries()).toBe(before + 1);
  expect(e, sql).toBeInstanceOf(QesError);
  return e as QesError;
}

describe("SQL that reaches the engine past any sandbox", () => {
  const target = join(tmp.dir, "x");
  it.each([
    ["reading a file", "select * from read_csv('/etc/passwd')"],
    ["reading a file as text", "select * from read_text('/etc/passwd')"],
    ["writing a file", `COPY (select 1) TO '${target}.csv'`],
    ["attaching a database", `ATTACH '${target}.db'`],
    ["changing a setting", "SET threads=8"],
    ["unlocking the configuration", "SET lock_configuration=false"],
    ["installing an extension", "INSTALL httpfs"],
    ["loading an extension", "LOAD httpfs"],
    ["writing a table", "insert into src_cloudflare_logs_prod (id) values ('evil')"],
    ["creating a table", "create table evil (a int)"],
    ["ending the read-only transaction", "COMMIT"],
    ["two statements", "select 1; insert into src_cloudflare_logs_prod (id) values ('evil')"],
  ])("refuses %s", async (_what, sql) => {
    await refusal(sql);
  });

  it("left no trace", async () => {
    expect(existsSync(`${target}.csv`)).toBe(false);
    expect(existsSync(`${target}.db`)).toBe(false);
    expect((await backend.execute(count, [], run)).rows).toEqual([{ n: 1 }]);
    const settings = await backend.execute(
      handQuery(
        "select current_setting('threads') as t, current_setting('enable_external_access') as e, " +
          "current_setting('lock_configuration') as l",
        [
          { name: "t", type: { kind: "scalar", type: "INT64" } },
          { name: "e", type: { kind: "scalar", type: "BOOL" } },
          { name: "l", type: { kind: "scalar", type: "BOOL" } },
        ],
      ),
      [],
      run,
    );
    expect(settings.rows).toEqual([{ t: 2, e: false, l: true }]);
  });

  it("refuses file access and writes in the engine itself, not only by statement type", async () => {
    const db = await DuckDBInstance.create(":memory:", duckdbInstanceOptions({ path: ":memory:" }));
    const conn = await db.connect();
    try {
      await conn.run("create table t (a int)");
      await conn.run("BEGIN TRANSACTION READ ONLY");
      await expect(conn.run("insert into t values (1)")).rejects.toThrow(/read-only/);
      await conn.run("ROLLBACK");
      await expect(conn.run(`COPY t TO '${target}.parquet'`)).rejects.toThrow(/Permission Error/);
      await expect(conn.run(`ATTACH '${target}.db'`)).rejects.toThrow(/Permission Error/);
      await expect(conn.run("SET threads=8")).rejects.toThrow(/locked/);
      await expect(conn.run("INSTALL httpfs")).rejects.toThrow(/Permission Error|disabled/);
      expect(existsSync(`${target}.parquet`)).toBe(false);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});

describe("limits", () => {
  it("interrupts a long query at the timeout, and the backend still works", async () => {
    const started = Date.now();
    const e = await backend
      .execute(handQuery("select count(*) as n from range(1000000000) a, range(1000000) b", []), [], {
        maxRows: 10,
        timeoutMs: 300,
      })
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(QesError);
    expect((e as QesError).code).toBe("query_timeout");
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await backend.execute(count, [], run)).rows).toEqual([{ n: 1 }]);
  });

  it("cancels on an abort signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("client went away")), 200);
    await expect(
      backend.execute(handQuery("select count(*) from range(1000000000) a, range(1000000) b", []), [], {
        maxRows: 10,
        timeoutMs: 60_000,
        signal: controller.signal,
      }),
    ).rejects.toThrow(/client went away/);
  });

  it("stops at the deadline when it passes before a statement starts (while it is prepared)", async () => {
    // DuckDB drops an interrupt that reaches no running statement: a deadline that passes while a
    // statement is prepared, or waits for a libuv thread, must still stop it once it runs
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const conn = await instance.connect();
    const slowToPrepare = new Proxy(conn, {
      get(target, key) {
        if (key === "prepare")
          return async (sql: string) => {
            await new Promise((resolve) => setTimeout(resolve, 100));
            return target.prepare(sql);
          };
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const slow = handQuery("select count(*) as n from range(1000000000) a, range(1000000) b", []);
    try {
      for (const stopBy of ["timeout", "signal"] as const) {
        const controller = new AbortController();
        if (stopBy === "signal") setTimeout(() => controller.abort(new Error("client went away")), 20);
        const started = Date.now();
        const e = await executeOnDuckdb(slowToPrepare, slow, [], {
          maxRows: 10,
          timeoutMs: stopBy === "timeout" ? 20 : 60_000,
          signal: controller.signal,
        }).catch((err: unknown) => err);
        expect(e, stopBy).toBeInstanceOf(Error);
        expect(String(e), stopBy).toMatch(stopBy === "timeout" ? /did not finish within 20 ms/ : /went away/);
        expect(Date.now() - started, stopBy).toBeLessThan(3000);
      }
      // and no transaction is left open on the connection
      await conn.run("BEGIN TRANSACTION");
      await conn.run("ROLLBACK");
    } finally {
      conn.closeSync();
    }
  });

  it("cuts results at maxRows and says so, reading no more than it needs", async () => {
    const q = handQuery("select range as n from range(100000000)", [
      { name: "n", type: { kind: "scalar", type: "INT64" } },
    ]);
    const cut = await backend.execute(q, [], { maxRows: 3000, timeoutMs: 10_000 });
    expect(cut.rows).toHaveLength(3000);
    expect(cut.rows[2999]).toEqual({ n: 2999 });
    expect(cut.rowLimitReached).toBe(true);
    const exact = await backend.execute(handQuery("select range as n from range(3000)", q.columns), [], {
      maxRows: 3000,
      timeoutMs: 10_000,
    });
    expect(exact.rows).toHaveLength(3000);
    expect(exact.rowLimitReached).toBe(false);
  });

  it("reports health and counts executions", async () => {
    await backend.health();
    const before = backend.executedQueries();
    await backend.execute(count, [], run);
    expect(backend.executedQueries()).toBe(before + 1);
  });
});

describe("a query larger than the memory limit", () => {
  // Issue 12: DuckDB's "Out of Memory Error" (a 3,000-column select over a sorted CTE) was a 500;
  // it is the query's size, answered 422 sql_too_complex.
  it("is sql_too_complex, and the engine answers the next query", async () => {
    const small = createDuckdbBackend({
      path: join(tmp.dir, "small.duckdb"),
      threads: 1,
      memoryLimit: "32MB",
    });
    await small.init();
    try {
      const big = handQuery(
        "select len(l) as n from (select list(repeat('x', 200) || i) as l from range(3000000) t(i))",
        [{ name: "n", type: { kind: "scalar", type: "INT64" } }],
      );
      const e = await small.execute(big, [], run).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(QesError);
      expect((e as QesError).code).toBe("sql_too_complex");
      expect((e as QesError).message).toContain("QES_DUCKDB_MEMORY_LIMIT");
      await small.load("cloudflare.logs.prod", ['{"event_message":"x"}']);
      expect((await small.execute(count, [], run)).rows).toEqual([{ n: 1 }]);
    } finally {
      await small.close();
    }
  });
});
