import { isQesError, QesError } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend, readerRoleFor } from "../src/index.ts";
import { createQueryPool, extendedArrayQuery } from "../src/postgres-executor.ts";
import { freshBackend, handQuery, ownerQuery, scalar, TEST_POSTGRES_URL, tableOf } from "./helpers.ts";

const EDGE = "cloudflare.logs.prod";

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error("expected a failure");
}

async function qesFailure(promise: Promise<unknown>): Promise<QesError> {
  const e = await failure(promise);
  if (!isQesError(e)) throw e;
  return e;
}

/** A raw session as the query role: no guards from qes' pool, only what the role itself allows. */
async function asReader<T>(backend: PostgresBackend, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: backend.config.queryUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("PostgreSQL execution is read-only by construction", () => {
  let backend: PostgresBackend;
  let schema: string;
  let dispose: () => Promise<void>;
  let table: string;

  beforeAll(async () => {
    ({ backend, schema, dispose } = await freshBackend("ro"));
    await backend.load(
      EDGE,
      Array.from({ length: 5 }, (_, i) =>
        JSON.stringify({
          id: `e${i}`,
          timestamp: `2025-01-15T23:30:0${i}.00000${i}Z`,
          event_message: `m${i}`,
          project: "p1",
        }),
      ),
    );
    table = await tableOf(backend, EDGE);
  });
  afterAll(async () => {
    await dispose();
  });

  it("queries run as the schema's reader role", async () => {
    expect(backend.config.readerRole).toBe(readerRoleFor(schema));
    const result = await backend.execute(
      handQuery("select current_user as u, current_setting('transaction_read_only') as ro", [
        scalar("u", "STRING"),
        scalar("ro", "STRING"),
      ]),
      [],
      { maxRows: 1, timeoutMs: 5000 },
    );
    expect(result.rows).toEqual([{ u: readerRoleFor(schema), ro: "on" }]);
  });

  it("the role itself cannot write, even after SET TRANSACTION READ WRITE", async () => {
    const error = await asReader(backend, (c) =>
      failure(
        c.query(`set transaction read write; insert into ${table} (id, "timestamp") values ('x', now())`),
      ),
    );
    expect((error as { code?: string }).code).toBe("42501");
    expect(String(error)).toMatch(/permission denied/);
    // every statement lifts the read-only default first, so what stops it is the missing privilege
    for (const sql of [
      `delete from ${table}`,
      `update ${table} set event_message = 'x'`,
      `truncate ${table}`,
      `create table "${schema}".evil (x int)`,
      `select * from "${schema}".qes_sources`,
      "select pg_read_file('/etc/passwd')",
      "copy (select 1) to program 'true'",
    ]) {
      const e = await asReader(backend, (c) => failure(c.query(`set transaction read write; ${sql}`)));
      expect({ sql, code: (e as { code?: string }).code }).toEqual({ sql, code: "42501" });
    }
    // without it, the role's sessions are read-only as well
    const readOnly = await asReader(backend, (c) => failure(c.query(`delete from ${table}`)));
    expect((readOnly as { code?: string }).code).toBe("25006");
    const { rows } = await ownerQuery(`select count(*)::int as n from ${table}`);
    expect(rows[0].n).toBe(5);
  });

  it("pg_read_file through execute is a privilege error, not a result", async () => {
    const error = await qesFailure(
      backend.execute(handQuery("select pg_read_file('/etc/passwd') as f", [scalar("f", "STRING")]), [], {
        maxRows: 1,
        timeoutMs: 5000,
      }),
    );
    expect(error.code).toBe("sql_not_allowed");
  });

  it("refuses a second statement: the extended protocol runs one statement per call", async () => {
    const pool = createQueryPool(backend.config);
    try {
      const e = await failure(pool.query(extendedArrayQuery(`select 1; delete from ${table}`, [])));
      expect((e as { code?: string }).code).toBe("42601");
      expect(String(e)).toMatch(/multiple commands/);
    } finally {
      await pool.end();
    }
    const error = await qesFailure(
      backend.execute(handQuery(`select 1 as a; delete from ${table}`, [scalar("a", "INT64")]), [], {
        maxRows: 1,
        timeoutMs: 5000,
      }),
    );
    expect(error).toBeInstanceOf(QesError);
    const { rows } = await ownerQuery(`select count(*)::int as n from ${table}`);
    expect(rows[0].n).toBe(5);
  });

  it("runs queries without JIT and with the shortest float digits, whatever the server's defaults", async () => {
    const pool = createQueryPool(backend.config);
    try {
      const { rows } = await pool.query(
        "select current_setting('jit') as jit, current_setting('extra_float_digits') as digits",
      );
      expect(rows[0]).toEqual({ jit: "off", digits: "1" });
    } finally {
      await pool.end();
    }
  });

  it("binds values as values, never as SQL", async () => {
    const result = await backend.execute(
      handQuery(
        `select count(*) as n from ${table} where project = $1`,
        [scalar("n", "INT64")],
        [["p", "STRING"]],
      ),
      ["p1' or '1'='1"],
      { maxRows: 1, timeoutMs: 5000 },
    );
    expect(result.rows).toEqual([{ n: 0 }]);
  });

  it("a query past its timeout is cancelled: query_timeout, and the pool keeps working", async () => {
    const started = Date.now();
    const error = await qesFailure(
      backend.execute(handQuery("select pg_sleep(5)::text as s", [scalar("s", "STRING")]), [], {
        maxRows: 1,
        timeoutMs: 300,
      }),
    );
    expect(error.code).toBe("query_timeout");
    expect(Date.now() - started).toBeLessThan(3000);
    // the same connections serve a longer limit afterwards
    const ok = await backend.execute(
      handQuery("select pg_sleep(0.4)::text as s", [scalar("s", "STRING")]),
      [],
      {
        maxRows: 1,
        timeoutMs: 5000,
      },
    );
    expect(ok.rows).toEqual([{ s: "" }]);
  });

  it("the configured statement timeout is a connection option", async () => {
    const quick = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 1, statementTimeoutMs: 250 });
    await quick.init();
    try {
      const result = await quick.execute(
        handQuery("select current_setting('statement_timeout') as t", [scalar("t", "STRING")]),
        [],
        { maxRows: 1, timeoutMs: 250 },
      );
      expect(result.rows).toEqual([{ t: "250ms" }]);
      const error = await qesFailure(
        quick.execute(handQuery("select pg_sleep(3)::text as s", [scalar("s", "STRING")]), [], {
          maxRows: 1,
          timeoutMs: 250,
        }),
      );
      expect(error.code).toBe("query_timeout");
    } finally {
      await quick.close();
    }
  });

  it("a modest query runs without parallel workers; the next one has the server's setting again", async () => {
    const one = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 1 });
    await one.init();
    try {
      const workers = async (modest?: boolean) =>
        (
          await one.execute(
            handQuery("select current_setting('max_parallel_workers_per_gather') as w", [
              scalar("w", "STRING"),
            ]),
            [],
            { maxRows: 1, timeoutMs: 5000, ...(modest === undefined ? {} : { modest }) },
          )
        ).rows[0]!.w;
      const server = await workers();
      expect(Number(server)).toBeGreaterThan(0);
      // one pooled connection: the same session each time
      expect(await workers(true)).toBe("0");
      expect(await workers(true)).toBe("0");
      expect(await workers(false)).toBe(server);
      expect(await workers()).toBe(server);
    } finally {
      await one.close();
    }
  });

  it("an aborted request cancels its query", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("client went away")), 200);
    const error = await failure(
      backend.execute(handQuery("select pg_sleep(5)::text as s", [scalar("s", "STRING")]), [], {
        maxRows: 1,
        timeoutMs: 10_000,
        signal: controller.signal,
      }),
    );
    expect(String(error)).toMatch(/client went away/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("reads at most maxRows + 1 rows, cuts to maxRows and says so, keeping the order", async () => {
    const q = handQuery(`select id from ${table} order by "timestamp" desc`, [scalar("id", "STRING")]);
    const cut = await backend.execute(q, [], { maxRows: 3, timeoutMs: 5000 });
    expect(cut).toEqual({ rows: [{ id: "e4" }, { id: "e3" }, { id: "e2" }], rowLimitReached: true });
    const all = await backend.execute(q, [], { maxRows: 5, timeoutMs: 5000 });
    expect(all.rowLimitReached).toBe(false);
    expect(all.rows).toHaveLength(5);
  });

  it("counts executed queries", async () => {
    const before = backend.executedQueries();
    await backend.execute(handQuery("select 1 as a", [scalar("a", "INT64")]), [], {
      maxRows: 1,
      timeoutMs: 5000,
    });
    expect(backend.executedQueries()).toBe(before + 1);
  });

  it("a server whose time zone is America/New_York gives the same timestamps and truncations", async () => {
    const columns = [
      scalar("ts", "TIMESTAMP"),
      scalar("day", "TIMESTAMP"),
      scalar("dt", "DATETIME"),
      scalar("d", "DATE"),
      scalar("tz", "STRING"),
    ];
    const q = handQuery(
      `select "timestamp" as ts, date_trunc('day', "timestamp") as day, ("timestamp" at time zone 'UTC') as dt,
              ("timestamp" at time zone 'UTC')::date as d, current_setting('TimeZone') as tz
       from ${table} where id = 'e4'`,
      columns,
    );
    const utc = await backend.execute(q, [], { maxRows: 1, timeoutMs: 5000 });
    expect(utc.rows).toEqual([
      {
        ts: 1736983804000004,
        day: 1736899200000000,
        dt: "2025-01-15T23:30:04.000004",
        d: "2025-01-15",
        tz: "UTC",
      },
    ]);
    const role = readerRoleFor(schema);
    await ownerQuery(`alter role "${role}" set timezone = 'America/New_York'`);
    const newYork = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 1 });
    try {
      await newYork.init();
      // the role's sessions now default to New York…
      const raw = await asReader(newYork, (c) => c.query("select current_setting('TimeZone') as tz"));
      expect(raw.rows[0].tz).toBe("America/New_York");
      // …and qes' sessions still run in UTC
      const again = await newYork.execute(q, [], { maxRows: 1, timeoutMs: 5000 });
      expect(again.rows).toEqual(utc.rows);
    } finally {
      await newYork.close();
      await ownerQuery(`alter role "${role}" reset timezone`);
    }
  });

  it("QES_POSTGRES_QUERY_URL: an operator's role gets SELECT; the owner or a superuser is refused", async () => {
    const given = `${schema}_given`;
    await ownerQuery(`create role "${given}" login`);
    const url = new URL(TEST_POSTGRES_URL);
    url.username = given;
    const withGiven = createPostgresBackend({
      url: TEST_POSTGRES_URL,
      schema,
      pool: 1,
      queryUrl: url.toString(),
    });
    try {
      await withGiven.init();
      const result = await withGiven.execute(
        handQuery(`select count(*) as n, current_user as u from ${table}`, [
          scalar("n", "INT64"),
          scalar("u", "STRING"),
        ]),
        [],
        { maxRows: 1, timeoutMs: 5000 },
      );
      expect(result.rows).toEqual([{ n: 5, u: given }]);
    } finally {
      await withGiven.close();
      await ownerQuery(`drop owned by "${given}"`);
      await ownerQuery(`drop role "${given}"`);
    }
    const asOwner = createPostgresBackend({
      url: TEST_POSTGRES_URL,
      schema,
      pool: 1,
      queryUrl: TEST_POSTGRES_URL,
    });
    try {
      expect((await qesFailure(asOwner.init())).code).toBe("invalid_config");
    } finally {
      await asOwner.close();
    }
  });

  it("health answers through the query role", async () => {
    await expect(backend.health()).resolves.toBeUndefined();
  });
});
