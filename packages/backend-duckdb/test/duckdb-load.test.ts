import { join } from "node:path";
import { BUILTIN_SOURCES, type FieldNode, QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { fileBackend, handQuery } from "./helpers.ts";

const { backend, dir } = fileBackend("load");
const run = { maxRows: 1000, timeoutMs: 10_000 };

function node(path: string[], fields: Record<string, FieldNode>): FieldNode {
  let n = fields[path[0]!]!;
  for (const key of path.slice(1)) n = n.fields![key]!;
  return n;
}

describe("DuckDB storage and load", () => {
  it("creates the nine built-in sources, empty, idempotently", async () => {
    const schema = await backend.schema();
    expect(Object.keys(schema.sources).sort()).toEqual([...BUILTIN_SOURCES].sort());
    const again = createDuckdbBackend({ path: ":memory:" });
    await again.init();
    await again.init();
    expect(Object.keys((await again.schema()).sources)).toHaveLength(9);
    await again.close();
  });

  it("loads events, infers and widens the schema, bumps the schema version", async () => {
    const before = (await backend.schema()).version;
    const progress: number[] = [];
    const summary = await backend.load(
      "test.widen",
      [
        '{"id":"a","timestamp":"2025-01-15T09:00:00.123456Z","event_message":"one","project":"p",' +
          '"metadata":{"status":200,"request":{"method":"GET"},"tags":["x"]}}',
        "",
        '{"id":"b","timestamp":1736931601000000,"event_message":"two","metadata":{"status":1.5,"request":{"method":"POST"}}}',
      ],
      { onProgress: (p) => progress.push(p.events) },
    );
    expect(summary).toMatchObject({ source: "test.widen", events: 2 });
    expect(progress.at(-1)).toBe(2);
    let schema = await backend.schema();
    expect(schema.version).toBeGreaterThan(before);
    const source = schema.sources["test.widen"]!;
    expect(source.table).toBe("src_test_widen");
    expect(node(["metadata", "status"], source.fields)).toMatchObject({ kind: "scalar", type: "FLOAT64" });

    // a conflicting type widens to STRING; earlier rows keep their values as text
    const v = schema.version;
    await backend.load("test.widen", [
      '{"id":"c","timestamp":1736931602000000,"metadata":{"status":"teapot"}}',
    ]);
    schema = await backend.schema();
    expect(schema.version).toBeGreaterThan(v);
    const status = node(["metadata", "status"], schema.sources["test.widen"]!.fields);
    expect(status.type).toBe("STRING");
    const method = node(["metadata", "request", "method"], schema.sources["test.widen"]!.fields);
    const metadata = schema.sources["test.widen"]!.fields.metadata!;
    const r = await backend.execute(
      handQuery(
        `select id, "timestamp", ${status.column} as status, ${method.column} as method, ${metadata.column} as metadata ` +
          `from src_test_widen order by id`,
        [
          { name: "id", type: { kind: "scalar", type: "STRING" } },
          { name: "timestamp", type: { kind: "scalar", type: "TIMESTAMP" } },
          { name: "status", type: { kind: "scalar", type: "STRING" } },
          { name: "method", type: { kind: "scalar", type: "STRING" } },
          { name: "metadata", type: { kind: "record", node: metadata, repeated: true } },
        ],
      ),
      [],
      run,
    );
    expect(r.rows).toEqual([
      {
        id: "a",
        timestamp: 1736931600123456,
        status: "200",
        method: "GET",
        metadata: [{ status: "200", request: [{ method: "GET" }], tags: ["x"] }],
      },
      {
        id: "b",
        timestamp: 1736931601000000,
        status: "1.5",
        method: "POST",
        metadata: [{ status: "1.5", request: [{ method: "POST" }] }],
      },
      {
        id: "c",
        timestamp: 1736931602000000,
        status: "teapot",
        method: null,
        metadata: [{ status: "teapot" }],
      },
    ]);
    // a later load that widens nothing keeps the version
    const v2 = (await backend.schema()).version;
    await backend.load("test.widen", ['{"metadata":{"status":"ok"}}']);
    expect((await backend.schema()).version).toBe(v2);
  });

  it("widens a nested record to STRING with its JSON text, for old and new rows", async () => {
    await backend.load("test.record", ['{"id":"1","metadata":{"r":{"a":1,"b":{"c":"x"}}}}']);
    await backend.load("test.record", [
      '{"id":"2","metadata":{"r":"plain"}}',
      '{"id":"3","metadata":{"r":{"a":2}}}',
    ]);
    const source = (await backend.schema()).sources["test.record"]!;
    const r = node(["metadata", "r"], source.fields);
    expect(r).toMatchObject({ kind: "scalar", type: "STRING" });
    const res = await backend.execute(
      handQuery(`select ${r.column} as r from ${source.table} order by id`, [
        { name: "r", type: { kind: "scalar", type: "STRING" } },
      ]),
      [],
      run,
    );
    expect(res.rows.map((row) => JSON.parse(row.r === "plain" ? '"plain"' : (row.r as string)))).toEqual([
      { a: 1, b: { c: "x" } },
      "plain",
      { a: 2 },
    ]);
  });

  it("keeps an INT64 beyond 2^53 exact through load and query", async () => {
    await backend.load("test.bigint", [
      '{"id":"x","event_message":"big","metadata":{"n":9007199254740993,"neg":-9223372036854775808,"small":42}}',
    ]);
    const source = (await backend.schema()).sources["test.bigint"]!;
    const n = node(["metadata", "n"], source.fields);
    const neg = node(["metadata", "neg"], source.fields);
    expect(n.type).toBe("INT64");
    const r = await backend.execute(
      handQuery(
        `select ${n.column} as n, ${neg.column} as neg, ${n.column} + 1 as plus, ${source.fields.metadata!.column} as m from ${source.table}`,
        [
          { name: "n", type: { kind: "scalar", type: "INT64" } },
          { name: "neg", type: { kind: "scalar", type: "INT64" } },
          { name: "plus", type: { kind: "scalar", type: "INT64" } },
          { name: "m", type: { kind: "record", node: source.fields.metadata!, repeated: false } },
        ],
      ),
      [],
      run,
    );
    expect(r.rows).toEqual([
      {
        n: "9007199254740993",
        neg: "-9223372036854775808",
        plus: "9007199254740994",
        m: { n: "9007199254740993", neg: "-9223372036854775808", small: 42 },
      },
    ]);
  });

  it("binds positional text parameters and casts them in SQL", async () => {
    const r = await backend.execute(
      {
        ...handQuery("select cast($1 as bigint) + 1 as n, cast($2 as timestamp) as t, $3::varchar as z", [
          { name: "n", type: { kind: "scalar", type: "INT64" } },
          { name: "t", type: { kind: "scalar", type: "TIMESTAMP" } },
          { name: "z", type: { kind: "scalar", type: "STRING" } },
        ]),
        params: [
          { name: "a", type: "INT64", kind: "endpoint" },
          { name: "b", type: "TIMESTAMP", kind: "endpoint" },
          { name: "c", type: "STRING", kind: "endpoint" },
        ],
      },
      ["9007199254740993", "2025-01-15 09:00:00.123456", null],
      run,
    );
    expect(r.rows).toEqual([{ n: "9007199254740994", t: 1736931600123456, z: null }]);
  });

  it("stores nothing when a line is malformed, and names the line", async () => {
    const version = (await backend.schema()).version;
    const err = await backend
      .load("test.bad", [
        '{"event_message":"ok","metadata":{"a":1}}',
        '{"event_message":"ok2"}',
        '{"event_message": oops}',
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QesError);
    expect((err as QesError).code).toBe("invalid_event");
    expect((err as QesError).line).toBe(3);
    expect((err as QesError).message).toMatch(/line 3/);
    const schema = await backend.schema();
    expect(schema.version).toBe(version);
    expect(schema.sources["test.bad"]).toBeUndefined();
    // nothing of a failed load into an existing source remains either
    await expect(backend.load("test.bigint", ['{"metadata":{"fresh":true}}', "[1]"])).rejects.toMatchObject({
      code: "invalid_event",
      line: 2,
    });
    const r = await backend.execute(
      handQuery("select count(*) as n from src_test_bigint", [
        { name: "n", type: { kind: "scalar", type: "INT64" } },
      ]),
      [],
      run,
    );
    expect(r.rows).toEqual([{ n: 1 }]);
    expect((await backend.schema()).sources["test.bigint"]!.fields.metadata!.fields!.fresh).toBeUndefined();
  });

  it("widens a column while queries on it run, and they keep their snapshot", async () => {
    const lines = (n: number, value: (i: number) => unknown) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ event_message: `e${i}`, metadata: { a: value(i) } }),
      );
    await backend.load(
      "test.concurrent",
      lines(5000, (i) => i),
    );
    const a = (await backend.schema()).sources["test.concurrent"]!.fields.metadata!.fields!.a!;
    const n = [{ name: "n", type: { kind: "scalar", type: "INT64" } } as const];
    const slow = backend.execute(
      handQuery(
        `select count(*) as n from src_test_concurrent x, src_test_concurrent y where x.${a.column} >= 0`,
        n,
      ),
      [],
      run,
    );
    const widen = backend.load(
      "test.concurrent",
      lines(5000, (i) => `s${i}`),
    );
    const counts = Promise.all(
      Array.from({ length: 5 }, () =>
        backend.execute(handQuery("select count(*) as n from src_test_concurrent", n), [], run),
      ),
    );
    expect((await slow).rows).toEqual([{ n: 25_000_000 }]);
    await widen;
    for (const r of await counts) expect([5000, 10000]).toContain(r.rows[0]!.n);
    expect((await backend.schema()).sources["test.concurrent"]!.fields.metadata!.fields!.a!.type).toBe(
      "STRING",
    );
  });

  it("persists the schema across a reopen", async () => {
    const path = join(dir, "reopen.duckdb");
    const a = createDuckdbBackend({ path });
    await a.init();
    await a.load("cloudflare.logs.prod", [
      '{"event_message":"x","metadata":{"response":{"status_code":200}}}',
    ]);
    const saved = await a.schema();
    await a.close();
    const b = createDuckdbBackend({ path });
    await b.init();
    expect(await b.schema()).toEqual(saved);
    await b.close();
  });

  it("refuses a write that arrives while it closes, instead of running it on a closed connection", async () => {
    const b = createDuckdbBackend({ path: join(dir, "closing.duckdb") });
    await b.init();
    const closing = b.close();
    // before: close waited (for the time indexes' first read) and a load queued meanwhile ran on
    // the admin connection as it was closed — DuckDB's "bad_weak_ptr", and the process ended
    await expect(
      b.load("closing.src", [JSON.stringify({ timestamp: "2025-01-15T10:00:00Z", event_message: "x" })]),
    ).rejects.toMatchObject({ code: "backend_unavailable" });
    await closing;
    const again = createDuckdbBackend({ path: join(dir, "closing.duckdb") });
    await again.init();
    expect(Object.keys((await again.schema()).sources)).not.toContain("closing.src");
    await again.close();
  });
});
