import type { Backend } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch as batch } from "../support/ingest-batch.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/**
 * A field widened to STRING by a later request holds, for the values stored before, the text core
 * writes for the same value when it shapes a new event into a STRING column (`textOfJsonValue`:
 * JavaScript's `String(number)`), on every backend, not the engine's own cast.
 */

/** Number literals whose text differs between engines' casts and JavaScript's spelling. */
const AWKWARD_FLOATS = [
  "9007199254740992", // 2^53
  "9007199254740994", // 2^53 + 2
  "-9007199254740994",
  "1e21",
  "-1e21",
  "1e20",
  "123456789012345680000",
  "1e300",
  "1.7976931348623157e308",
  "5e-7",
  "5e-05",
  "-5e-05",
  "0.000001",
  "0.0001",
  "0.1",
  "-0",
  "0",
  "123.0",
  "100",
  "1e15",
  "1e16",
  "1234567890123456.7",
  "123456789012345.6",
  "1.5e-300",
  "-2.5e-8",
  "5e-324",
  "0.5",
];

/** A fixed spread of doubles over every magnitude, both signs, short and long mantissas. */
function spreadOfFloats(): string[] {
  let seed = 20_250_115;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const out: string[] = [];
  for (let exponent = -320; exponent <= 308; exponent += 7) {
    const digits = 1 + Math.floor(next() * 17);
    const mantissa = next().toFixed(digits);
    const sign = next() < 0.3 ? "-" : "";
    out.push(String(Number(`${sign}${mantissa}e${exponent}`)));
  }
  for (let exponent = -9; exponent <= 23; exponent++)
    out.push(String(Number(`${next().toFixed(6)}e${exponent}`)));
  return out.filter((text) => Number(text) !== 0 || text === "0");
}

const INT64S = [
  "0",
  "-1",
  "123",
  "9007199254740992",
  "9007199254740993",
  "9223372036854775807",
  "-9223372036854775808",
];

describe.each(BACKENDS)("widening to STRING across requests on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  /** Stores `literals` as field `n` (top level) and `metadata.n`, then a string, in two requests. */
  async function widenAndRead(
    source: string,
    literals: string[],
  ): Promise<{ top: unknown[]; nested: unknown[] }> {
    const events = literals.map(
      (text, i) =>
        `{"id":"e${String(i).padStart(4, "0")}","event_message":"m","n":${text},"metadata":{"n":${text}}}`,
    );
    await backend.ingest([batch(source, events)]);
    await backend.ingest([
      batch(source, ['{"id":"z","event_message":"m","n":"text","metadata":{"n":"text"}}']),
    ]);
    const schema = await backend.schema();
    expect(schema.sources[source]?.fields.n).toMatchObject({ kind: "scalar", type: "STRING" });
    const rows = await runSql(
      backend,
      `select t.id, t.n, m.n as nested from \`${source}\` as t cross join unnest(t.metadata) as m where t.id != 'z' order by t.id`,
    );
    return { top: rows.map((r) => r.n), nested: rows.map((r) => r.nested) };
  }

  it("FLOAT64 → STRING: stored numbers read as JavaScript spells them", async () => {
    const literals = ["0.5", ...AWKWARD_FLOATS, ...spreadOfFloats()];
    const want = literals.map((text) => String(Number(text)));
    const got = await widenAndRead("widen.float", literals);
    // the literals whose stored text differs, so that a failure names them
    const differing = (texts: unknown[]) =>
      literals.flatMap((literal, i) =>
        texts[i] === want[i] ? [] : [{ literal, want: want[i], got: texts[i] }],
      );
    expect(differing(got.top)).toEqual([]);
    expect(differing(got.nested)).toEqual([]);
  });

  it("INT64 → STRING: integers keep every digit, beyond 2^53 too", async () => {
    const got = await widenAndRead("widen.int", INT64S);
    expect(got.top).toEqual(INT64S);
    expect(got.nested).toEqual(INT64S);
  });

  it("INT64 → FLOAT64 → STRING: an integer stored as a double reads as JavaScript spells it", async () => {
    const source = "widen.int.float";
    await backend.ingest([batch(source, ['{"id":"a","n":1e15}', '{"id":"b","n":-7}'])]);
    await backend.ingest([batch(source, ['{"id":"c","n":2.5}'])]);
    await backend.ingest([batch(source, ['{"id":"z","n":"text"}'])]);
    const rows = await runSql(backend, `select id, n from \`${source}\` order by id`);
    expect(rows.map((r) => r.n)).toEqual(["1000000000000000", "-7", "2.5", "text"]);
  });

  it("INT64 → FLOAT64 → STRING within one call: each batch's widening converts the batches before it", async () => {
    // what a group commit of three requests hands the backend
    const source = "widen.int.float.one.call";
    await backend.ingest([
      batch(source, ['{"id":"a","n":1e15}', '{"id":"b","n":-7}']),
      batch(source, ['{"id":"c","n":2.5}']),
      batch(source, ['{"id":"z","n":"text"}']),
    ]);
    const rows = await runSql(backend, `select id, n from \`${source}\` order by id`);
    expect(rows.map((r) => r.n)).toEqual(["1000000000000000", "-7", "2.5", "text"]);
  });

  it("FLOAT64 → STRING after a record was widened away and a day's partition was made since", async () => {
    // PostgreSQL numbers a partition made after a column was dropped without it, and mapped the
    // conversion's IS NULL onto the wrong column: 500 "attribute number 10 exceeds number of
    // columns 9" for the request, and for its every retry
    const source = "widen.float.after.drop";
    await backend.ingest([
      batch(source, ['{"id":"a","timestamp":"2025-01-14T10:00:00Z","r":{"x":1},"n":0.5}']),
    ]);
    await backend.ingest([
      batch(source, ['{"id":"b","timestamp":"2025-01-14T11:00:00Z","r":"flat","n":1e21}']),
    ]);
    await backend.ingest([batch(source, ['{"id":"c","timestamp":"2025-01-15T10:00:00Z","n":5e-324}'])]);
    await backend.ingest([batch(source, ['{"id":"z","timestamp":"2025-01-15T11:00:00Z","n":"text"}'])]);
    const rows = await runSql(backend, `select id, n, r from \`${source}\` order by id`);
    expect(rows).toEqual([
      { id: "a", n: "0.5", r: '{"x":1}' },
      { id: "b", n: "1e+21", r: "flat" },
      { id: "c", n: "5e-324", r: null },
      { id: "z", n: "text", r: null },
    ]);
  });

  it("records → STRING in metadata: an object stored as its records' one element reads as sent", async () => {
    // a records field's text holds an object as `[{…}]`; one request of these events stores `{…}`
    for (const [source, first, firstText] of [
      ["widen.nested.record.records", '{"r":{"k":1}}', '{"k":1}'],
      ["widen.nested.untyped.records", '{"r":[]}', "[]"],
    ] as const) {
      await backend.ingest([batch(source, [`{"id":"a","metadata":${first}}`])]);
      await backend.ingest([batch(source, ['{"id":"b","metadata":{"r":[{"k":2}]}}'])]);
      await backend.ingest([batch(source, ['{"id":"c","metadata":{"r":{"k":3}}}'])]);
      await backend.ingest([batch(source, ['{"id":"d","metadata":{"r":"text"}}'])]);
      const rows = await runSql(
        backend,
        `select t.id, m.r from \`${source}\` as t cross join unnest(t.metadata) as m order by t.id`,
      );
      expect(rows.map((r) => r.r)).toEqual([firstText, '[{"k":2}]', '{"k":3}', "text"]);
    }
  });

  it("BOOL → STRING: stored booleans read true and false", async () => {
    const got = await widenAndRead("widen.bool", ["true", "false"]);
    expect(got.top).toEqual(["true", "false"]);
    expect(got.nested).toEqual(["true", "false"]);
  });
});

