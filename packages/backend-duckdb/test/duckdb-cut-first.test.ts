import { join } from "node:path";
import type { DuckDBInstance } from "@duckdb/node-api";
import { type Backend, type CompiledQuery, compileEndpoint } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { sqlEndpoint, tempDir } from "./helpers.ts";

// The two-step form of a cut top-level select (SqlEmitter.cutsFirst): the cut's value first, then
// the rows at or past it, read through the source's time index. Its rows must be the cut form's
// and the plain ordered LIMIT's, ties on the timestamp included — which the SQL case table cannot
// show: no source of its events holds two rows with one timestamp.

const tmp = tempDir("cut-first");
const file = join(tmp.dir, "qes.duckdb");
let backend: Backend;
const run = { maxRows: 1000, timeoutMs: 10_000 };
const SOURCE = "ties.src";
const BASE = Date.UTC(2025, 0, 15);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** 300 events in 12 projects, on 40 distinct timestamps an hour apart: every timestamp is shared */
const EVENTS = Array.from({ length: 300 }, (_, i) => ({
  id: `t${String(i).padStart(3, "0")}`,
  timestamp: new Date(BASE + ((i * 7) % 40) * HOUR).toISOString(),
  project: `p${i % 12}`,
  event_message: `m${(i * 13) % 17}`,
  metadata: { n: i % 5 },
}));

beforeAll(async () => {
  backend = createDuckdbBackend({ path: file });
  await backend.init();
  await backend.load(
    SOURCE,
    EVENTS.map((e) => JSON.stringify(e)),
    { nowMicros: BigInt(BASE) * 1000n },
  );
});
afterAll(async () => {
  await backend.close();
  tmp.cleanup();
});

function compile(sql: string): CompiledQuery {
  return compileEndpoint(sqlEndpoint(sql), { schema: backendSchema, dialect: backend.dialect });
}
let backendSchema: Awaited<ReturnType<Backend["schema"]>>;
beforeAll(async () => {
  backendSchema = await backend.schema();
});

const ids = async (q: CompiledQuery) => (await backend.execute(q, [], run)).rows.map((r) => r.id);

/** the rows by hand: the events ordered by timestamp, then by the completing keys */
function expected(project: string | undefined, desc: boolean, limit: number): unknown[] {
  const rows = EVENTS.filter((e) => project === undefined || e.project === project);
  rows.sort((a, b) => {
    const t = a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0;
    if (t !== 0) return desc ? -t : t;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  return rows.slice(0, limit).map((e) => e.id);
}

describe("DuckDB: a cut select in two steps", () => {
  const table = "`ties.src`";

  it("gives the plain ordered LIMIT's rows at every tie boundary, newest and oldest first", async () => {
    for (const desc of [true, false]) {
      for (const limit of [1, 6, 7, 8, 15, 37, 299, 300, 301]) {
        // ordered by the timestamp alone: the service completes the order by the selected columns
        const q = compile(
          `select id, event_message from ${table} order by timestamp ${desc ? "desc" : ""} limit ${limit}`,
        );
        expect(q.cutFirst, "compiled in two steps").toBeDefined();
        expect(await ids(q), `${desc ? "desc" : "asc"} limit ${limit}`).toEqual(
          expected(undefined, desc, limit),
        );
        // the one-statement cut form answers the same
        const { cutFirst: _two, ...oneStep } = q;
        expect(await ids(oneStep)).toEqual(expected(undefined, desc, limit));
      }
    }
  });

  it("through a stored query's plain CTE with a filter, for projects with rows and without", async () => {
    for (const project of ["p0", "p5", "p11", "nobody"]) {
      for (const limit of [1, 3, 10, 30]) {
        const q = compile(
          `with logs as (select id, timestamp, event_message from ${table} where project = '${project}') ` +
            `select id, event_message from logs order by timestamp desc limit ${limit}`,
        );
        expect(q.cutFirst).toBeDefined();
        const got = (await backend.execute(q, [], run)).rows;
        expect(got.map((r) => r.id)).toEqual(expected(project, true, limit));
        const { cutFirst: _two, ...oneStep } = q;
        expect(got).toEqual((await backend.execute(oneStep, [], run)).rows);
      }
    }
  });

  it("stays one statement where the key is not one table's column", () => {
    for (const sql of [
      `select e.id from ${table} as e cross join ${table} as f order by e.timestamp desc limit 5`,
      `select id from ${table} order by timestamp desc limit 5 offset 1`,
      `select count(*) as n from (select id from ${table} order by timestamp desc limit 5)`,
    ])
      expect(compile(sql).cutFirst).toBeUndefined();
  });

  it("reads the rows past the cut through the source's time index", async () => {
    const q = compile(`select id, metadata from ${table} order by timestamp desc limit 10`);
    const cutValue = new Date(BASE + 39 * HOUR).toISOString().replace("T", " ").replace("Z", "");
    // a second connection to the same database: the backend's instance owns the file
    const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
    const conn = await instance.connect();
    try {
      const plan = await conn.runAndReadAll(`EXPLAIN ANALYZE ${q.cutFirst!.sql}`, [cutValue]);
      const text = plan
        .getRows()
        .map((r) => String(r[1]))
        .join("\n");
      expect(text).toContain("Index Scan");
    } finally {
      conn.closeSync();
    }
  });

  it("keeps the time index through retention (dropped for its checkpoint, rebuilt after)", async () => {
    const indexes = async () => {
      const instance = (backend as unknown as { instance: DuckDBInstance }).instance;
      const conn = await instance.connect();
      try {
        const r = await conn.runAndReadAll("SELECT index_name FROM duckdb_indexes() ORDER BY index_name");
        return r.getRows().map((row) => String(row[0]));
      } finally {
        conn.closeSync();
      }
    };
    const before = await indexes();
    expect(before).toContain("src_ties_src__timestamp");
    // one day kept, two days on: the events of the first day go (retention cuts at midnight)
    const now = BigInt(BASE + 2 * DAY + HOUR) * 1000n;
    const reports = await backend.applyRetention({ defaultDays: 1, perSource: {} }, now);
    const deleted = reports.find((r) => r.source === SOURCE)?.deletedEvents ?? 0;
    expect(deleted).toBe(EVENTS.filter((e) => Date.parse(e.timestamp) < BASE + DAY).length);
    expect(await indexes()).toEqual(before);
    const q = compile(`select id, event_message from ${table} order by timestamp limit 10`);
    const left = EVENTS.filter((e) => Date.parse(e.timestamp) >= BASE + DAY);
    const want = left
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, 10)
      .map((e) => e.id);
    expect(await ids(q)).toEqual(want);
  });
});
