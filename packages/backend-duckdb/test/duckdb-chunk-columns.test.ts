import {
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBValue,
} from "@duckdb/node-api";
import {
  createFlattener,
  type JsonObject,
  type LogEvent,
  logEventFromJson,
  newSourceSchema,
  type SourceSchema,
  widenForEvent,
} from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectRows } from "../src/duckdb-chunk-columns.ts";
import { type PreparedDuckdbRows, prepareIngestRows } from "../src/duckdb-ingest-prepare.ts";
import { ChunkWriter } from "../src/duckdb-loader.ts";
import { createTableSql, duckdbType, quoteIdent } from "../src/duckdb-storage.ts";

/**
 * The chunk writer lays values out in DuckDB's vector bytes itself (strings inline or pointing
 * into one heap string per column). Its rows must be the ones node-api's own DataChunk API stores
 * for core's flattened values (`setColumnValues`, a value at a time): same strings byte for byte
 * (U+FFFD for a lone surrogate, NUL kept), same integers, doubles (−0 too) and timestamps.
 */
let instance: DuckDBInstance;
let conn: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:");
  conn = await instance.connect();
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

/** node-api's DataChunk API fed core's flattened values: the reference */
async function appendReference(table: string, schema: SourceSchema, events: LogEvent[]): Promise<void> {
  const flattener = createFlattener(schema);
  const types = flattener.columns.map((c) => c.type);
  const appender = await conn.createAppender(table);
  for (let from = 0; from < events.length; from += 2048) {
    const rows = events.slice(from, from + 2048).map((e) => flattener.flatten(e));
    const chunk = DuckDBDataChunk.create(types.map(duckdbType), rows.length);
    for (let c = 0; c < types.length; c++) {
      const values = rows.map((row): DuckDBValue => {
        const v = row[c] ?? null;
        if (v !== null && (types[c] === "TIMESTAMP" || types[c] === "DATETIME"))
          return new DuckDBTimestampValue(v as bigint);
        return v as DuckDBValue;
      });
      chunk.setColumnValues(c, values);
    }
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
  appender.closeSync();
}

async function rowsOf(table: string): Promise<unknown[][]> {
  const r = await conn.runAndReadAll(`SELECT * FROM ${quoteIdent(table)} ORDER BY rowid`);
  return r.getRows();
}

let tables = 0;

/** both writers into tables of their own; the rows, which must be equal */
async function writeBoth(
  bodies: JsonObject[],
): Promise<{ ours: unknown[][]; reference: unknown[][]; schema: SourceSchema }> {
  const schema = newSourceSchema(`chunk${tables++}`);
  const events = bodies.map((body) => logEventFromJson(body, schema.name, 1_736_931_600_000_000n));
  for (const [i, e] of events.entries()) widenForEvent(schema, e.body, i + 1);
  const reference = { ...schema, table: `${schema.table}_reference` };
  await conn.run(createTableSql(schema));
  await conn.run(createTableSql(reference));
  const writer = new ChunkWriter(conn, schema.table);
  await writer.open(schema);
  for (const e of events) writer.add(e);
  writer.close();
  await appendReference(reference.table, schema, events);
  return { ours: await rowsOf(schema.table), reference: await rowsOf(reference.table), schema };
}

/** strings around the 12-byte inline limit, multi-byte, surrogates, control characters */
const STRINGS = [
  "",
  "a",
  "twelve bytes",
  "thirteen byte",
  "é",
  "éééééé",
  "ééééééé",
  "€€€€",
  "€€€€€",
  "😀",
  "😀😀😀",
  "😀😀😀😀",
  "\ud800",
  "a\udc00b",
  "x\ud83d",
  "\ude00y",
  "\u0000",
  "a\u0000b",
  "long text with a NUL \u0000 in the middle of it",
  Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("") +
    "\u007f\u0080\u2028\u2029\ufeff\uffff",
  '"quoted" and \\backslashed\\ and /slashed/',
  "x".repeat(5000),
  "é".repeat(3000),
];

describe("DuckDB chunk writer: the rows node-api's DataChunk API stores", () => {
  it("strings: inline and heap, ASCII and not, surrogates, NUL and control characters", async () => {
    const bodies: JsonObject[] = [];
    for (let i = 0; i < 5000; i++) {
      const a = STRINGS[i % STRINGS.length]!;
      const b = STRINGS[(i * 7 + 3) % STRINGS.length]!;
      bodies.push({
        id: `s${i}`,
        event_message: a,
        // a project is an index key of at most 1,024 bytes (parse-event.ts): the long ones shortened
        ...(i % 3 === 0 ? {} : { project: b.slice(0, 300) }),
        metadata: { a, b, ascii: `row ${i} of plain ascii text`, ...(i % 5 === 0 ? { only: a } : {}) },
      });
    }
    const { ours, reference } = await writeBoth(bodies);
    expect(ours).toHaveLength(5000);
    expect(ours).toEqual(reference);
  });

  it("a surrogate pair split across two rows stays two U+FFFD", async () => {
    const { ours, reference } = await writeBoth([
      { id: "p1", event_message: "ascii", metadata: { s: "a\ud83d" } },
      { id: "p2", event_message: "ascii", metadata: { s: "\ude00b" } },
      { id: "p3", event_message: "é", metadata: { s: "plain" } },
    ]);
    expect(ours).toEqual(reference);
    expect(ours.flat()).toContain("a\ufffd");
    expect(ours.flat()).toContain("\ufffdb");
  });

  it("integers, doubles, booleans, timestamps and NULLs", async () => {
    const ints = [0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 32, -(2 ** 32) - 1, 2 ** 53 - 1, -(2 ** 53 - 1), 1e18];
    const bigs = [2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 53n) - 3n];
    const doubles = [0.5, -0.5, 1e21, -1e-7, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, 123456.789];
    const times = [
      "2025-01-15T09:00:00.123456Z",
      "1969-12-31T23:59:59.999999Z",
      "0001-01-01T00:00:00Z",
      "9999-12-31T23:59:59.999999Z",
      1_736_931_601_000_001,
    ];
    const bodies: JsonObject[] = [];
    for (let i = 0; i < 4500; i++) {
      bodies.push({
        id: `n${i}`,
        ...(i % 11 === 0 ? {} : { timestamp: times[i % times.length]! }),
        metadata: {
          int: i % 13 === 0 ? null : i % 2 ? ints[i % ints.length]! : bigs[i % bigs.length]!,
          float: i % 17 === 0 ? -0 : doubles[i % doubles.length]!,
          mixed: i % 2 ? 1 : 2.5,
          ok: i % 3 === 0,
          ...(i % 4 === 0 ? { nested: { deep: { flag: i % 8 === 0 } } } : {}),
          list: i % 6 === 0 ? [] : [i, "x"],
        },
      });
    }
    const { ours, reference, schema } = await writeBoth(bodies);
    expect(ours).toHaveLength(4500);
    expect(ours).toEqual(reference);
    const float = schema.fields.metadata!.fields!.float!.column!;
    const floats = await conn.runAndReadAll(
      `SELECT count(*) FILTER (WHERE signbit(${quoteIdent(float)}) AND ${quoteIdent(float)} = 0) FROM ${quoteIdent(schema.table)}`,
    );
    expect(floats.getRows()).toEqual([[BigInt(Math.ceil(4500 / 17))]]);
  });

  it("long strings: a chunk is written early, before its strings grow too long to join", async () => {
    // 200 × 200,000 units, past the chunk's limit of 2^25: written as two chunks, not one
    const bodies: JsonObject[] = Array.from({ length: 200 }, (_, i) => ({
      id: `long${i}`,
      event_message: (i % 2 ? "é" : "x").repeat(200_000) + i,
    }));
    const { ours, reference } = await writeBoth(bodies);
    expect(ours).toHaveLength(200);
    expect(ours).toEqual(reference);
  });

  it("refuses a value its column cannot hold instead of storing another", async () => {
    const schema = newSourceSchema(`chunk${tables++}`);
    await conn.run(createTableSql(schema));
    const writer = new ChunkWriter(conn, schema.table);
    await writer.open(schema);
    expect(() => writer.add({ id: "x", timestamp: "never" as unknown as bigint, body: { id: "x" } })).toThrow(
      /integer/,
    );
    expect(() => writer.add({ id: "y", timestamp: 2n ** 64n, body: { id: "y" } })).toThrow(/64-bit/);
    // a refused row leaves nothing behind: the next one is whole
    writer.add({ id: "z", timestamp: 5n, body: { id: "z", event_message: "m" } });
    writer.close();
    expect(await rowsOf(schema.table)).toEqual([["z", new DuckDBTimestampValue(5n), "m", null]]);
  });
});