/**
 * DESIGN.md §3: an object and an array of objects are one REPEATED RECORD. A top-level field that
 * one shipper sends as `{…}` and another as `[{…}]` stays a repeated record whichever comes first,
 * and old rows read as new ones: an object is a one-element array, in SQL and on the wire.
 */
describe.each(BACKENDS)("a top-level record meeting records (and the reverse) on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  async function readsAsRecords(source: string) {
    const schema = await backend.schema();
    expect(schema.sources[source]?.fields.metadata).toMatchObject({ kind: "records" });
    expect(
      await runSql(
        backend,
        `select t.id, m.x, m.tag from \`${source}\` as t cross join unnest(t.metadata) as m order by t.id, m.x`,
      ),
    ).toEqual([
      { id: "a", x: 1, tag: "one" },
      { id: "b", x: 2, tag: "two" },
      { id: "b", x: 3, tag: null },
      { id: "c", x: 4, tag: "four" },
      { id: "d", x: 5, tag: null },
      { id: "e", x: 6, tag: null },
    ]);
    expect(
      await runSql(
        backend,
        `select id, array_length(metadata) as n, metadata[offset(0)].x as first, metadata[safe_offset(1)].x as second from \`${source}\` order by id`,
      ),
    ).toEqual([
      { id: "a", n: 1, first: 1, second: null },
      { id: "b", n: 2, first: 2, second: 3 },
      { id: "c", n: 1, first: 4, second: null },
      { id: "d", n: 1, first: 5, second: null },
      { id: "e", n: 1, first: 6, second: null },
    ]);
    expect(
      await runSql(
        backend,
        `select t.id, i.y from \`${source}\` as t cross join unnest(t.metadata) as m cross join unnest(m.inner) as i order by t.id`,
      ),
    ).toEqual([
      { id: "a", y: 10 },
      { id: "c", y: 40 },
    ]);
    expect(await runSql(backend, `select id, metadata from \`${source}\` order by id`)).toEqual([
      { id: "a", metadata: [{ x: 1, tag: "one", inner: [{ y: 10 }] }] },
      { id: "b", metadata: [{ x: 2, tag: "two" }, { x: 3 }] },
      { id: "c", metadata: [{ x: 4, tag: "four", inner: [{ y: 40 }] }] },
      { id: "d", metadata: [{ x: 5 }] },
      { id: "e", metadata: [{ x: 6 }] },
    ]);
  }

  const A = '{"id":"a","event_message":"m","metadata":{"x":1,"tag":"one","inner":{"y":10}}}';
  const B = '{"id":"b","event_message":"m","metadata":[{"x":2,"tag":"two"},{"x":3}]}';
  const C = '{"id":"c","event_message":"m","metadata":{"x":4,"tag":"four","inner":{"y":40}}}';
  const D = '{"id":"d","event_message":"m","metadata":{"x":5}}';
  const E = '{"id":"e","event_message":"m","metadata":[{"x":6}]}';

  it("an object first, then an array of objects: old objects read as one-element arrays", async () => {
    const source = "widen.record.first";
    await backend.ingest([batch(source, [A])]);
    await backend.ingest([batch(source, [B])]);
    await backend.ingest([batch(source, [C])]);
    await backend.ingest([batch(source, [D, E])]);
    await readsAsRecords(source);
  });

  it("an array of objects first, then an object: the object is stored as a one-element array", async () => {
    const source = "widen.records.first";
    await backend.ingest([batch(source, [B])]);
    await backend.ingest([batch(source, [A])]);
    await backend.ingest([batch(source, [C, D, E])]);
    await readsAsRecords(source);
  });

  it("both shapes in one request", async () => {
    const source = "widen.record.mixed";
    await backend.ingest([batch(source, [A, B, C, D, E])]);
    await readsAsRecords(source);
  });

  it("the same through batches of one call (a group commit)", async () => {
    const source = "widen.record.one.call";
    await backend.ingest([[A], [B], [C], [D, E]].map((lines) => batch(source, lines)));
    await readsAsRecords(source);
  });

  it("the same through loads, one after another", async () => {
    const source = "widen.record.loads";
    for (const lines of [[A], [B], [C], [D, E]]) await backend.load(source, lines);
    await readsAsRecords(source);
  });

  it("within one load, after rows of the old shape were written (past ClickHouse's first insert)", async () => {
    const source = "widen.record.one.load";
    const objects = Array.from({ length: 20_001 }, (_, i) => `{"id":"o${i}","metadata":{"x":1}}`);
    await backend.load(source, [
      ...objects,
      '{"id":"z","metadata":[{"x":2},{"x":3}]}',
      '{"id":"y","metadata":{"x":4}}',
    ]);
    expect(
      await runSql(
        backend,
        `select count(*) as n, sum(m.x) as total, countif(array_length(t.metadata) = 1) as singles from \`${source}\` as t cross join unnest(t.metadata) as m`,
      ),
    ).toEqual([{ n: 20_004, total: 20_001 + 2 + 3 + 4, singles: 20_002 }]);
  });
});

