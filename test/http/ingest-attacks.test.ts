import http from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, INGEST_TOKEN, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);

/** `[{"event_message":"000…"}]` with `mib` MiB of zeros, gzipped as a stream (never whole in memory) */
async function gzipBomb(mib: number): Promise<Buffer> {
  const zeros = Buffer.alloc(1024 * 1024, 0x30);
  async function* body() {
    yield Buffer.from('[{"event_message":"');
    for (let i = 0; i < mib; i++) yield zeros;
    yield Buffer.from('"}]');
  }
  const out: Buffer[] = [];
  const gzip = createGzip({ level: 9 });
  gzip.on("data", (c: Buffer) => out.push(c));
  await pipeline(Readable.from(body()), gzip);
  return Buffer.concat(out);
}

/** POST /api/logs sending the body's first half, then after `pauseMs` the rest (chunked) */
function postInTwoHalves(
  url: string,
  source: string,
  body: Buffer,
  pauseMs: number,
): Promise<{ status: number; retryAfter?: string; body: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `/api/logs?source_name=${encodeURIComponent(source)}`,
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": INGEST_TOKEN },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            ...(res.headers["retry-after"] ? { retryAfter: String(res.headers["retry-after"]) } : {}),
            body: JSON.parse(text),
          }),
        );
      },
    );
    // a refused request may be answered (and its socket closed) before the second half is sent
    req.on("error", (e) => (req.writableEnded ? undefined : reject(e)));
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    setTimeout(() => req.end(body.subarray(half)), pauseMs);
  });
}

