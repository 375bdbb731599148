import {
  type ColumnValue,
  createFlattener,
  type IngestBatch,
  newSourceSchema,
  parseEvent,
  type SourceSchema,
  widenSchema,
} from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresBackend } from "../src/index.ts";
import { loadWorkerStatistics } from "../src/postgres-load-workers.ts";
import { freshBackend, ownerQuery } from "./helpers.ts";

/**
 * The PostgreSQL loader and ingest write COPY text through core's row encoder: every stored column
 * must be core's flattening of its line under the final schema, whether the line was encoded on
 * the load's thread, in a load worker (after the first 20,000 lines), or by `ingest`.
 */
const NOW = 1_736_931_600_000_000n;

const TRICKY = [
  '{"id":"l01","timestamp":"2025-01-15T09:00:00.123456Z","event_message":"plain","project":"p","metadata":{"status":200,"ok":true,"request":{"method":"GET","path":"/a"},"n":9007199254740993}}',
  '{"id":"l02","timestamp":1736931601000001,"event_message":"us","metadata":{"status":201}}',
  '{"id":"l04","event_message":"caf\\u00e9 \\u2028 \\ud83d\\ude00 \\/ \\"q\\" \\\\","metadata":{"request":{"path":"/\\u00e9"}}}',
  // NUL (PostgreSQL text cannot hold it: dropped) and characters COPY text escapes
  '{"id":"l05","event_message":"a\\u0000b\\u001fc\\n\\t\\r\\\\","metadata":{"request":{"method":"\\u0001\\t"}}}',
  '{"id":"l06","metadata":{"huge":18446744073709551615,"neg":-9223372036854775808,"big":-9007199254740993}}',
  '{"id":"l07","metadata":{"ratio":1.0,"x":1e21,"y":0.5,"z":-0,"w":1E2,"tiny":1e-7}}',
  '{"id":"l08","metadata":{"tags":[["a"],["b",1]],"list":[1,2,3]}}',
  '{"id":"l10","metadata":{"codes":{"b":1,"10":2,"2":3}}}',
  '{"id":12345,"event_message":"numeric id","metadata":{"status":206}}',
  '{"id":"l13","event_message":{"k":"v","n":[1,2]},"project":true,"metadata":{"status":207}}',
  '{"id":"l16","timestamp":"2025-01-16","metadata":{"items":[{"a":1},{"a":2,"b":"x"}]}}',
  '{"id":"l17","metadata":{"request":null,"list":[],"items":[]}}',
  '{"id":"l18","metadata":{"code":5,"flag":false}}',
  '{"id":"l19","metadata":{"code":"x5","status":1.5}}',
  // (no line turns metadata into a STRING here: every field under it would become JSON text)
  '{"id":"l22","timestamp":null,"event_message":null,"metadata":{"request":{"method":"GET","headers":{"a":"1"}}}}',
];

function plainLines(from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      id: `p${String(from + i).padStart(6, "0")}`,
      timestamp: `2025-01-15T08:${String(i % 60).padStart(2, "0")}:00.${String(i % 1e6).padStart(6, "0")}Z`,
      event_message: `GET /x/${i} é\t`,
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

/** every column as PostgreSQL's text, TIMESTAMP as unix microseconds */
async function storedRows(
  backend: PostgresBackend,
  source: SourceSchema,
): Promise<Record<string, unknown>[]> {
  const columns = createFlattener(source).columns;
  const select = columns.map((c) =>
    c.type === "TIMESTAMP"
      ? `(extract(epoch from "${c.column}") * 1000000)::bigint::text as "${c.column}"`
      : `"${c.column}"::text as "${c.column}"`,
  );
  const { rows } = await ownerQuery(
    `select ${select.join(", ")} from "${backend.config.schema}"."${source.table}" order by id collate "C"`,
  );
  return rows.map((row: Record<string, string | null>) =>
    Object.fromEntries(
      columns.map((c) => {
        const v = row[c.column] ?? null;
        // doubles compared as numbers: PostgreSQL prints 1e-07 where JavaScript prints 1e-7
        return [c.column, v !== null && c.type === "FLOAT64" ? Number(v) : v];
      }),
    ),
  );
}

function expectedRows(source: SourceSchema, lines: string[]): Record<string, unknown>[] {
  const flattener = createFlattener(source);
  const asStored = (v: ColumnValue, type: string): unknown => {
    if (v === null) return null;
    if (type === "FLOAT64") return v;
    if (typeof v === "boolean") return v ? "true" : "false";
    // PostgreSQL text cannot hold NUL: COPY drops it
    return typeof v === "string" ? v.replaceAll("\0", "") : String(v);
  };
  return lines
    .map((line, i) => parseEvent(line, i + 1, NOW, "test"))
    .filter((e) => e !== null)
    .map((event) => {
      const values = flattener.flatten(event);
      return Object.fromEntries(
        flattener.columns.map((c, i) => [c.column, asStored(values[i] ?? null, c.type)]),
      );
    })
    .sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0));
}

describe("PostgreSQL load and ingest: every line stored as core flattens it", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ backend, dispose } = await freshBackend("shapes"));
  });
  afterAll(async () => {
    await dispose();
  });

  it("tricky values among 25,000 ordinary lines in one load (on the load's thread and in workers)", async () => {
    const lines = [
      ...plainLines(0, 300),
      ...TRICKY,
      ...plainLines(300, 24_700),
      // ids of their own: a load stores an id once
      ...TRICKY.map((l) => l.replace('"id":"l', '"id":"w').replace('"id":12345', '"id":12346')),
    ];
    const workerBatches = loadWorkerStatistics.batches;
    await backend.load("test.shapes", lines, { nowMicros: NOW });
    expect(loadWorkerStatistics.batches).toBeGreaterThan(workerBatches);
    const source = (await backend.schema()).sources["test.shapes"]!;
    expect(source.fields).toEqual(schemaOf("test.shapes", lines).fields);
    const stored = await storedRows(backend, source);
    const expected = expectedRows(source, lines);
    expect(stored).toHaveLength(expected.length);
    for (let i = 0; i < expected.length; i++) expect(stored[i]).toEqual(expected[i]);
  }, 120_000);

  it("tricky values by ingest, into a source that has ordinary rows", async () => {
    const first = plainLines(0, 200);
    await backend.load("test.shapes2", first, { nowMicros: NOW });
    const events = TRICKY.map((line, i) => parseEvent(line, i + 1, NOW, "test")!);
    const batch: IngestBatch = { source: "test.shapes2", events };
    await backend.ingest([batch]);
    const source = (await backend.schema()).sources["test.shapes2"]!;
    const all = [...first, ...TRICKY];
    expect(source.fields).toEqual(schemaOf("test.shapes2", all).fields);
    const stored = await storedRows(backend, source);
    const expected = expectedRows(source, all);
    expect(stored).toHaveLength(expected.length);
    for (let i = 0; i < expected.length; i++) expect(stored[i]).toEqual(expected[i]);
  });
});
