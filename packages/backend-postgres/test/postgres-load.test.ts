import { BUILTIN_SOURCES, type FieldNode, isQesError, type LoadProgress, type QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { loadWorkerStatistics } from "../src/postgres-load-workers.ts";
import {
  columnTypes,
  dropStorage,
  freshBackend,
  handQuery,
  ownerQuery,
  scalar,
  TEST_POSTGRES_URL,
  tableOf,
  uniqueSchema,
} from "./helpers.ts";

const EDGE = "cloudflare.logs.prod";

function edgeEvent(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: `id-${i}`,
    timestamp: `2025-01-15T09:00:${String(i % 60).padStart(2, "0")}.123456Z`,
    event_message: `GET | 200 | /rest/v1/t${i}`,
    project: "p1",
    metadata: { request: { method: "GET", path: `/rest/v1/t${i}` }, response: { status_code: 200 } },
    ...extra,
  });
}

async function loadError(promise: Promise<unknown>): Promise<QesError> {
  try {
    await promise;
  } catch (e) {
    if (isQesError(e)) return e;
    throw e;
  }
  throw new Error("expected the load to fail");
}

function node(fields: Record<string, FieldNode>, ...path: string[]): FieldNode | undefined {
  let current: FieldNode | undefined = fields[path[0]!];
  for (const name of path.slice(1)) current = current?.fields?.[name];
  return current;
}