/** Attacks on POST /api/logs by a holder of a valid ingest token (each a test). */
describe.each(BACKENDS)("ingest under attack on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    // a small limit and queue so bombs and floods hit them quickly
    served = await serveFixture(
      fixture,
      {},
      ingestEnv({ QES_INGEST_MAX_BYTES: "1MiB", QES_INGEST_QUEUE_EVENTS: "300" }),
    );
  });
  afterAll(() => served.close());

  it("a gzip bomb stops at the limit: 413, nothing stored, the server still answers", async () => {
    // 512 MiB of "0" inside one event, about half a MiB compressed: inflating it whole would take
    // 512 MiB (and its string twice that)
    const bomb = await gzipBomb(512);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const rssBefore = process.memoryUsage().rss;
    const r = await postLogs(served.url, "bomb.src", bomb, { "Content-Encoding": "gzip" });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("request_too_large");
    // the server inflated at most its 1 MiB limit (plus buffers), not the gigabyte
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * 1024 * 1024);
    expect(await storedIds(served.backend, "bomb.src")).toEqual([]);
    expect((await postLogs(served.url, "bomb.src", json([event("after", "x")]))).status).toBe(200);
  }, 60_000);

  it("a corrupt or mislabelled gzip body is a 400 naming Content-Encoding; an unknown encoding a 415", async () => {
    const notGzip = await postLogs(served.url, "enc.src", json([event("e1", "x")]), {
      "Content-Encoding": "gzip",
    });
    expect(notGzip.status).toBe(400);
    expect(notGzip.body.error.param).toBe("Content-Encoding");
    const truncated = gzipSync(json([event("e2", "x")])).subarray(0, 20);
    expect((await postLogs(served.url, "enc.src", truncated, { "Content-Encoding": "gzip" })).status).toBe(
      400,
    );
    const br = await postLogs(served.url, "enc.src", "[]", { "Content-Encoding": "br" });
    expect(br).toMatchObject({
      status: 415,
      body: { error: { code: "unsupported_media_type", param: "Content-Encoding" } },
    });
    expect(await storedIds(served.backend, "enc.src")).toEqual([]);
  });

  it("malformed JSON, deep nesting and huge arrays of non-events are 400s; wrong content types 415s", async () => {
    const url = served.url;
    for (const body of ['[{"a":1},', "{", "[1,2", "nul", '{"a":1}{"b":', '{"a":1} x', "\u0000"]) {
      const r = await postLogs(url, "json.src", body);
      expect(r.status, body).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
    }
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "text/xml",
    ]) {
      const r = await postLogs(url, "json.src", json([event("t", "x")]), { "Content-Type": type });
      expect(r.status, type).toBe(415);
      expect(r.body.error.param).toBe("Content-Type");
    }
    const deep = `[${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}]`;
    const d = await postLogs(url, "json.src", deep);
    expect(d.status).toBe(400);
    expect(d.body.error.message).toMatch(/nested deeper/);
    // numbers: refused at the first, by index; 300,000 of them are first more than the queue takes
    const numbers = await postLogs(url, "json.src", `[${"0,".repeat(299)}0]`);
    expect(numbers.status).toBe(400);
    expect(numbers.body.error.message).toMatch(/^event 0: an event must be a JSON object/);
    expect((await postLogs(url, "json.src", `[${"0,".repeat(300_000)}0]`)).status).toBe(413);
    // 300,000 empty events: more than the queue could ever hold, refused whole
    const many = await postLogs(url, "json.src", `[${"{},".repeat(300_000)}{}]`);
    expect(many.status).toBe(413);
    expect(await storedIds(served.backend, "json.src")).toEqual([]);
  });

  it("an empty body is a 400 in either form, and creates no source; an empty array is a batch of none", async () => {
    for (const [type, body] of [
      ["application/json", ""],
      ["application/json", " \n"],
      ["application/x-ndjson", ""],
      ["application/x-ndjson", "\n\r\n  \n"],
    ] as const) {
      const r = await postLogs(served.url, "empty.body", body, { "Content-Type": type });
      expect(r.status, `${type} ${JSON.stringify(body)}`).toBe(400);
      expect(r.body.error).toMatchObject({
        code: "invalid_event",
        message: expect.stringMatching(/body is empty/),
      });
    }
    expect((await served.backend.schema()).sources["empty.body"]).toBeUndefined();
    expect(await postLogs(served.url, "empty.body", "[]")).toMatchObject({
      status: 200,
      body: { accepted: 0 },
    });
  });

  it("a body of more events than the queue takes is a 413 as soon as they are counted, before any event is shaped", async () => {
    // the queue takes 300: event 300 is malformed, and a server that shaped every event before
    // counting them named it (400) — the work a 10 MB body of `{}` (3.5 million events) made
    // take 40 s and 2 GB before its 413
    const events = Array.from({ length: 300 }, (_, i) => json(event(`q${i}`, "x")));
    const bad = '{"id":"q300","timestamp":"not a time"}';
    const bodies: [string, string, Record<string, string>][] = [
      ["array", `[${[...events, bad].join(",")}]`, {}],
      ["batch", `{"batch":[${[...events, bad].join(",")}]}`, {}],
      ["ndjson", [...events, bad].join("\n"), { "Content-Type": "application/x-ndjson" }],
      ["json_lines", [...events, bad].join("\n"), {}],
      ["ndjson, bad JSON last", [...events, "{"].join("\n"), { "Content-Type": "application/x-ndjson" }],
    ];
    for (const [form, body, headers] of bodies) {
      const r = await postLogs(served.url, "count.src", body, headers);
      expect(r.status, form).toBe(413);
      expect(r.body.error.code, form).toBe("request_too_large");
      expect(r.body.error.message, form).toContain("QES_INGEST_QUEUE_EVENTS");
    }
    expect(await storedIds(served.backend, "count.src")).toEqual([]);
  });

  it("bodies read at once are bounded in bytes: past the budget a request is refused with 429 and Retry-After, before it is parsed", async () => {
    // 16 bodies of ~700 KB, each half sent and then held: 16 × 350 KB in flight at once, past the
    // budget of 4 × QES_INGEST_MAX_BYTES (1 MiB) — and 160 events, well within the queue's 300
    const clients = 16;
    const results = await Promise.all(
      Array.from({ length: clients }, (_, c) =>
        postInTwoHalves(
          served.url,
          "budget.src",
          Buffer.from(json(Array.from({ length: 10 }, (_, i) => event(`b${c}-${i}`, "x".repeat(70_000))))),
          500,
        ).then((r) => ({ c, r })),
      ),
    );
    const acknowledged = results.filter(({ r }) => r.status === 200);
    const refused = results.filter(({ r }) => r.status === 429);
    expect(acknowledged.length + refused.length).toBe(clients);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const { r } of refused) {
      expect(r.body.error.code).toBe("too_many_requests");
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    const expected = acknowledged
      .flatMap(({ c }) => Array.from({ length: 10 }, (_, i) => `b${c}-${i}`))
      .sort();
    expect(await storedIds(served.backend, "budget.src")).toEqual(expected);
    // and once they are through, a body is taken again
    expect((await postLogs(served.url, "budget.src", json([event("after", "x")]))).status).toBe(200);
  });

  it("source_name: missing, repeated, empty, hostile or too long is a 400 naming it; nothing is created", async () => {
    const url = served.url;
    const body = json([event("h1", "x")]);
    const missing = await postLogs(url, { query: "" }, body);
    expect(missing).toMatchObject({
      status: 400,
      body: { error: { code: "missing_parameter", param: "source_name" } },
    });
    const twice = await postLogs(url, { query: "source_name=a.src&source_name=b.src" }, body);
    expect(twice).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_parameter", param: "source_name" } },
    });
    const sourcesBefore = Object.keys((await served.backend.schema()).sources).sort();
    // names of properties every object inherits: DuckDB and ClickHouse answered 500, PostgreSQL
    // acknowledged __proto__ and then knew no such source
    const inherited = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
    for (const name of ["", " ", "a\u0000b", "line\nbreak", "x".repeat(201), "\u0007bell", ...inherited]) {
      const r = await postLogs(url, { query: `source_name=${encodeURIComponent(name)}` }, body);
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.body.error.param).toBe("source_name");
    }
    // percent-encoding that is not UTF-8 (Latin-1 ü, an overlong /): decoded, each named the source "\uFFFD"
    for (const query of [
      "source_name=%FC",
      "source_name=ok%FF",
      "source_name=%C0%AF",
      "source_name=%EF%BF%BD%FE",
    ]) {
      const r = await postLogs(url, { query }, body);
      expect(r.status, query).toBe(400);
      expect(r.body.error).toMatchObject({ code: "invalid_parameter", param: "source_name" });
      expect(r.body.error.message).toMatch(/not UTF-8 once percent-decoded/);
    }
    expect(Object.keys((await served.backend.schema()).sources).sort()).toEqual(sourcesBefore);
    // U+FFFD asked for (encoded, or raw) is a name like any other
    for (const query of ["source_name=%EF%BF%BD", "source_name=\uFFFDx"]) {
      expect((await postLogs(url, { query }, body)).status, query).toBe(200);
    }
  });

  it("hostile but valid source names are data: stored, queried back, nothing else touched", async () => {
    const names = [
      "x'; drop table qes_sources; --",
      'a"b`c',
      "../../etc/passwd",
      "名前.logs",
      "Robert'); DROP TABLE Students;--",
    ];
    for (const name of names) {
      const r = await postLogs(served.url, name, json([event("hostile-1", name)]));
      expect(r.status, name).toBe(200);
    }
    const schema = await served.backend.schema();
    for (const name of names) {
      expect(schema.sources[name], name).toBeDefined();
      // every table name derived from them is a plain identifier
      expect(schema.sources[name]?.table).toMatch(/^[a-z0-9_]+$/);
    }
    // the built-in sources are still there and still answer
    expect(schema.sources["postgres.logs"]).toBeDefined();
    expect(await storedIds(served.backend, "postgres.logs")).toEqual([]);
  });

  it("ingest into a built-in source widens it like a load, and old fields keep working", async () => {
    const r = await postLogs(
      served.url,
      "postgres.logs",
      json([
        event("pg1", "connection received", {
          metadata: { parsed: { error_severity: "LOG", new_field: 7 } },
        }),
      ]),
    );
    expect(r.status).toBe(200);
    expect(await storedIds(served.backend, "postgres.logs")).toEqual(["pg1"]);
    const fields = (await served.backend.schema()).sources["postgres.logs"]?.fields ?? {};
    expect(Object.keys(fields)).toContain("metadata");
  });

  it("a concurrent flood: every request is answered 200 or 429 (with Retry-After), and exactly the acknowledged events are stored", async () => {
    const clients = 40;
    const perRequest = 50;
    const results = await Promise.all(
      Array.from({ length: clients }, (_, c) =>
        postLogs(
          served.url,
          "flood.src",
          json(Array.from({ length: perRequest }, (_, i) => event(`c${c}-e${i}`, "flood"))),
        ).then((r) => ({ c, r })),
      ),
    );
    const acknowledged = results.filter(({ r }) => r.status === 200);
    const refused = results.filter(({ r }) => r.status === 429);
    expect(acknowledged.length + refused.length).toBe(clients);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { r } of refused) {
      expect(r.body.error.code).toBe("too_many_requests");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const expected = acknowledged
      .flatMap(({ c }) => Array.from({ length: perRequest }, (_, i) => `c${c}-e${i}`))
      .sort();
    expect(await storedIds(served.backend, "flood.src")).toEqual(expected);
  });
});

