import {
  type ColumnValue,
  cloneSourceSchema,
  createFlattener,
  type JsonObject,
  type JsonValue,
  newSourceSchema,
  parseEvent,
  schemaCoversEvent,
  widenSchema,
} from "@qes/core";
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../test/support/prng.ts";
import { createCopyRowEncoder } from "../src/postgres-copy-row.ts";

const KEYS = ["a", "b", "c", "id", "timestamp", "project"];

function randomValue(rnd: () => number, depth: number): JsonValue {
  const r = rnd();
  if (depth > 3 || r < 0.45) {
    const s = rnd();
    if (s < 0.15) return null;
    if (s < 0.35) return Math.floor(rnd() * 100);
    if (s < 0.45) return rnd() * 10;
    if (s < 0.55) return 2n ** 60n;
    if (s < 0.7) return rnd() < 0.5;
    // characters COPY text escapes, inside records' JSON text too
    if (s < 0.75) return 'q\\ "\t\n\r\0';
    return `s${Math.floor(rnd() * 5)}`;
  }
  if (r < 0.75) return randomObject(rnd, depth + 1);
  const n = Math.floor(rnd() * 4);
  const kind = rnd();
  return Array.from({ length: n }, () =>
    kind < 0.4
      ? randomObject(rnd, depth + 1)
      : kind < 0.8
        ? randomValue(rnd, 99)
        : randomValue(rnd, depth + 1),
  );
}

function randomObject(rnd: () => number, depth: number): JsonObject {
  const out: JsonObject = {};
  for (const key of KEYS) if (rnd() < 0.5) out[key] = randomValue(rnd, depth);
  return out;
}

describe("schemaCoversEvent agrees with core's widenSchema", () => {
  it("on 20,000 random events over evolving schemas", () => {
    const rnd = mulberry32(7);
    let disagreements = 0;
    for (let round = 0; round < 200; round++) {
      const schema = newSourceSchema(`s${round}`);
      for (let i = 0; i < 100; i++) {
        const body = randomObject(rnd, 0);
        const covered = schemaCoversEvent(schema.fields, body);
        const changes = widenSchema(cloneSourceSchema(schema), body);
        if (covered !== (changes.length === 0)) disagreements++;
        expect({
          body: JSON.stringify(body, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
          covered,
        }).toEqual({
          body: JSON.stringify(body, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
          covered: changes.length === 0,
        });
        widenSchema(schema, body);
      }
    }
    expect(disagreements).toBe(0);
  });

  it("a seeded edge-like event is covered once its schema has seen it", () => {
    const schema = newSourceSchema("edge");
    const event = {
      event_message: "GET",
      metadata: {
        request: { method: "GET", headers: { x: "1" } },
        response: { status_code: 200 },
        tags: ["a"],
      },
    };
    expect(schemaCoversEvent(schema.fields, event)).toBe(false);
    widenSchema(schema, event);
    expect(schemaCoversEvent(schema.fields, event)).toBe(true);
    expect(schemaCoversEvent(schema.fields, { metadata: { response: { status_code: 1.5 } } })).toBe(false);
  });
});

/**
 * COPY text of one of core's values, written here without the encoder's code: the COPY rows must
 * be core's flattening (`createFlattener`) and nothing of their own.
 */
function copyOf(value: ColumnValue, type: string): string {
  if (value === null) return "\\N";
  if (type === "TIMESTAMP") {
    const micros = value as bigint;
    const iso = new Date(Number(micros / 1000n)).toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${String(micros % 1_000_000n).padStart(6, "0")}+00`;
  }
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "string")
    return value.replace(
      /[\\\t\n\r\0]/g,
      (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "" })[c]!,
    );
  return String(value);
}

describe("the COPY rows are core's flattening, written as COPY text", () => {
  it("on 20,000 random events, widened first", () => {
    const rnd = mulberry32(11);
    for (let round = 0; round < 100; round++) {
      const schema = newSourceSchema(`s${round}`);
      const events = Array.from({ length: 200 }, (_, i) => {
        const body = randomObject(rnd, 0);
        if (rnd() < 0.3) body.event_message = rnd() < 0.5 ? "tab\there\\ \n\0" : 5;
        if (rnd() < 0.3) body.project = rnd() < 0.5 ? "p" : { nested: true };
        if (rnd() < 0.2) body.id = 12;
        // an id is a string or a number (parseEvent refuses any other)
        else if (body.id !== undefined && typeof body.id !== "string") delete body.id;
        // and an id or project is at most 1,024 bytes (both are index keys)
        const text = (v: unknown) =>
          JSON.stringify(v, (_, x) => (typeof x === "bigint" ? Number(x) : x)) ?? "";
        if (text(body.project).length > 1000) delete body.project;
        delete body.timestamp;
        return parseEvent(
          JSON.stringify(body, (_, v) => (typeof v === "bigint" ? Number(v) : v)),
          i + 1,
          1_736_931_600_123_456n + BigInt(i) * 86_400_000_001n,
          "test",
        )!;
      });
      for (const event of events) widenSchema(schema, event.body);
      const flattener = createFlattener(schema);
      const encoder = createCopyRowEncoder(schema);
      expect(encoder.columns).toEqual(flattener.columns);
      for (const event of events) {
        const expected = flattener
          .flatten(event)
          .map((v, i) => copyOf(v, flattener.columns[i]!.type))
          .join("\t");
        expect(encoder.encode(event)).toBe(expected);
      }
    }
  });

  it("escapes the JSON text of records and arrays as COPY text", () => {
    const schema = newSourceSchema("escapes");
    const event = parseEvent('{"id":"x","m":{"s":"a\\\\b \\"q\\" \\t\\u0000"},"l":["\\\\"]}', 1, 1n, "test")!;
    widenSchema(schema, event.body);
    const flattener = createFlattener(schema);
    expect(flattener.columns.map((c) => c.type).slice(4)).toEqual(["JSON", "STRING", "JSON"]);
    expect(createCopyRowEncoder(schema).encode(event).split("\t").slice(4)).toEqual(
      flattener
        .flatten(event)
        .slice(4)
        .map((v, i) => copyOf(v, flattener.columns[i + 4]!.type)),
    );
  });

  it("keeps INT64 beyond 2^53 exact", () => {
    const schema = newSourceSchema("big");
    const event = parseEvent(
      '{"id":"x","n":9223372036854775807,"m":{"k":-9007199254740993,"f":1e300}}',
      1,
      1n,
      "test",
    )!;
    widenSchema(schema, event.body);
    expect(createCopyRowEncoder(schema).encode(event).split("\t").slice(4)).toEqual([
      "9223372036854775807",
      '{"k":-9007199254740993,"f":1e+300}',
      "-9007199254740993",
      "1e+300",
    ]);
  });
});