describe("PostgreSQL storage: start-up, load, schema", () => {
  let backend: PostgresBackend;
  let schema: string;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ backend, schema, dispose } = await freshBackend("load"));
  });
  afterAll(async () => {
    await dispose();
  });

  it("creates the nine built-in sources, empty, with the fixed columns and both indexes", async () => {
    const logSchema = await backend.schema();
    expect(Object.keys(logSchema.sources).sort()).toEqual([...BUILTIN_SOURCES].sort());
    const edge = logSchema.sources[EDGE]!;
    expect(edge.table).toBe("src_cloudflare_logs_prod");
    expect(await columnTypes(schema, edge.table)).toEqual({
      id: "text",
      timestamp: "timestamp with time zone",
      event_message: "text",
      project: "text",
    });
    const { rows } = await ownerQuery<{ indexdef: string }>(
      "select indexdef from pg_indexes where schemaname = $1 and tablename = $2 order by indexdef",
      [schema, edge.table],
    );
    expect(rows.map((r) => r.indexdef.replace(/^.* USING /, "")).sort()).toEqual([
      'btree ("timestamp")',
      "btree (id)",
      'btree (project, "timestamp")',
    ]);
  });

  it("init is idempotent, also when several instances start at once", async () => {
    const before = (await backend.schema()).version;
    const others = [0, 1, 2].map(() => createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 1 }));
    await Promise.all(others.map((b) => b.init()));
    for (const other of others) expect((await other.schema()).version).toBe(before);
    await Promise.all(others.map((b) => b.close()));
  });

  it("parallel first start-ups of a new schema create it once", async () => {
    const fresh = uniqueSchema("race");
    const instances = [0, 1, 2].map(() =>
      createPostgresBackend({ url: TEST_POSTGRES_URL, schema: fresh, pool: 1 }),
    );
    try {
      await Promise.all(instances.map((b) => b.init()));
      const versions = await Promise.all(instances.map(async (b) => (await b.schema()).version));
      expect(new Set(versions).size).toBe(1);
      expect(Object.keys((await instances[0]!.schema()).sources)).toHaveLength(9);
    } finally {
      await Promise.all(instances.map((b) => b.close()));
      await dropStorage(fresh);
    }
  });

  it("loads with COPY, types the columns, reports progress and a summary", async () => {
    const progress: LoadProgress[] = [];
    const lines = Array.from({ length: 25_000 }, (_, i) =>
      edgeEvent(i, {
        metadata: {
          request: { method: "GET", path: `/p${i}` },
          response: { status_code: 200, latency: 1.5, cached: i % 2 === 0 },
        },
      }),
    );
    const summary = await backend.load(EDGE, lines, { onProgress: (p) => progress.push(p) });
    expect(summary.source).toBe(EDGE);
    expect(summary.events).toBe(25_000);
    expect(summary.eventsPerSecond).toBeGreaterThan(0);
    expect(progress.at(-1)?.events).toBe(25_000);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)?.bytes).toBe(lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));

    const edge = (await backend.schema()).sources[EDGE]!;
    const col = (...path: string[]) => node(edge.fields, ...path)!.column!;
    const types = await columnTypes(schema, edge.table);
    expect(types[col("metadata")]).toBe("json");
    expect(types[col("metadata", "request")]).toBe("boolean");
    expect(types[col("metadata", "request", "path")]).toBe("text");
    expect(types[col("metadata", "response", "status_code")]).toBe("bigint");
    expect(types[col("metadata", "response", "latency")]).toBe("double precision");
    expect(types[col("metadata", "response", "cached")]).toBe("boolean");
    const { rows } = await ownerQuery(`select count(*)::int as n from ${await tableOf(backend, EDGE)}`);
    expect(rows[0].n).toBe(25_000);
    // the indexes dropped for the load into the empty table are back
    const indexes = await ownerQuery("select 1 from pg_indexes where schemaname = $1 and tablename = $2", [
      schema,
      edge.table,
    ]);
    expect(indexes.rowCount).toBe(3);
  });

  it("widens: INT64 → FLOAT64 → STRING keeps each row's original text; a record meeting a string becomes STRING", async () => {
    const source = "widen.test";
    await backend.load(source, [
      JSON.stringify({ id: "a", timestamp: "2025-01-01T00:00:00Z", metadata: { n: 7, r: { x: 1 } } }),
    ]);
    await backend.load(source, [
      JSON.stringify({ id: "b", timestamp: "2025-01-01T00:00:01Z", metadata: { n: 2.5 } }),
    ]);
    let model = (await backend.schema()).sources[source]!;
    expect(node(model.fields, "metadata", "n")?.type).toBe("FLOAT64");
    expect((await columnTypes(schema, model.table))[node(model.fields, "metadata", "n")!.column!]).toBe(
      "double precision",
    );
    await backend.load(source, [
      JSON.stringify({ id: "c", timestamp: "2025-01-01T00:00:02Z", metadata: { n: "many", r: "flat" } }),
    ]);
    model = (await backend.schema()).sources[source]!;
    const n = node(model.fields, "metadata", "n")!;
    const r = node(model.fields, "metadata", "r")!;
    expect(n.type).toBe("STRING");
    expect(r).toMatchObject({ kind: "scalar", type: "STRING" });
    const table = await tableOf(backend, source);
    const { rows } = await ownerQuery(
      `select id, "${n.column}" as n, "${r.column}" as r from ${table} order by id`,
    );
    expect(rows).toEqual([
      { id: "a", n: "7", r: '{"x":1}' },
      { id: "b", n: "2.5", r: null },
      { id: "c", n: "many", r: "flat" },
    ]);
  });

  it("one load that widens mid-way across days stores what separate loads store", async () => {
    const source = "widen.one-load";
    // rows of two days wait for their COPY when b and then c widen the model
    await backend.load(source, [
      JSON.stringify({ id: "a", timestamp: "2025-01-01T00:00:00Z", metadata: { n: 7, r: { x: 1 } } }),
      JSON.stringify({ id: "d", timestamp: "2025-01-02T00:00:00Z", metadata: { n: 8 } }),
      JSON.stringify({ id: "b", timestamp: "2025-01-02T00:00:01Z", metadata: { n: 2.5 } }),
      JSON.stringify({ id: "c", timestamp: "2025-01-01T00:00:02Z", metadata: { n: "many", r: "flat" } }),
    ]);
    const model = (await backend.schema()).sources[source]!;
    const n = node(model.fields, "metadata", "n")!;
    const r = node(model.fields, "metadata", "r")!;
    expect(n.type).toBe("STRING");
    expect(r).toMatchObject({ kind: "scalar", type: "STRING" });
    const { rows } = await ownerQuery(
      `select id, "${n.column}" as n, "${r.column}" as r from ${await tableOf(backend, source)} order by id`,
    );
    expect(rows).toEqual([
      { id: "a", n: "7", r: '{"x":1}' },
      { id: "b", n: "2.5", r: null },
      { id: "c", n: "many", r: "flat" },
      { id: "d", n: "8", r: null },
    ]);
  });

  it("creates a new source on its first load, readable by the query role", async () => {
    const source = "my.custom-source";
    await backend.load(source, [edgeEvent(1), edgeEvent(2)]);
    const model = (await backend.schema()).sources[source]!;
    expect(model.table).toBe("src_my_custom_source");
    const result = await backend.execute(
      handQuery(`select count(*) as n from ${await tableOf(backend, source)}`, [scalar("n", "INT64")]),
      [],
      { maxRows: 10, timeoutMs: 5000 },
    );
    expect(result.rows).toEqual([{ n: 2 }]);
  });

  it("a malformed line refuses the whole file: nothing stored, no column added, schema version unchanged", async () => {
    const source = EDGE;
    const table = await tableOf(backend, source);
    const before = await backend.schema();
    const countBefore = (await ownerQuery(`select count(*)::int as n from ${table}`)).rows[0].n;
    const columnsBefore = await columnTypes(schema, before.sources[source]!.table);
    const lines = Array.from({ length: 5000 }, (_, i) => edgeEvent(i, { brand_new_field: { deep: i } }));
    lines[4321] = '{"event_message": "cut off';
    const error = await loadError(backend.load(source, lines));
    expect(error.code).toBe("invalid_event");
    expect(error.line).toBe(4322);
    expect(error.message).toContain("line 4322");
    expect((await ownerQuery(`select count(*)::int as n from ${table}`)).rows[0].n).toBe(countBefore);
    expect(await columnTypes(schema, before.sources[source]!.table)).toEqual(columnsBefore);
    expect((await backend.schema()).version).toBe(before.version);
  });

  it("a large load encodes in worker threads: late new fields widen, a late bad line refuses all", async () => {
    const source = "large.load";
    const lines = Array.from({ length: 40_000 }, (_, i) =>
      edgeEvent(i, i === 36_001 ? { late: { deep: 1.5 } } : {}),
    );
    const before = { ...loadWorkerStatistics };
    await backend.load(source, lines);
    expect(loadWorkerStatistics.batches).toBeGreaterThan(before.batches);
    expect(loadWorkerStatistics.failures).toBe(before.failures);
    const model = (await backend.schema()).sources[source]!;
    const deep = node(model.fields, "late", "deep")!;
    expect(deep.type).toBe("FLOAT64");
    const table = await tableOf(backend, source);
    const { rows } = await ownerQuery(`select count(*)::int as n, max("${deep.column}") as d from ${table}`);
    expect(rows[0]).toEqual({ n: 40_000, d: 1.5 });

    const bad = Array.from({ length: 40_000 }, (_, i) => edgeEvent(i));
    bad[33_332] = "{not json";
    const error = await loadError(backend.load(source, bad));
    expect(error).toMatchObject({ code: "invalid_event", line: 33_333 });
    expect((await ownerQuery(`select count(*)::int as n from ${table}`)).rows[0].n).toBe(40_000);
  });

  it("concurrent loads into one new source queue and keep every widening", async () => {
    const source = "concurrent.source";
    const other = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await other.init();
    try {
      await Promise.all(
        [backend, other, backend].map((b, k) =>
          b.load(
            source,
            Array.from({ length: 300 }, (_, i) =>
              // ids of each load's own: a load stores no id the source has
              edgeEvent(i, { id: `c${k}-${i}`, metadata: { [`field${k}`]: i, shared: k } }),
            ),
          ),
        ),
      );
    } finally {
      await other.close();
    }
    // The other instance's widening reaches this one's schema within a second (DESIGN.md §3).
    await vi.waitFor(
      async () => {
        const model = (await backend.schema()).sources[source]!;
        for (const k of [0, 1, 2]) expect(node(model.fields, "metadata", `field${k}`)?.type).toBe("INT64");
      },
      { timeout: 1500, interval: 100 },
    );
    const { rows } = await ownerQuery(`select count(*)::int as n from ${await tableOf(backend, source)}`);
    expect(rows[0].n).toBe(900);
  });

  it("a bad first file of a new source does not create it", async () => {
    const error = await loadError(backend.load("never.created", [edgeEvent(1), "[1, 2]"]));
    expect(error).toMatchObject({ code: "invalid_event", line: 2 });
    expect((await backend.schema()).sources["never.created"]).toBeUndefined();
    const { rowCount } = await ownerQuery(
      "select 1 from pg_tables where schemaname = $1 and tablename = $2",
      [schema, "src_never_created"],
    );
    expect(rowCount).toBe(0);
  });

  it("a timestamp outside TIMESTAMP's range is refused with its line", async () => {
    const error = await loadError(
      backend.load(EDGE, [
        edgeEvent(1),
        // 10^22 read in any unit (s, ms, µs, ns: parse-event.ts tells the unit by size) is past 9999
        JSON.stringify({ timestamp: 10n ** 22n + "", event_message: "far" }),
      ]),
    );
    expect(error).toMatchObject({ code: "invalid_event", line: 2 });
  });

  it("INT64 beyond 2^53 and microsecond timestamps survive load and query exactly", async () => {
    const source = "exact.values";
    await backend.load(source, [
      '{"id":"x1","timestamp":"2025-01-15T09:00:00.123456Z","big":9223372036854775807,"metadata":{"n":9007199254740993,"m":-9223372036854775808}}',
      '{"id":"x2","timestamp":1736931600654321,"big":9007199254740993,"metadata":{"n":1}}',
      '{"id":"x3","timestamp":"2025-01-15 04:00:00.000001-05:00","big":1,"metadata":{"n":2}}',
    ]);
    const model = (await backend.schema()).sources[source]!;
    const big = node(model.fields, "big")!;
    const n = node(model.fields, "metadata", "n")!;
    const meta = node(model.fields, "metadata")!;
    expect(big.type).toBe("INT64");
    const result = await backend.execute(
      handQuery(
        `select id, "timestamp", "${big.column}", "${n.column}", "${meta.column}" from ${await tableOf(backend, source)} where id = any(string_to_array($1, ',')) order by id`,
        [
          scalar("id", "STRING"),
          scalar("timestamp", "TIMESTAMP"),
          scalar("big", "INT64"),
          scalar("n", "INT64"),
          { name: "metadata", type: { kind: "record", node: meta, repeated: true } },
        ],
        [["ids", "STRING"]],
      ),
      ["x1,x2,x3"],
      { maxRows: 10, timeoutMs: 5000 },
    );
    expect(result.rows).toEqual([
      {
        id: "x1",
        timestamp: 1736931600123456,
        big: "9223372036854775807",
        n: "9007199254740993",
        metadata: [{ n: "9007199254740993", m: "-9223372036854775808" }],
      },
      { id: "x2", timestamp: 1736931600654321, big: "9007199254740993", n: 1, metadata: [{ n: 1 }] },
      { id: "x3", timestamp: 1736931600000001, big: 1, n: 2, metadata: [{ n: 2 }] },
    ]);
  });

  it("stores text with tabs, newlines, backslashes exactly (NUL is dropped at parse, on every backend)", async () => {
    const source = "text.escapes";
    const message = "a\tb\nc\\d\re \\N \u00e9\u{1F600}";
    await backend.load(source, [
      JSON.stringify({ id: "t", event_message: message, metadata: { s: "x\u0000y" } }),
    ]);
    const model = (await backend.schema()).sources[source]!;
    const s = node(model.fields, "metadata", "s")!;
    const { rows } = await ownerQuery(
      `select event_message, "${s.column}" as s, ${node(model.fields, "metadata")!.column}::text as j from ${await tableOf(backend, source)}`,
    );
    expect(rows[0].event_message).toBe(message);
    expect(rows[0].s).toBe("xy");
    expect(JSON.parse(rows[0].j)).toEqual({ s: "xy" });
  });

  it("another process sees a widened schema within a second", async () => {
    const other = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 1 });
    await other.init();
    // the backends' clock (Date) stands still from here, after `other` read the schema; timers and
    // I/O run on: "within a second" is then a second of that clock, however slow the machine
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    try {
      const before = await other.schema();
      await backend.load(EDGE, [edgeEvent(99, { id: "noticed", noticed_field: 1 })]);
      // a second after `other` last read the schema, reading it brings the change (the read that
      // notices the second has passed looks again; a read after that one is done has the change)
      vi.setSystemTime(Date.now() + 1000);
      let seen = await other.schema();
      while (seen.sources[EDGE]!.fields.noticed_field === undefined) {
        await new Promise((r) => setTimeout(r, 20));
        seen = await other.schema();
      }
      expect(seen.version).toBeGreaterThan(before.version);
    } finally {
      vi.useRealTimers();
      await other.close();
    }
  });
});
