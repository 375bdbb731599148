import { describe, expect, it } from "vitest";
import { createFlattener, flattenEvent } from "../src/schema/flatten-event.ts";
import {
  builtinLogSchema,
  countFields,
  FieldLimitError,
  newSourceSchema,
  physicalColumns,
  widenSchema,
} from "../src/schema/infer-schema.ts";
import { parseEvent } from "../src/schema/parse-event.ts";
import { BUILTIN_SOURCES } from "../src/schema/schema-model.ts";

const NOW = 1_736_931_600_000_000n;
const ev = (o: unknown) => parseEvent(JSON.stringify(o), 1, NOW, "test")!;

describe("schema inference", () => {
  it("names tables safely and uniquely", () => {
    expect(newSourceSchema("cloudflare.logs.prod").table).toBe("src_cloudflare_logs_prod");
    expect(newSourceSchema("postgrest.logs.prod", ["src_postgrest_logs_prod"]).table).toBe(
      "src_postgrest_logs_prod_2",
    );
    // never two `_` in a row (PostgreSQL's partition names are `<table>__<day>`), also where a long
    // name is cut right after a separator and then takes a collision's suffix
    const cutAtSeparator = `${"a".repeat(49)}.b`;
    const first = newSourceSchema(cutAtSeparator).table;
    expect(first).toBe(`src_${"a".repeat(49)}`);
    expect(newSourceSchema(cutAtSeparator, [first]).table).toBe(`src_${"a".repeat(49)}_2`);
    const all = builtinLogSchema();
    expect(Object.keys(all.sources)).toEqual([...BUILTIN_SOURCES]);
    expect(new Set(Object.values(all.sources).map((s) => s.table)).size).toBe(9);
  });

  it("infers types and assigns columns per the layout", () => {
    const s = newSourceSchema("edge");
    const changes = widenSchema(
      s,
      ev({
        event_message: "GET",
        project: "p",
        metadata: { request: { method: "GET", headers: { x_real_ip: "1.2.3.4" } }, status: 200, f: 0.5 },
        tags: ["a", "b"],
        items: [{ k: 1 }, { k: 2.5, z: true }],
      }).body,
    );
    expect(
      changes.filter((c) => c.op === "add_column").map((c) => [c.path.join("."), (c as any).type]),
    ).toEqual([
      ["metadata", "JSON"],
      ["metadata.request", "PRESENCE"],
      ["metadata.request.method", "STRING"],
      ["metadata.request.headers", "PRESENCE"],
      ["metadata.request.headers.x_real_ip", "STRING"],
      ["metadata.status", "INT64"],
      ["metadata.f", "FLOAT64"],
      ["tags", "JSON"],
      ["items", "JSON"],
    ]);
    expect(s.fields.items!.fields!.k).toEqual({ name: "k", kind: "scalar", type: "FLOAT64" });
    expect(s.fields.items!.fields!.z!.column).toBeUndefined();
    expect(s.fields.tags).toMatchObject({ kind: "array", type: "STRING" });
    expect(physicalColumns(s).map((c) => c.column)).toEqual([
      "id",
      "timestamp",
      "event_message",
      "project",
      ...["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"],
    ]);
    expect(widenSchema(s, ev({ metadata: { status: 404 } }).body)).toEqual([]);
  });

  it("widens INT64 to FLOAT64 and conflicts to STRING", () => {
    const s = newSourceSchema("x");
    widenSchema(s, ev({ metadata: { n: 1, b: true, r: { a: 1 } } }).body);
    expect(widenSchema(s, ev({ metadata: { n: 1.5 } }).body)).toEqual([
      { op: "alter_column", path: ["metadata", "n"], column: "f2", from: "INT64", to: "FLOAT64" },
    ]);
    expect(widenSchema(s, ev({ metadata: { b: "yes" } }).body)).toEqual([
      { op: "alter_column", path: ["metadata", "b"], column: "f3", from: "BOOL", to: "STRING" },
    ]);
    // a nested record meeting a scalar: a new STRING column backfilled from the top-level JSON
    expect(widenSchema(s, ev({ metadata: { r: "text" } }).body)).toEqual([
      {
        op: "add_column",
        path: ["metadata", "r"],
        column: "f6",
        type: "STRING",
        backfill: { column: "f1", path: ["r"] },
      },
      { op: "drop_column", path: ["metadata", "r"], column: "f4" },
      { op: "drop_column", path: ["metadata", "r", "a"], column: "f5" },
    ]);
    expect(s.fields.metadata!.fields!.r).toEqual({ name: "r", kind: "scalar", type: "STRING", column: "f6" });
    const values = flattenEvent(s, ev({ metadata: { n: 2, b: false, r: { a: 1 } } }));
    expect(values).toMatchObject({ f2: 2, f3: "false", f6: '{"a":1}' });
  });

  it("keeps a record meeting an array of objects a repeated record (and the reverse)", () => {
    const s = newSourceSchema("x");
    widenSchema(s, ev({ metadata: { n: 1, r: { a: 1 } } }).body);
    // the object becomes a one-element array; its fields, now below an array, lose their columns
    expect(widenSchema(s, ev({ metadata: [{ n: 2, k: "new" }] }).body)).toEqual([
      { op: "wrap_in_array", path: ["metadata"], column: "f1" },
      { op: "drop_column", path: ["metadata", "n"], column: "f2" },
      { op: "drop_column", path: ["metadata", "r"], column: "f3" },
      { op: "drop_column", path: ["metadata", "r", "a"], column: "f4" },
      { op: "retype_field", path: ["metadata", "k"] },
    ]);
    expect(s.fields.metadata).toMatchObject({ kind: "records", column: "f1" });
    expect(s.fields.metadata!.fields!.n).toEqual({ name: "n", kind: "scalar", type: "INT64" });
    // an object is then one element: stored as an array, and a new field of it is typed
    expect(widenSchema(s, ev({ metadata: { n: 3 } }).body)).toEqual([]);
    expect(flattenEvent(s, ev({ metadata: { n: 3 } }))).toMatchObject({ f1: '[{"n":3}]' });
    expect(widenSchema(s, ev({ metadata: { b: true } }).body)).toEqual([
      { op: "retype_field", path: ["metadata", "b"] },
    ]);
    // a column freed above is not handed out again in the same widening
    const t = newSourceSchema("t");
    widenSchema(t, ev({ metadata: { n: 1 } }).body);
    expect(widenSchema(t, ev({ metadata: [{ n: 1 }], other: 1 }).body)).toEqual([
      { op: "wrap_in_array", path: ["metadata"], column: "f1" },
      { op: "drop_column", path: ["metadata", "n"], column: "f2" },
      { op: "add_column", path: ["other"], column: "f3", type: "INT64" },
    ]);
    // a nested record: a JSON column filled from the top-level record's text, objects wrapped;
    // that text keeps the object, which reads take as an array of one (`objects`)
    const u = newSourceSchema("u");
    widenSchema(u, ev({ metadata: { r: { a: 1 } } }).body);
    expect(widenSchema(u, ev({ metadata: { r: [{ a: 1 }] } }).body)).toEqual([
      {
        op: "add_column",
        path: ["metadata", "r"],
        column: "f4",
        type: "JSON",
        backfill: { column: "f1", path: ["r"], wrap: true },
      },
      { op: "drop_column", path: ["metadata", "r"], column: "f2" },
      { op: "drop_column", path: ["metadata", "r", "a"], column: "f3" },
    ]);
    expect(u.fields.metadata!.fields!.r).toMatchObject({ kind: "records", column: "f4", objects: true });
    // below an array nothing is stored of its own: the field is marked, once
    const w = newSourceSchema("w");
    widenSchema(w, ev({ metadata: [{ r: [{ a: 1 }] }] }).body);
    expect(widenSchema(w, ev({ metadata: [{ r: { a: 2 } }] }).body)).toEqual([
      { op: "retype_field", path: ["metadata", "r"] },
    ]);
    expect(w.fields.metadata!.fields!.r).toMatchObject({ kind: "records", objects: true });
    expect(widenSchema(w, ev({ metadata: [{ r: { a: 3 } }] }).body)).toEqual([]);
  });

  it("an empty or all-null array of a new field is an array of no type, typed by the next value that says more", () => {
    const s = newSourceSchema("e");
    expect(widenSchema(s, ev({ a: [], b: [null], c: [], d: [], m: { g: [], h: [] } }).body)).toEqual([
      { op: "add_column", path: ["a"], column: "f1", type: "JSON" },
      { op: "add_column", path: ["b"], column: "f2", type: "JSON" },
      { op: "add_column", path: ["c"], column: "f3", type: "JSON" },
      { op: "add_column", path: ["d"], column: "f4", type: "JSON" },
      { op: "add_column", path: ["m"], column: "f5", type: "JSON" },
      { op: "add_column", path: ["m", "g"], column: "f6", type: "JSON" },
      { op: "add_column", path: ["m", "h"], column: "f7", type: "JSON" },
    ]);
    expect(s.fields.a).toEqual({ name: "a", kind: "array", column: "f1" });
    // its stored texts are kept: another empty array changes nothing
    expect(widenSchema(s, ev({ a: [null, null], m: { g: [] } }).body)).toEqual([]);
    const changes = widenSchema(
      s,
      ev({ a: [1], b: "x", c: [{ k: 1 }], d: { k: 2 }, m: { g: { k: 3 }, h: [true] } }).body,
    );
    expect(changes).toEqual([
      { op: "retype_field", path: ["a"] },
      { op: "alter_column", path: ["b"], column: "f2", from: "JSON", to: "STRING" },
      { op: "retype_field", path: ["c"] },
      { op: "retype_field", path: ["c", "k"] },
      { op: "retype_field", path: ["d"] },
      { op: "retype_field", path: ["d", "k"] },
      { op: "retype_field", path: ["m", "g"] },
      { op: "retype_field", path: ["m", "g", "k"] },
      { op: "retype_field", path: ["m", "h"] },
    ]);
    expect(s.fields.a).toMatchObject({ kind: "array", type: "INT64" });
    expect(s.fields.b).toMatchObject({ kind: "scalar", type: "STRING", column: "f2" });
    expect(s.fields.c).toMatchObject({ kind: "records", column: "f3" });
    expect(s.fields.d).toMatchObject({ kind: "records", column: "f4" });
    // a nested field's reads from the top-level record's text are told that objects stand there
    expect(s.fields.m!.fields!.g).toMatchObject({ kind: "records", objects: true, column: "f6" });
    expect(s.fields.m!.fields!.h).toMatchObject({ kind: "array", type: "BOOL" });
    // a top-level object is written as the records field's one element
    const flat = flattenEvent(s, ev({ d: { k: 2 }, a: [] }));
    expect(flat.f4).toBe('[{"k":2}]');
    expect(flat.f1).toBe("[]");
  });

  it("flattens typed values", () => {
    const s = newSourceSchema("x");
    const e = parseEvent(
      '{"id":"i1","timestamp":"2025-01-15T09:00:00.123456Z","event_message":"m","project":7,' +
        '"metadata":{"big":9007199254740993,"req":{"m":"GET"},"arr":[1,2],"recs":[{"a":1}]}}',
      1,
      NOW,
      "test",
    )!;
    widenSchema(s, e.body);
    const f = createFlattener(s);
    const row = Object.fromEntries(f.columns.map((c, i) => [c.path.join("."), f.flatten(e)[i]]));
    expect(row).toEqual({
      id: "i1",
      timestamp: 1736931600123456n,
      event_message: "m",
      project: "7",
      metadata: '{"big":9007199254740993,"req":{"m":"GET"},"arr":[1,2],"recs":[{"a":1}]}',
      "metadata.big": 9007199254740993n,
      "metadata.req": true,
      "metadata.req.m": "GET",
      "metadata.arr": "[1,2]",
      "metadata.recs": '[{"a":1}]',
    });
  });

  it("treats a key named __proto__ as data", () => {
    const s = newSourceSchema("x");
    const e = ev({});
    e.body = JSON.parse('{"metadata":{"__proto__":{"polluted":1},"ok":2}}');
    widenSchema(s, e.body);
    const fields = s.fields.metadata!.fields!;
    expect(Object.keys(fields)).toEqual(["__proto__", "ok"]);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    const saved = JSON.parse(JSON.stringify(s)).fields.metadata.fields;
    expect(Object.getOwnPropertyDescriptor(saved, "__proto__")?.value.kind).toBe("record");
    expect(flattenEvent(s, e)).toMatchObject({ f2: true });
  });

  it("keys named as inherited properties are fields at any depth, and an event without them has NULL there", () => {
    const s = newSourceSchema("x");
    const first = ev({});
    first.body = JSON.parse(
      '{"constructor":"c","toString":1,"__proto__":"p","metadata":{"valueOf":"v","hasOwnProperty":{"a":1}}}',
    );
    widenSchema(s, first.body);
    // top-level keys that an object inherits were taken for the fixed four and dropped
    expect(Object.keys(s.fields)).toEqual(expect.arrayContaining(["constructor", "toString", "__proto__"]));
    const columnOf = (...path: string[]) => {
      let fields = s.fields;
      for (const p of path.slice(0, -1)) fields = fields[p]!.fields!;
      return Object.getOwnPropertyDescriptor(fields, path.at(-1)!)!.value.column as string;
    };
    const stored = flattenEvent(s, first);
    expect(stored[columnOf("constructor")]).toBe("c");
    expect(stored[columnOf("toString")]).toBe(1n);
    expect(stored[columnOf("__proto__")]).toBe("p");
    expect(stored[columnOf("metadata", "valueOf")]).toBe("v");
    // an event without those keys: NULL, not the text of a function or of Object.prototype
    const other = flattenEvent(s, ev({ metadata: { other: 1 } }));
    for (const path of [
      ["constructor"],
      ["toString"],
      ["__proto__"],
      ["metadata", "valueOf"],
      ["metadata", "hasOwnProperty"],
    ]) {
      expect(other[columnOf(...path)], path.join(".")).toBeNull();
    }
  });

  describe("with a field limit", () => {
    it("counts a field first sent as an empty array: a token cannot add columns past the limit with []", () => {
      const schema = newSourceSchema("x");
      const base = countFields(schema.fields);
      const empties = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`e${i}`, []]));
      expect(() => widenSchema(schema, ev(empties).body, base + 4)).toThrow(FieldLimitError);
      expect(widenSchema(newSourceSchema("y"), ev(empties).body, base + 5)).toHaveLength(5);
    });

    it("stops at twice the limit instead of widening by every field of the event first", () => {
      const schema = newSourceSchema("wide");
      const before = countFields(schema.fields);
      const body = ev({
        metadata: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
      }).body;
      const limit = before + 10;
      expect(() => widenSchema(schema, body, limit)).toThrow(FieldLimitError);
      // the copy it widened holds twice the limit's fields: the other keys were never built
      expect(countFields(schema.fields)).toBe(2 * limit);
    });

    it("takes an event whose conflict frees room after its new fields, in any key order", () => {
      const start = newSourceSchema("order");
      widenSchema(start, ev({ r: { a: 1, b: 2, c: 3 } }).body);
      const held = countFields(start.fields);
      // r becomes a STRING (its three fields go) and x comes: whichever key is first, the source
      // ends with two fields fewer, within a limit it holds exactly
      for (const body of [
        { r: "text", x: 1 },
        { x: 1, r: "text" },
      ]) {
        const schema = structuredClone(start);
        widenSchema(schema, ev(body).body, held);
        expect(countFields(schema.fields), JSON.stringify(body)).toBe(held - 2);
      }
      // fields a records element adds, freed by a later element's conflict, are counted as freed
      const records = newSourceSchema("records");
      const base = countFields(records.fields);
      widenSchema(records, ev({ l: [{ x: { m: 1, n: 2, o: 3 } }, { x: "s" }] }).body, base + 2);
      expect(countFields(records.fields)).toBe(base + 2);
      // and an event that ends past the limit is still refused
      expect(() =>
        widenSchema(structuredClone(start), ev({ x: 1, y: 2, r: { d: 4 } }).body, held + 1),
      ).toThrow(FieldLimitError);
    });

    it("lets an event reach the limit exactly, and counts the fields a conflict removes", () => {
      const schema = newSourceSchema("conflict");
      widenSchema(schema, ev({ r: { a: 1, b: 2, c: 3 } }).body);
      const held = countFields(schema.fields);
      // r becomes a STRING (its three fields go), then x and y come: one field fewer than before
      const changes = widenSchema(schema, ev({ r: "text", x: 1, y: 2 }).body, held);
      expect(changes.length).toBeGreaterThan(0);
      expect(countFields(schema.fields)).toBe(held - 1);
      expect(schema.fields.r).toMatchObject({ kind: "scalar", type: "STRING" });
      expect(() => widenSchema(schema, ev({ z: 1, w: 2 }).body, held)).toThrow(FieldLimitError);
    });

    it("lets a source past a limit lowered since retype a field, but not gain one", () => {
      const schema = newSourceSchema("lowered");
      widenSchema(schema, ev({ a: 1, b: 2, c: 3, d: 4 }).body);
      const held = countFields(schema.fields);
      const lowered = held - 3;
      // INT64 meeting a FLOAT64 adds no field
      expect(widenSchema(schema, ev({ a: 1.5 }).body, lowered)).toHaveLength(1);
      expect(schema.fields.a).toMatchObject({ kind: "scalar", type: "FLOAT64" });
      expect(countFields(schema.fields)).toBe(held);
      expect(() => widenSchema(schema, ev({ e: 1 }).body, lowered)).toThrow(FieldLimitError);
    });

    it("counts nothing without one", () => {
      const schema = newSourceSchema("unbounded");
      widenSchema(
        schema,
        ev({ metadata: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i])) }).body,
      );
      expect(countFields(schema.fields)).toBe(countFields(newSourceSchema("x").fields) + 2_001);
    });
  });
});
