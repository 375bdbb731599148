import {
  type ColumnValue,
  contentEventId,
  createFlattener,
  newSourceSchema,
  type OutputColumn,
  parseEvent,
  QesError,
  type SourceSchema,
  widenSchema,
} from "@qes/core";
import { describe, expect, it } from "vitest";
import { fileBackend, handQuery } from "./helpers.ts";

/**
 * Whatever path a line takes into DuckDB (the engine's JSON functions or core's flattener), the
 * stored row must be the one core shapes: these lines hold the values whose JSON parsing or
 * printing differs between DuckDB (yyjson) and JavaScript, and every stored column is compared
 * with core's flattening of the line under the final schema.
 */
const { backend } = fileBackend("shapes");
const run = { maxRows: 10_000, timeoutMs: 20_000 };
const NOW = 1_736_931_600_000_000n;

const TRICKY = [
  '{"id":"l01","timestamp":"2025-01-15T09:00:00.123456Z","event_message":"plain","project":"p","metadata":{"status":200,"ok":true,"request":{"method":"GET","path":"/a"},"n":9007199254740993}}',
  // 16-digit microsecond timestamps, as a number and as a string
  '{"id":"l02","timestamp":1736931601000001,"event_message":"us","metadata":{"status":201}}',
  '{"id":"l03","timestamp":"1736931601000002","event_message":"us text","metadata":{"status":202}}',
  // unicode escapes, a surrogate pair, an escaped slash, U+2028
  '{"id":"l04","event_message":"caf\\u00e9 \\u2028 \\ud83d\\ude00 \\/ \\"q\\" \\\\","metadata":{"request":{"path":"/\\u00e9"}}}',
  // NUL and other control characters
  '{"id":"l05","event_message":"a\\u0000b\\u001fc\\n\\t","metadata":{"request":{"method":"\\u0001"}}}',
  // an integer beyond INT64 is FLOAT64; one within is exact
  '{"id":"l06","metadata":{"huge":18446744073709551615,"neg":-9223372036854775808}}',
  // number forms JavaScript prints differently from how they were written
  '{"id":"l07","metadata":{"ratio":1.0,"x":1e21,"y":0.5,"z":-0,"w":1E2}}',
  // nested arrays and arrays of scalars
  '{"id":"l08","metadata":{"tags":[["a"],["b",1]],"list":[1,2,3]}}',
  // duplicate keys: the last one wins, as in JSON.parse
  '{"id":"l09","metadata":{"status":203,"status":204,"request":{"method":"A","method":"B"}}}',
  // integer-like keys, which JavaScript orders first
  '{"id":"l10","metadata":{"codes":{"b":1,"10":2,"2":3}}}',
  // whitespace between tokens
  '{ "id" : "l11" , "event_message" : "spaced" , "metadata" : { "status" : 205 , "request" : { "method" : "PUT" } } }',
  '{"id":12345,"event_message":"numeric id","metadata":{"status":206}}',
  '{"id":"l13","event_message":{"k":"v","n":[1,2]},"project":true,"metadata":{"status":207}}',
  '{"id":"l14","timestamp":"2025-01-15T10:00:00+01:00","metadata":{"status":208}}',
  '{"id":"l15","timestamp":"2025-01-15 09:00:01.5","metadata":{"status":209}}',
  '{"id":"l16","timestamp":"2025-01-16","metadata":{"items":[{"a":1},{"a":2,"b":"x"}]}}',
  '{"id":"l17","metadata":{"request":null,"list":[],"items":[]}}',
  '{"id":"l18","metadata":{"code":5,"flag":false}}',
  '{"id":"l19","metadata":{"code":"x5","status":1.5}}',
  '{"id":"l20","timestamp":"2025-01-15T09:00:00.1234567Z","metadata":{"status":210,"empty":{}}}',
  '{"id":"l21","metadata":"not an object"}',
  '{"id":"l22","timestamp":null,"event_message":null,"metadata":{"request":{"method":"GET","headers":{"a":"1"}}}}',
];

/** ordinary edge-like lines, the shape most loads consist of */
function plainLines(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      id: `p${String(from + i).padStart(5, "0")}`,
      timestamp: `2025-01-15T08:${String(i % 60).padStart(2, "0")}:00.${String(i).padStart(6, "0")}Z`,
      event_message: `GET /x/${i} é`,
      project: i % 3 === 0 ? "a" : "b",
      metadata: {
        status: 200 + (i % 5),
        request: { method: i % 2 ? "GET" : "POST", path: `/x/${i}`, headers: { a: String(i) } },
        ...(i % 7 === 0 ? { code: i } : {}),
      },
    }),
  );
}

function schemaOf(source: string, lines: string[]): SourceSchema {
  const schema = newSourceSchema(source);
  for (const [i, line] of lines.entries()) {
    const event = parseEvent(line, i + 1, NOW, "test");
    if (event) widenSchema(schema, event.body);
  }
  return schema;
}

