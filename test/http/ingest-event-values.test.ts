import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);
const at = "2025-01-15T11:00:00Z";

/** Event values a shipper or a hostile ingest token sends: each backend stores the same, or refuses the same. */
describe.each(BACKENDS)("ingested event values on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("an empty id is no id: events sent with one are not deduplicated into the first", async () => {
    const { url, backend } = served;
    const batch = json([
      { id: "", timestamp: at, event_message: "first" },
      { id: "", timestamp: at, event_message: "second" },
      { id: " ", timestamp: at, event_message: "third" },
    ]);
    expect(await postLogs(url, "empty.ids", batch)).toMatchObject({ status: 200, body: { accepted: 3 } });
    // a retry still stores nothing twice: the ids are derived from the content
    expect((await postLogs(url, "empty.ids", batch)).status).toBe(200);
    const rows = await runSql(backend, "select event_message from `empty.ids` order by event_message");
    expect(rows).toEqual([
      { event_message: "first" },
      { event_message: "second" },
      { event_message: "third" },
    ]);
  });

  it("an id that is an object, array or boolean is a 400 naming the event; nothing is stored", async () => {
    const { url, backend } = served;
    for (const id of [{ a: 1 }, ["x"], true]) {
      const r = await postLogs(
        url,
        "odd.ids",
        json([
          { id: "fine", timestamp: at },
          { id, timestamp: at },
        ]),
      );
      expect(r.status, json(id)).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(/^event 1: "id" is .*expected a string or a number/);
    }
    expect(await storedIds(backend, "odd.ids")).toEqual([]);
    expect((await postLogs(url, "odd.ids", json([{ id: 42, timestamp: at }]))).status).toBe(200);
    expect(await storedIds(backend, "odd.ids")).toEqual(["42"]);
  });

  it("an id number that would lose digits is a 400 naming the event, never two events merged into one", async () => {
    const { url, backend } = served;
    // unsigned 64-bit trace ids past INT64 (and any integer past it) parse as FLOAT64: both are 18446744073709552000
    for (const [body, index] of [
      [
        `[{"id": 18446744073709551614, "timestamp": "${at}", "event_message": "a"}, {"id": 18446744073709551615, "timestamp": "${at}", "event_message": "b"}]`,
        0,
      ],
      [
        `[{"id": 9007199254740992, "timestamp": "${at}"}, {"id": 9007199254740993.0, "timestamp": "${at}"}]`,
        1,
      ],
    ] as const) {
      const r = await postLogs(url, "lossy.ids", body);
      expect(r.status, body).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(
        new RegExp(`^event ${index}: "id" is number .*send it as a string`),
      );
    }
    expect(await storedIds(backend, "lossy.ids")).toEqual([]);
    // integers within INT64 keep every digit, past 2^53 too
    const exact = `[{"id": 9223372036854775807, "timestamp": "${at}"}, {"id": 9223372036854775806, "timestamp": "${at}"}, {"id": -7, "timestamp": "${at}"}]`;
    expect((await postLogs(url, "lossy.ids", exact)).body).toEqual({ accepted: 3 });
    expect(await storedIds(backend, "lossy.ids")).toEqual([
      "-7",
      "9223372036854775806",
      "9223372036854775807",
    ]);
  });

  it("an id or project longer than an index key takes is a 400 naming the event on every backend, never a 4xx/5xx from the engine", async () => {
    const { url, backend } = served;
    // random, so that PostgreSQL cannot compress it below its btree's 2,704 bytes
    const long = randomBytes(3000).toString("base64");
    for (const event of [
      { id: long, timestamp: at },
      { id: "p1", project: long, timestamp: at },
    ]) {
      const r = await postLogs(url, "long.keys", json([{ id: "ok", timestamp: at }, event]));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(/^event 1: "(id|project)" is longer than 1024 bytes/);
    }
    expect(await storedIds(backend, "long.keys")).toEqual([]);
    const fine = randomBytes(700).toString("base64");
    expect(
      (await postLogs(url, "long.keys", json([{ id: fine, project: fine, timestamp: at }]))).status,
    ).toBe(200);
    expect(await storedIds(backend, "long.keys")).toEqual([fine]);
  });

  it("a lone surrogate in a string or key is stored as U+FFFD on every backend (ClickHouse answered 500)", async () => {
    const { url, backend } = served;
    const body =
      '[{"id":"s1","timestamp":"2025-01-15T11:00:00Z","event_message":"a\\ud800b",' +
      '"metadata":{"m":"\\udfff","k\\udc00":"v","emoji":"\\ud83d\\ude00"}}]';
    expect(await postLogs(url, "surrogate.src", body)).toMatchObject({ status: 200, body: { accepted: 1 } });
    const rows = await runSql(
      backend,
      "select event_message, m.m, m.emoji from `surrogate.src` cross join unnest(metadata) as m",
    );
    expect(rows).toEqual([{ event_message: "a\uFFFDb", m: "\uFFFD", emoji: "😀" }]);
    const fields = (await backend.schema()).sources["surrogate.src"]?.fields.metadata?.fields ?? {};
    expect(Object.keys(fields).sort()).toEqual(["emoji", "k\uFFFD", "m"]);
  });

  it("an id or value that begins with U+FEFF keeps it: read back whole, and a retry stores nothing twice", async () => {
    const { url, backend } = served;
    // a line of a file saved with a byte order mark, shipped as it was read
    const batch = json([
      { id: "\ufeffbom-1", timestamp: at, event_message: "\ufeff2025-01-15 first line", tags: ["\ufeffa"] },
      { id: "bom-1", timestamp: at, event_message: "no mark" },
    ]);
    for (let i = 0; i < 3; i++) {
      expect(await postLogs(url, "bom.src", batch)).toMatchObject({ status: 200, body: { accepted: 2 } });
    }
    const rows = await runSql(
      backend,
      "select id, event_message, tags from `bom.src` order by event_message",
    );
    expect(rows).toEqual([
      { id: "bom-1", event_message: "no mark", tags: [] },
      { id: "\ufeffbom-1", event_message: "\ufeff2025-01-15 first line", tags: ["\ufeffa"] },
    ]);
  });

  it("an event of 400 nested objects is stored, or refused with 400 invalid_event where a row cannot hold it", async () => {
    const { url, backend } = served;
    const wide = {
      id: "wide",
      timestamp: at,
      ...Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`o${i}`, { x: i }])),
    };
    const res = await postLogs(url, "wide.src", json([{ id: "narrow", timestamp: at }, wide]));
    if (fixture.name === "postgres") {
      // a PostgreSQL heap row holds 8 kB: the event's columns do not fit (this answered 422 sql_too_complex)
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_event");
      expect(res.body.error.message).toMatch(/more fields than a PostgreSQL row holds/);
      expect(await storedIds(backend, "wide.src")).toEqual([]);
    } else {
      expect(res).toMatchObject({ status: 200, body: { accepted: 2 } });
      expect(await runSql(backend, "select o399[0].x as x from `wide.src` where id = 'wide'")).toEqual([
        { x: 399 },
      ]);
    }
  });

  it("an event too wide for a PostgreSQL row is named by its index (and line), among others and other requests", async () => {
    const { url, backend } = served;
    // newest first: the rows reach PostgreSQL in time order, not in the request's
    const events: object[] = Array.from({ length: 7 }, (_, i) => ({
      id: `n${i}`,
      timestamp: `2025-01-15T11:0${9 - i}:00Z`,
      event_message: `narrow ${i}`,
    }));
    events[4] = {
      ...events[4],
      ...Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`o${i}`, { x: i }])),
    };
    const ndjson = `\n${events.map((e) => json(e)).join("\n")}\n`;
    const [other, asArray, otherToo] = await Promise.all([
      postLogs(url, "wide.other", json([{ id: "o1", timestamp: at }])),
      postLogs(url, "wide.named", json(events)),
      postLogs(url, "wide.other", json([{ id: "o2", timestamp: at }])),
    ]);
    expect([other.status, otherToo.status]).toEqual([200, 200]);
    const asLines = await postLogs(url, "wide.named", ndjson, { "Content-Type": "application/x-ndjson" });
    if (fixture.name === "postgres") {
      for (const r of [asArray, asLines]) {
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe("invalid_event");
      }
      expect(asArray.body.error.message).toMatch(
        /^event 4: more fields than a PostgreSQL row holds \(row is too big/,
      );
      expect(asLines.body.error.message).toMatch(
        /^event 4 \(line 6\): more fields than a PostgreSQL row holds/,
      );
      expect(asLines.body.error.line).toBe(6);
      expect(await storedIds(backend, "wide.named")).toEqual([]);
      // once the source has every field, the batch is encoded ahead (on a worker): named alike
      const quarters = Array.from({ length: 4 }, (_, q) => ({
        id: `q${q}`,
        timestamp: at,
        ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`o${q * 100 + i}`, { x: i }])),
      }));
      expect((await postLogs(url, "wide.named", json(quarters))).status).toBe(200);
      const encodedAhead = await postLogs(url, "wide.named", json(events));
      expect(encodedAhead.status).toBe(400);
      expect(encodedAhead.body.error.message).toMatch(/^event 4: more fields than a PostgreSQL row holds/);
      expect(await storedIds(backend, "wide.named")).toEqual(["q0", "q1", "q2", "q3"]);
    } else {
      expect(asArray).toMatchObject({ status: 200, body: { accepted: 7 } });
      expect(asLines.status).toBe(200);
    }
    expect(await storedIds(backend, "wide.other")).toEqual(["o1", "o2"]);
  });

  it("NUL characters are taken out of strings, keys and ids alike on every backend", async () => {
    const { url, backend } = served;
    const body =
      '[{"id":"n\\u00001","timestamp":"2025-01-15T11:00:00Z","event_message":"a\\u0000b",' +
      '"metadata":{"x":"c\\u0000d","k\\u0000ey":"v"},"tags":["t\\u0000u"]}]';
    expect(await postLogs(url, "nul.src", body)).toMatchObject({ status: 200, body: { accepted: 1 } });
    const rows = await runSql(
      backend,
      "select id, event_message, m.x, m.key, tags from `nul.src` cross join unnest(metadata) as m",
    );
    expect(rows).toEqual([{ id: "n1", event_message: "ab", x: "cd", key: "v", tags: ["tu"] }]);
    // a retry is the same event
    expect((await postLogs(url, "nul.src", body)).status).toBe(200);
    expect(await storedIds(backend, "nul.src")).toEqual(["n1"]);
  });

  it("keys that become one once NUL is taken out refuse the request, naming the event; nothing is stored", async () => {
    const { url, backend } = served;
    // "\u0000id" cleaned is "id": one value would have replaced the other, and decided the id
    const body =
      '[{"id":"kept","timestamp":"2025-01-15T11:00:00Z"},' +
      '{"id":"a","\\u0000id":"b","timestamp":"2025-01-15T11:00:00Z","metadata":{"k":1,"k\\u0000":2}}]';
    const r = await postLogs(url, "merged.keys", body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(/^event 1: the keys "id" and "\\u0000id" are one key/);
    expect(await storedIds(backend, "merged.keys")).toEqual([]);
  });

  it("a number beyond FLOAT64's range is a 400 naming the event (engines stored JSON.parse's Infinity each their own way)", async () => {
    const { url, backend } = served;
    const r = await postLogs(
      url,
      "huge.numbers",
      '[{"id":"h0","metadata":{"ratio":1.5}},{"id":"h1","metadata":{"ratio":1e400}}]',
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_event" });
    expect(r.body.error.message).toMatch(/^event 1: a number is beyond the range of FLOAT64/);
    expect(await storedIds(backend, "huge.numbers")).toEqual([]);
  });

  it("keys named constructor, toString, __proto__, valueOf are fields; events without them read NULL there", async () => {
    const { url, backend } = served;
    const first = JSON.stringify([
      {
        id: "a",
        timestamp: at,
        constructor: "c",
        toString: 1,
        metadata: { valueOf: "v", hasOwnProperty: "h" },
      },
    ]);
    const proto = `[{"id":"p","timestamp":"${at}","__proto__":"x","metadata":{"__proto__":{"k":1}}}]`;
    // before: PostgreSQL stored "" for the later events, ClickHouse refused every later request (500)
    for (const body of [first, proto, JSON.stringify([{ id: "b", timestamp: at, metadata: { other: 1 } }])]) {
      expect((await postLogs(url, "inherited.keys", body)).status).toBe(200);
    }
    const rows = await runSql(
      backend,
      "select t.id, t.constructor, t.toString, t.__proto__, m.valueOf, m.hasOwnProperty from `inherited.keys` t " +
        "cross join unnest(t.metadata) as m order by t.id",
    );
    // JSON.parse: in an object literal, __proto__ would set the prototype instead of a key
    expect(rows).toEqual(
      JSON.parse(
        '[{"id":"a","constructor":"c","toString":1,"__proto__":null,"valueOf":"v","hasOwnProperty":"h"},' +
          '{"id":"b","constructor":null,"toString":null,"__proto__":null,"valueOf":null,"hasOwnProperty":null},' +
          '{"id":"p","constructor":null,"toString":null,"__proto__":"x","valueOf":null,"hasOwnProperty":null}]',
      ),
    );
  });

  it("a field a later event of the same request widens holds the same value for the earlier events on every backend", async () => {
    const { url, backend } = served;
    const body = JSON.stringify([
      { id: "a", timestamp: at, tags: [], level: 1e-7 },
      { id: "b", timestamp: at, tags: "t", level: "warn" },
    ]);
    expect((await postLogs(url, "widened.batch", body)).status).toBe(200);
    // DuckDB wrote "a" before "b" widened: its empty array was lost and its number cast by the engine
    const rows = await runSql(backend, "select id, tags, level from `widened.batch` order by id");
    expect(rows).toEqual([
      { id: "a", tags: "[]", level: "1e-7" },
      { id: "b", tags: "t", level: "warn" },
    ]);
  });

  it("a record meeting an empty array becomes records of none, its fields still read, not a STRING", async () => {
    const { url, backend } = served;
    const send = async (events: object[]) =>
      expect(
        (await postLogs(url, "empty.record", json(events.map((e) => ({ timestamp: at, ...e }))))).status,
      ).toBe(200);
    await send([{ id: "a", m: { a: 1 }, meta: { r: { a: 10 } } }]);
    // PHP's json_encode writes an empty object as []
    await send([{ id: "b", m: [], meta: { r: [] } }]);
    await send([{ id: "c", m: { a: 3 }, meta: { r: [{ a: 30 }] } }]);
    const rows = await runSql(
      backend,
      "select id, array_length(m) as m_len, (select sum(e.a) from unnest(m) e) as m_sum, " +
        "array_length(meta.r) as r_len, (select sum(e.a) from unnest(meta.r) e) as r_sum " +
        "from `empty.record` order by id",
    );
    expect(rows).toEqual([
      { id: "a", m_len: 1, m_sum: 1, r_len: 1, r_sum: 10 },
      { id: "b", m_len: 0, m_sum: null, r_len: 0, r_sum: null },
      { id: "c", m_len: 1, m_sum: 3, r_len: 1, r_sum: 30 },
    ]);
  });

  it("an empty array sent as a field's first value keeps its value when a later request types the field", async () => {
    const { url, backend } = served;
    const empties = { s: [], n: [null], r: [], o: [], meta: { g: [], h: [null], t: [] } };
    expect((await postLogs(url, "empty.first", json([{ id: "a", timestamp: at, ...empties }]))).status).toBe(
      200,
    );
    // the field exists, as an array of no known element type
    expect(
      await runSql(backend, "select array_length(s) as s, array_length(meta.g) as g from `empty.first`"),
    ).toEqual([{ s: 0, g: 0 }]);
    const typed = {
      s: "text",
      n: [1, 2],
      r: [{ x: 1 }],
      o: { x: 2 },
      meta: { g: [{ y: 1 }, { y: 2 }], h: [3.5], t: "word" },
    };
    expect((await postLogs(url, "empty.first", json([{ id: "b", timestamp: at, ...typed }]))).status).toBe(
      200,
    );
    const rows = await runSql(
      backend,
      "select id, s, array_length(n) as n, (select sum(v) from unnest(n) v) as n_sum, " +
        "(select sum(e.x) from unnest(r) e) as r_sum, array_length(r) as r_len, " +
        "(select sum(e.x) from unnest(o) e) as o_sum, array_length(o) as o_len, " +
        "(select sum(e.y) from unnest(meta.g) e) as g_sum, array_length(meta.g) as g_len, " +
        "(select sum(v) from unnest(meta.h) v) as h_sum, meta.t as t " +
        "from `empty.first` order by id",
    );
    expect(rows).toEqual([
      // before: a's fields read NULL once b's request typed them (its value was never stored)
      {
        id: "a",
        s: "[]",
        n: 1,
        n_sum: null,
        r_sum: null,
        r_len: 0,
        o_sum: null,
        o_len: 0,
        g_sum: null,
        g_len: 0,
        h_sum: null,
        t: "[]",
      },
      {
        id: "b",
        s: "text",
        n: 2,
        n_sum: 3,
        r_sum: 1,
        r_len: 1,
        o_sum: 2,
        o_len: 1,
        g_sum: 3,
        g_len: 2,
        h_sum: 3.5,
        t: "word",
      },
    ]);
  });

  it("keys that differ only by case are each read by their own spelling, qualified or not", async () => {
    const { url, backend } = served;
    const body = JSON.stringify([
      { id: "a", timestamp: at, Level: "INFO", level: 1, Region: "eu", metadata: { Code: "X", code: 2 } },
      { id: "b", timestamp: at, level: 3 },
    ]);
    expect((await postLogs(url, "case.keys", body)).status).toBe(200);
    // unqualified, `Level` read the `level` column: "INFO" was out of reach
    const rows = await runSql(
      backend,
      "select id, Level, level, t.Level as tl, m.Code, m.code from `case.keys` t " +
        "left join unnest(t.metadata) as m on true order by id",
    );
    expect(rows).toEqual([
      { id: "a", Level: "INFO", level: 1, tl: "INFO", Code: "X", code: 2 },
      { id: "b", Level: null, level: 3, tl: null, Code: null, code: null },
    ]);
    // a spelling the source does not hold still finds its field case-insensitively
    expect(await runSql(backend, "select REGION from `case.keys` where id = 'a'")).toEqual([
      { REGION: "eu" },
    ]);
  });
});