/**
 * The same below the top: `metadata.req` sent as `{…}` by one shipper and `[{…}]` by another, as
 * a field reached through objects (a column of its own) or below an array (read from JSON text).
 */
describe.each(BACKENDS)("a nested record meeting records (and the reverse) on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  const wrap = (array: boolean, inner: string) => (array ? `[${inner}]` : inner);
  /** events a, b, c with `req` an object, two objects, an object; `metadata` an array when `array` */
  const events = (array: boolean) => [
    `{"id":"a","event_message":"m","metadata":${wrap(array, '{"req":{"x":1,"tag":"one"},"k":1}')}}`,
    `{"id":"b","event_message":"m","metadata":${wrap(array, '{"req":[{"x":2,"tag":"two"},{"x":3}],"k":2}')}}`,
    `{"id":"c","event_message":"m","metadata":${wrap(array, '{"req":{"x":4}}')}}`,
  ];
  const D = '{"id":"d","event_message":"m","metadata":[{"req":{"x":5}}]}';

  async function readsAsRecords(source: string, withD = false) {
    const schema = await backend.schema();
    expect(schema.sources[source]?.fields.metadata?.fields?.req).toMatchObject({ kind: "records" });
    const d = withD ? [{ id: "d", x: 5, tag: null }] : [];
    expect(
      await runSql(
        backend,
        `select t.id, r.x, r.tag from \`${source}\` as t cross join unnest(t.metadata) as m cross join unnest(m.req) as r order by t.id, r.x`,
      ),
    ).toEqual([
      { id: "a", x: 1, tag: "one" },
      { id: "b", x: 2, tag: "two" },
      { id: "b", x: 3, tag: null },
      { id: "c", x: 4, tag: null },
      ...d,
    ]);
    expect(
      await runSql(
        backend,
        `select t.id, array_length(m.req) as n, m.req[offset(0)].x as first from \`${source}\` as t cross join unnest(t.metadata) as m order by t.id`,
      ),
    ).toEqual([
      { id: "a", n: 1, first: 1 },
      { id: "b", n: 2, first: 2 },
      { id: "c", n: 1, first: 4 },
      ...(withD ? [{ id: "d", n: 1, first: 5 }] : []),
    ]);
    expect(await runSql(backend, `select id, metadata from \`${source}\` order by id`)).toEqual([
      { id: "a", metadata: [{ req: [{ x: 1, tag: "one" }], k: 1 }] },
      { id: "b", metadata: [{ req: [{ x: 2, tag: "two" }, { x: 3 }], k: 2 }] },
      { id: "c", metadata: [{ req: [{ x: 4 }] }] },
      ...(withD ? [{ id: "d", metadata: [{ req: [{ x: 5 }] }] }] : []),
    ]);
  }

  for (const array of [false, true]) {
    const where = array ? "below an array" : "through objects";
    it(`${where}: an object first, then an array of objects, in separate requests`, async () => {
      const source = `widen.nested.${array ? "under" : "through"}.record.first`;
      for (const event of events(array)) await backend.ingest([batch(source, [event])]);
      await readsAsRecords(source);
    });

    it(`${where}: an array of objects first, then objects`, async () => {
      const source = `widen.nested.${array ? "under" : "through"}.records.first`;
      const [a, b, c] = events(array);
      await backend.ingest([batch(source, [b!])]);
      await backend.ingest([batch(source, [a!])]);
      await backend.ingest([batch(source, [c!])]);
      await readsAsRecords(source);
    });

    it(`${where}: both shapes in one load`, async () => {
      const source = `widen.nested.${array ? "under" : "through"}.one.load`;
      await backend.load(source, events(array));
      await readsAsRecords(source);
    });
  }

  it("through objects, then metadata itself becomes an array: objects kept in its text still read", async () => {
    const source = "widen.nested.then.top";
    for (const event of events(false)) await backend.ingest([batch(source, [event])]);
    await backend.ingest([batch(source, [D])]);
    expect((await backend.schema()).sources[source]?.fields.metadata).toMatchObject({ kind: "records" });
    await readsAsRecords(source, true);
  });
});