describe("DuckDB rows prepared by the ingest preparer", () => {
  /** bodies with NULLs, long and short strings, numbers and times spread over the rows */
  function mixed(count: number): JsonObject[] {
    return Array.from({ length: count }, (_, i) => ({
      id: `m${i}`,
      timestamp: 1_736_931_600_000_000 + i,
      event_message: STRINGS[i % STRINGS.length]!,
      metadata: {
        n: i % 3 === 0 ? null : i * 2 ** 33,
        x: i % 4 === 0 ? null : i / 7,
        ok: i % 5 === 0 ? null : i % 2 === 0,
        s: i % 6 === 0 ? null : STRINGS[(i * 5) % STRINGS.length]!,
        tags: i % 7 === 0 ? null : [`t${i}`],
      },
    }));
  }

  it("are the rows the writer stores itself; rows left out of a chunk leave the others whole", async () => {
    const bodies = mixed(2 * 2048 + 301);
    const schema = newSourceSchema(`prep${tables++}`);
    const events = bodies.map((body) => logEventFromJson(body, schema.name, 1_736_931_600_000_000n));
    for (const [i, e] of events.entries()) widenForEvent(schema, e.body, i + 1);
    // the table's columns in another order than core's: the writer puts each in its place
    await conn.run(createTableSql(schema));
    const last = Object.values(schema.fields).find((f) => f.name === "metadata")!.fields!.s!.column!;
    await conn.run(`ALTER TABLE ${quoteIdent(schema.table)} DROP COLUMN ${quoteIdent(last)}`);
    await conn.run(`ALTER TABLE ${quoteIdent(schema.table)} ADD COLUMN ${quoteIdent(last)} VARCHAR`);
    const direct = { ...schema, table: `${schema.table}_direct` };
    await conn.run(createTableSql(direct));

    // every row but those at indexes ≡ 0 or 2 (mod 3) and a run across validity words
    const kept = (i: number) => i % 3 === 1 && !(i > 60 && i < 70);
    const { chunks } = prepareIngestRows(schema, events).rows as PreparedDuckdbRows;
    expect(chunks.map((c) => c.rows)).toEqual([2048, 2048, 301]);
    const writer = new ChunkWriter(conn, schema.table);
    await writer.open(schema);
    let at = 0;
    for (const chunk of chunks) {
      const rows = Array.from({ length: chunk.rows }, (_, r) => r).filter((r) => kept(at + r));
      at += chunk.rows;
      writer.appendInCoreOrder(selectRows(chunk, rows));
    }
    writer.close();
    const reference = new ChunkWriter(conn, direct.table);
    await reference.open(direct);
    for (const [i, e] of events.entries()) if (kept(i)) reference.add(e);
    reference.close();

    const columns = createFlattener(schema)
      .columns.map((c) => quoteIdent(c.column))
      .join(", ");
    const read = async (table: string) =>
      (await conn.runAndReadAll(`SELECT ${columns} FROM ${quoteIdent(table)} ORDER BY rowid`)).getRows();
    const ours = await read(schema.table);
    expect(ours).toHaveLength(events.filter((_, i) => kept(i)).length);
    expect(ours).toEqual(await read(direct.table));
  });
});
