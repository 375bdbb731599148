import { type Backend, BUILTIN_SOURCES, type FieldNode, QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

let backend: Backend;
const run = { maxRows: 1000, timeoutMs: 10_000 };
const STRING = { kind: "scalar", type: "STRING" } as const;

beforeAll(async () => {
  backend = createClickhouseBackend({ path: chdbTestPath(), database: uniqueDatabase() });
  await backend.init();
});
afterAll(async () => {
  await backend.close();
});

function node(path: string[], fields: Record<string, FieldNode>): FieldNode {
  let n = fields[path[0]!]!;
  for (const key of path.slice(1)) n = n.fields![key]!;
  return n;
}

describe("ClickHouse storage and load (embedded chDB)", () => {
  it("creates the nine built-in sources, empty, idempotently", async () => {
    const schema = await backend.schema();
    expect(Object.keys(schema.sources).sort()).toEqual([...BUILTIN_SOURCES].sort());
    const db = uniqueDatabase();
    const again = createClickhouseBackend({ path: chdbTestPath(), database: db });
    await again.init();
    await again.init();
    expect(Object.keys((await again.schema()).sources)).toHaveLength(9);
    const r = await again.execute(
      handQuery("SELECT count() AS n FROM src_cloudflare_logs_prod", [
        { name: "n", type: { kind: "scalar", type: "INT64" } },
      ]),
      [],
      run,
    );
    expect(r.rows).toEqual([{ n: 0 }]);
    await again.close();
  });

  it("loads events, infers and widens the schema, keeps µs timestamps and 64-bit integers exact", async () => {
    const before = (await backend.schema()).version;
    const progress: number[] = [];
    const summary = await backend.load(
      "test.widen",
      [
        '{"id":"a","timestamp":"2025-01-15T09:00:00.123456Z","event_message":"one","project":"p",' +
          '"metadata":{"status":200,"big":9007199254740993,"request":{"method":"GET"},"tags":["x"]}}',
        "",
        '{"id":"b","timestamp":1736931601000000,"event_message":"two","metadata":{"status":1.5,"request":{"method":"POST"}}}',
        '{"id":"old","timestamp":"2019-03-01T00:00:00Z","event_message":"a different day"}',
      ],
      { onProgress: (p) => progress.push(p.events) },
    );
    expect(summary).toMatchObject({ source: "test.widen", events: 3 });
    expect(progress.at(-1)).toBe(3);
    let schema = await backend.schema();
    expect(schema.version).toBeGreaterThan(before);
    const source = schema.sources["test.widen"]!;
    expect(node(["metadata", "status"], source.fields)).toMatchObject({ kind: "scalar", type: "FLOAT64" });
    const big = node(["metadata", "big"], source.fields);
    const r1 = await backend.execute(
      handQuery(`SELECT id, "timestamp", ${big.column} AS big FROM src_test_widen ORDER BY id`, [
        { name: "id", type: STRING },
        { name: "timestamp", type: { kind: "scalar", type: "TIMESTAMP" } },
        { name: "big", type: { kind: "scalar", type: "INT64" } },
      ]),
      [],
      run,
    );
    expect(r1.rows).toEqual([
      { id: "a", timestamp: 1736931600123456, big: "9007199254740993" },
      { id: "b", timestamp: 1736931601000000, big: null },
      { id: "old", timestamp: 1551398400000000, big: null },
    ]);

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
        `SELECT id, ${status.column} AS status, ${method.column} AS method, ${metadata.column} AS metadata ` +
          "FROM src_test_widen WHERE id IN ('a', 'b', 'c') ORDER BY id",
        [
          { name: "id", type: STRING },
          { name: "status", type: STRING },
          { name: "method", type: STRING },
          { name: "metadata", type: { kind: "record", node: metadata, repeated: true } },
        ],
      ),
      [],
      run,
    );
    expect(r.rows.map((row) => [row.id, row.status, row.method])).toEqual([
      ["a", "200", "GET"],
      ["b", "1.5", "POST"],
      ["c", "teapot", null],
    ]);
    expect(r.rows[0]!.metadata).toEqual([
      { status: "200", big: "9007199254740993", request: [{ method: "GET" }], tags: ["x"] },
    ]);
  });

  it("a malformed line stores nothing, not even a new source", async () => {
    const before = await backend.schema();
    const err = await backend
      .load("test.bad", ['{"id":"x","timestamp":1736931602000000,"event_message":"fine"}', "{not json"])
      .catch((e) => e);
    expect(err).toBeInstanceOf(QesError);
    expect(err).toMatchObject({ code: "invalid_event", line: 2 });
    expect((await backend.schema()).sources["test.bad"]).toBeUndefined();
    expect((await backend.schema()).version).toBe(before.version);

    const err2 = await backend
      .load("test.widen", ['{"id":"y","timestamp":1736931602000000,"metadata":{"brand_new":1}}', "[1]"])
      .catch((e) => e);
    expect(err2).toMatchObject({ code: "invalid_event", line: 2 });
    const r = await backend.execute(
      handQuery("SELECT count() AS n FROM src_test_widen WHERE id = 'y'", [
        { name: "n", type: { kind: "scalar", type: "INT64" } },
      ]),
      [],
      run,
    );
    expect(r.rows).toEqual([{ n: 0 }]);
  });
});