/** An ingest token creating sources without end: each one is a table and metric series. */
describe.each(BACKENDS)("the number of sources ingest may create on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    // the nine built-in sources and room for two more
    served = await serveFixture(fixture, {}, ingestEnv({ QES_INGEST_MAX_SOURCES: "11" }));
  });
  afterAll(() => served.close());

  it("is capped by QES_INGEST_MAX_SOURCES: a new source beyond it is 400 naming source_name; existing ones still take events", async () => {
    const { url, backend } = served;
    for (const source of ["spray.1", "spray.2"]) {
      expect((await postLogs(url, source, json([event(`${source}-a`, "x")]))).status).toBe(200);
    }
    const refused = await postLogs(url, "spray.3", json([event("spray.3-a", "x")]));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_parameter");
    expect(refused.body.error.param).toBe("source_name");
    expect(refused.body.error.message).toContain("QES_INGEST_MAX_SOURCES");
    expect((await backend.schema()).sources["spray.3"]).toBeUndefined();
    // sources that exist, built-in or created, still take events
    expect((await postLogs(url, "spray.1", json([event("spray.1-b", "x")]))).status).toBe(200);
    expect((await postLogs(url, "postgres.logs", json([event("pg-a", "x")]))).status).toBe(200);
    expect(await storedIds(backend, "spray.1")).toEqual(["spray.1-a", "spray.1-b"]);
  });

  it("holds for new sources sent at once: each request is checked against the sources of the requests committed before it", async () => {
    const { url, backend } = served;
    const room = 11 - Object.keys((await backend.schema()).sources).length;
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => postLogs(url, `burst.${i}`, json([event(`burst-${i}`, "x")]))),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(room);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe("source_name");
    }
    expect(Object.keys((await backend.schema()).sources)).toHaveLength(11);
  });
});