/** the wire form of a value as the query below returns it: all columns read as text */
function asText(value: ColumnValue): string | null {
  if (value === null) return null;
  if (typeof value === "number") return String(value);
  return String(value);
}

async function storedRows(source: SourceSchema): Promise<Record<string, unknown>[]> {
  const columns = createFlattener(source).columns;
  const select = columns.map((c) => {
    const col = `"${c.column}"`;
    if (c.type === "TIMESTAMP" || c.type === "DATETIME")
      return `cast(epoch_us(${col}) as varchar) as c_${c.column}`;
    // FLOAT64 compared as numbers: the engine's and JavaScript's printing of a double differ
    if (c.type === "FLOAT64") return `${col} as c_${c.column}`;
    return `cast(${col} as varchar) as c_${c.column}`;
  });
  const out: OutputColumn[] = columns.map((c) => ({
    name: `c_${c.column}`,
    type: { kind: "scalar", type: c.type === "FLOAT64" ? "FLOAT64" : "STRING" },
  }));
  const r = await backend.execute(
    handQuery(`select ${select.join(", ")} from "${source.table}" order by id`, out),
    [],
    run,
  );
  return r.rows;
}

function expectedRows(source: SourceSchema, lines: string[]): Record<string, unknown>[] {
  const flattener = createFlattener(source);
  const rows = lines
    .map((line, i) => parseEvent(line, i + 1, NOW, "test"))
    .filter((e) => e !== null)
    .map((event) => {
      const values = flattener.flatten(event);
      return Object.fromEntries(
        flattener.columns.map((c, i) => {
          const v = values[i] ?? null;
          return [`c_${c.column}`, c.type === "FLOAT64" ? v : asText(v)];
        }),
      );
    });
  return rows.sort((a, b) => String(a.c_id).localeCompare(String(b.c_id), "en", { sensitivity: "variant" }));
}

describe("DuckDB load: every line stored as core shapes it", () => {
  it("tricky values, before and among ordinary lines, in one load", async () => {
    const lines = [...plainLines(0, 300), ...TRICKY, ...plainLines(300, 300)];
    await backend.load("test.shapes", lines, { nowMicros: NOW });
    const source = (await backend.schema()).sources["test.shapes"]!;
    expect(source.fields).toEqual(schemaOf("test.shapes", lines).fields);
    const stored = await storedRows(source);
    const expected = expectedRows(source, lines);
    stored.sort((a, b) => String(a.c_id).localeCompare(String(b.c_id), "en", { sensitivity: "variant" }));
    expect(stored).toHaveLength(expected.length);
    for (let i = 0; i < expected.length; i++) expect(stored[i]).toEqual(expected[i]);
  });

  it("ordinary lines loaded after the schema settled, then tricky ones into the same source", async () => {
    const first = plainLines(1000, 500);
    const second = [...TRICKY, ...plainLines(1500, 500)];
    await backend.load("test.shapes2", first, { nowMicros: NOW });
    await backend.load("test.shapes2", second, { nowMicros: NOW });
    const source = (await backend.schema()).sources["test.shapes2"]!;
    const all = [...first, ...second];
    expect(source.fields).toEqual(schemaOf("test.shapes2", all).fields);
    const stored = await storedRows(source);
    stored.sort((a, b) => String(a.c_id).localeCompare(String(b.c_id), "en", { sensitivity: "variant" }));
    const expected = expectedRows(source, all);
    expect(stored).toHaveLength(expected.length);
    for (let i = 0; i < expected.length; i++) expect(stored[i]).toEqual(expected[i]);
  });

  it("gives an event without id the id ingest derives from its content", async () => {
    const lines = plainLines(0, 3).map((l) => l.replace(/"id":"p\d+",/, ""));
    await backend.load("test.noid", lines);
    const r = await backend.execute(
      handQuery("select id from src_test_noid", [{ name: "id", type: { kind: "scalar", type: "STRING" } }]),
      [],
      run,
    );
    const ids = r.rows.map((row) => row.id as string).sort();
    expect(ids).toEqual(lines.map((l) => contentEventId("test.noid", JSON.parse(l))).sort());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  // JSON that DuckDB's parser accepts and JSON.parse refuses: the load fails at that line
  for (const [what, bad] of [
    ["a raw tab inside a string", '{"id":"bad","event_message":"a\tb"}'],
    ["a trailing comma", '{"id":"bad","metadata":{"a":1,}}'],
    ["NaN", '{"id":"bad","metadata":{"a":NaN}}'],
    ["a timestamp that names no day", '{"id":"bad","timestamp":"2025-02-30T00:00:00Z"}'],
  ] as const) {
    it(`refuses ${what} with the line number, storing nothing`, async () => {
      const lines = [...plainLines(0, 50), bad, ...plainLines(50, 50)];
      const err = await backend.load("test.refused", lines).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QesError);
      expect(err).toMatchObject({ code: "invalid_event", line: 51 });
      expect((await backend.schema()).sources["test.refused"]).toBeUndefined();
    });
  }
});