/** An ingest token sending ever new keys: each one becomes a column while the writer waits. */
describe.each(BACKENDS)("the number of fields ingest may add to a source on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_INGEST_MAX_FIELDS: "40" }));
  });
  afterAll(() => served.close());

  const keys = (prefix: string) =>
    Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${prefix}${i}`, i]));

  it("is capped by QES_INGEST_MAX_FIELDS: the request that would pass it is 400 naming the event, and stores nothing", async () => {
    const { url, backend } = served;
    expect((await postLogs(url, "wide.src", json([event("w-1", "x", keys("k"))]))).status).toBe(200);
    const before = Object.keys((await backend.schema()).sources["wide.src"]!.fields).sort();
    // the first event is covered by the schema; the second would add 20 more fields
    const refused = await postLogs(
      url,
      "wide.src",
      json([event("w-2", "x", keys("k")), event("w-3", "x", { ...keys("k"), ...keys("m") })]),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_event");
    expect(refused.body.error.message).toMatch(/^event 1: .*QES_INGEST_MAX_FIELDS \(40\)/);
    expect(Object.keys((await backend.schema()).sources["wide.src"]!.fields).sort()).toEqual(before);
    expect(await storedIds(backend, "wide.src")).toEqual(["w-1"]);
    // nested keys count too, and a new source starts from nothing
    const nested = await postLogs(
      url,
      "deep.src",
      json([event("d-1", "x", { a: { ...keys("k"), ...keys("m") } })]),
    );
    expect(nested.status).toBe(400);
    expect((await backend.schema()).sources["deep.src"]).toBeUndefined();
    // events the schema covers keep coming in
    expect((await postLogs(url, "wide.src", json([event("w-4", "y", keys("k"))]))).status).toBe(200);
    expect(await storedIds(backend, "wide.src")).toEqual(["w-1", "w-4"]);
  });

  it("in an NDJSON body, the refusal names the event's line too, as a malformed line's does", async () => {
    const { url, backend } = served;
    const lines = [
      "",
      json(event("l-1", "x", keys("k"))),
      "",
      json(event("l-2", "x", { ...keys("k"), ...keys("m") })),
    ].join("\n");
    const r = await postLogs(url, "lines.src", lines, { "Content-Type": "application/x-ndjson" });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_event", line: 4 });
    expect(r.body.error.message).toMatch(/^event 1 \(line 4\): .*QES_INGEST_MAX_FIELDS \(40\)/);
    const long = await postLogs(url, "lines.src", `${json(event("l-3", "x", { ["k".repeat(1025)]: 1 }))}\n`, {
      "Content-Type": "application/x-ndjson",
    });
    expect(long.body.error).toMatchObject({ code: "invalid_event", line: 1 });
    expect(long.body.error.message).toMatch(/^event 0 \(line 1\): field name/);
    expect((await backend.schema()).sources["lines.src"]).toBeUndefined();
  });

  it("a source past a limit lowered since takes events that add no field (a retype), and refuses one that adds a field", async () => {
    // 45 fields, loaded before the limit of 40 was set
    const grown = await serveFixture(
      fixture,
      { "grown.src": [json(event("g-1", "x", { ...keys("k"), ...keys("m"), n: 1 }))] },
      ingestEnv({ QES_INGEST_MAX_FIELDS: "40" }),
    );
    try {
      const retype = await postLogs(grown.url, "grown.src", json([event("g-2", "x", { n: 1.5 })]));
      expect(retype.status, JSON.stringify(retype.body)).toBe(200);
      const more = await postLogs(grown.url, "grown.src", json([event("g-3", "x", { o: 1 })]));
      expect(more.status).toBe(400);
      expect(more.body.error.message).toMatch(/^event 0: .*QES_INGEST_MAX_FIELDS \(40\)/);
      expect(await storedIds(grown.backend, "grown.src")).toEqual(["g-1", "g-2"]);
    } finally {
      await grown.close();
    }
  });

  it("takes an event at the limit whose new field comes before the conflict that frees room", async () => {
    const { url, backend } = served;
    // id, timestamp, event_message, project, r and 35 fields inside r: the limit exactly
    const full = Object.fromEntries(Array.from({ length: 35 }, (_, i) => [`k${i}`, i]));
    expect((await postLogs(url, "freed.src", json([event("f-1", "x", { r: full })]))).status).toBe(200);
    // `n` comes first, then r becomes a STRING and its 35 fields go: 6 fields
    const r = await postLogs(url, "freed.src", json([event("f-2", "x", { n: 1, r: "text" })]));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(Object.keys((await backend.schema()).sources["freed.src"]!.fields).sort()).toEqual([
      "event_message",
      "id",
      "n",
      "project",
      "r",
      "timestamp",
    ]);
    expect(await storedIds(backend, "freed.src")).toEqual(["f-1", "f-2"]);
  });

  it("a field name past 1,024 bytes is a 400 naming the event, at any depth; nothing stored", async () => {
    const { url, backend } = served;
    // 2.5 MB names: the source's schema held and rewrote each at every later widening (a commit took 10 s after six)
    const long = "k".repeat(1025);
    for (const body of [{ [long]: 1 }, { a: { [long]: 1 } }, { list: [{ x: 1 }, { [long]: 1 }] }]) {
      const r = await postLogs(url, "names.src", json([event("n-1", "x"), event("n-2", "x", body)]));
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(/^event 1: field name "k{40}…" is 1025 bytes long/);
    }
    expect((await backend.schema()).sources["names.src"]).toBeUndefined();
    const fits = "é".repeat(512);
    expect((await postLogs(url, "names.src", json([event("n-3", "x", { a: { [fits]: 1 } })]))).status).toBe(
      200,
    );
    expect(await storedIds(backend, "names.src")).toEqual(["n-3"]);
  });

  it("holds for requests sent at once: each is checked against the fields of the requests committed before it", async () => {
    const { url, backend } = served;
    // id, timestamp, event_message, project and 20 keys of its own: one request fits, two together pass 40
    const rs = await Promise.all(
      ["a", "b", "c", "d", "e", "f"].map((p) =>
        postLogs(url, "race.src", json([event(`race-${p}`, "x", keys(p))])),
      ),
    );
    const accepted = rs.flatMap((r, i) => (r.status === 200 ? [`race-${"abcdef"[i]}`] : []));
    expect(accepted).toHaveLength(1);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_event");
      expect(r.body.error.message).toMatch(/^event 0: .*QES_INGEST_MAX_FIELDS \(40\)/);
    }
    expect(Object.keys((await backend.schema()).sources["race.src"]!.fields)).toHaveLength(24);
    expect(await storedIds(backend, "race.src")).toEqual(accepted);
  });
});

/** A holder of an ingest token who sends most of a body and then nothing. */
describe("a stalled ingest body on duckdb", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    const duckdb = BACKENDS.find((b) => b.name === "duckdb");
    if (!duckdb) throw new Error("no duckdb fixture");
    served = await serveFixture(duckdb, {}, ingestEnv({ QES_INGEST_MAX_BYTES: "1MiB" }));
  });
  afterAll(() => served.close());

  it("holds the bodies read at once only until it has been idle 10 s: then it is dropped and others are taken again", async () => {
    // four gzip bodies that inflate to ~1 MB each, all but their trailer sent: together they hold
    // nearly the whole budget (4 × 1 MiB) while their clients wait
    const u = new URL(served.url);
    const stalled = Array.from({ length: 4 }, (_, c) => {
      const gz = gzipSync(json([event(`stall${c}`, "y".repeat(1_040_000))]));
      const req = http.request({
        host: u.hostname,
        port: u.port,
        path: "/api/logs?source_name=stall.src",
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-encoding": "gzip",
          "x-api-key": INGEST_TOKEN,
        },
      });
      const closed = new Promise<void>((resolve) => {
        req.on("error", () => resolve());
        req.on("close", () => resolve());
      });
      req.write(gz.subarray(0, gz.length - 8));
      return { req, closed };
    });
    await new Promise((r) => setTimeout(r, 1000));
    const body = json([event("meanwhile", "z".repeat(60_000))]);
    const refused = await postLogs(served.url, "stall.src", body);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // the stalled connections are closed by the server, and the budget is free again
    await Promise.all(stalled.map((s) => s.closed));
    expect((await postLogs(served.url, "stall.src", body)).status).toBe(200);
    expect(await storedIds(served.backend, "stall.src")).toEqual(["meanwhile"]);
  }, 30_000);
});
