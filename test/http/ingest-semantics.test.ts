import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, INGEST_TOKEN, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);
const at = "2025-01-15T11:00:00Z";

/** POST /api/logs with `Transfer-Encoding: chunked` and no Content-Length, the body in pieces */
function postChunked(url: string, source: string, pieces: Buffer[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `/api/logs?source_name=${encodeURIComponent(source)}`,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": INGEST_TOKEN,
          "transfer-encoding": "chunked",
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    (async () => {
      for (const piece of pieces) {
        req.write(piece);
        await new Promise((r) => setTimeout(r, 5));
      }
      req.end();
    })();
  });
}

/** What a shipper relies on: all or nothing, no duplicates, the same rows on every backend. */
describe.each(BACKENDS)("ingest semantics on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_INGEST_MAX_BYTES: "1MiB" }));
  });
  afterAll(() => served.close());

  it("a bad event at index 999 of 1,000 stores nothing and is named, in JSON and NDJSON", async () => {
    const { url, backend } = served;
    const events: unknown[] = Array.from({ length: 1000 }, (_, i) => event(`n${i}`, "x"));
    events[999] = { id: "bad", timestamp: "not a time" };
    const r = await postLogs(url, "all.or.nothing", json(events));
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^event 999: "timestamp"/);
    const nd = await postLogs(url, "all.or.nothing", events.map((e) => json(e)).join("\n"), {
      "Content-Type": "application/x-ndjson",
    });
    expect(nd.status).toBe(400);
    expect(nd.body.error).toMatchObject({ line: 1000 });
    expect(nd.body.error.message).toMatch(/^event 999 \(line 1000\): "timestamp"/);
    expect(await storedIds(backend, "all.or.nothing")).toEqual([]);
    expect((await backend.schema()).sources["all.or.nothing"]).toBeUndefined();
  });

  it("an event that is not even valid JSON is named by its index in an array or {batch} body, quoting none of the body", async () => {
    const { url, backend } = served;
    const good = Array.from({ length: 5 }, (_, i) => json(event(`s${i}`, "secret-token-like text")));
    const cases: [string, string, RegExp][] = [
      // a truncated event in the middle (a shipper's broken serialiser), a missing value, a bare word
      [
        "array",
        `[${good.slice(0, 3).join(",")},{"id":"x","event_message":"secret-token-like text",${good.slice(3).join(",")}]`,
        /^event 3: not valid JSON/,
      ],
      [
        "batch",
        `{"batch":[${good.slice(0, 2).join(",")},{"id":"x","metadata": }]}`,
        /^event 2: not valid JSON/,
      ],
      ["bare word", `[${good.join(",")}, nul]`, /^event 5: not valid JSON/],
      ["missing comma", `[${good[0]} ${good[1]}]`, /^after event 0: not valid JSON \(expected "," or "]"/],
      ["trailing comma", `[${good.join(",")},]`, /^after event 4: not valid JSON \(a "," before "]"/],
      ["truncated body", `[${good.join(",")},${good[0]?.slice(0, 20)}`, /^event 5: not valid JSON/],
    ];
    for (const [form, body, message] of cases) {
      const r = await postLogs(url, "broken.json", body);
      expect(r.status, form).toBe(400);
      expect(r.body.error.code, form).toBe("invalid_event");
      expect(r.body.error.message, form).toMatch(message);
      expect(r.body.error.message, form).not.toContain("secret-token-like");
    }
    expect(await storedIds(backend, "broken.json")).toEqual([]);
  });

  it("a request whose events fall on more than 366 UTC days is a 400 naming the first past them; nothing stored", async () => {
    // PostgreSQL made a partition per day in one transaction: 3,000 days ran out of its lock
    // table after 34 s (503); DuckDB took them. Every backend now refuses alike.
    const day = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString();
    const spread = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, timestamp: day(i), event_message: "x" }));
    const r = await postLogs(served.url, "days.src", json(spread(367, "a")));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(/^event 366: the request's events fall on more than 366 UTC days/);
    const nd = await postLogs(
      served.url,
      "days.src",
      spread(367, "a")
        .map((e) => json(e))
        .join("\n"),
      {
        "Content-Type": "application/x-ndjson",
      },
    );
    expect(nd.body.error).toMatchObject({ code: "invalid_event", line: 367 });
    expect(await storedIds(served.backend, "days.src")).toEqual([]);
    // many events of a few days are fine
    const few = Array.from({ length: 200 }, (_, i) => ({
      id: `b${i}`,
      timestamp: day(i % 5),
      event_message: "x",
    }));
    expect((await postLogs(served.url, "days.src", json(few))).status).toBe(200);
  });

  it("an event dated more than a day after the server's clock is a 400 naming it; nothing stored", async () => {
    // Retention never reaches a future day: on PostgreSQL each was a partition kept for good and
    // probed by every later ingest — 16 requests of 366 future days made 2,500 of them, after
    // which every ingest of the source ran out of PostgreSQL's lock table.
    const now = Date.parse("2025-01-15T12:00:00Z"); // the served clock (ingestEnv's QES_TEST_NOW)
    const hour = 3_600_000;
    const ahead = (id: string, ms: number) => ({
      id,
      timestamp: new Date(now + ms).toISOString(),
      event_message: id,
    });
    const late = [
      ahead("f0", 0),
      ahead("f1", 23 * hour),
      ahead("f2", 24 * hour + 1000),
      ahead("f3", 90 * 24 * hour),
    ];
    const r = await postLogs(served.url, "future.src", json(late));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(
      /^event 2: "timestamp" 2025-01-16T12:00:01\.000Z is more than a day after the server's clock \(2025-01-15T12:00:00\.000Z\)/,
    );
    // seconds, milliseconds and nanoseconds alike; NDJSON names the line
    const nd = await postLogs(
      served.url,
      "future.src",
      [
        json({ id: "n0", timestamp: now / 1000 }),
        json({ id: "n1", timestamp: (now + 2 * 24 * hour) * 1e6 }),
      ].join("\n"),
      { "Content-Type": "application/x-ndjson" },
    );
    expect(nd.body.error).toMatchObject({ code: "invalid_event", line: 2 });
    expect(nd.body.error.message).toMatch(
      /^event 1 \(line 2\): "timestamp" 2025-01-17T12:00:00\.000Z is more than a day/,
    );
    expect(await storedIds(served.backend, "future.src")).toEqual([]);
    // up to a day ahead (a skewed clock, a local time sent as UTC) is stored
    expect((await postLogs(served.url, "future.src", json(late.slice(0, 2)))).status).toBe(200);
    expect(await storedIds(served.backend, "future.src")).toEqual(["f0", "f1"]);
  });

  it("the same batch posted by ten clients at once is stored once, with ids and without", async () => {
    const { url, backend } = served;
    const withIds = json(Array.from({ length: 30 }, (_, i) => event(`c${i}`, `same ${i}`)));
    const without = json(Array.from({ length: 30 }, (_, i) => event(undefined, `same ${i}`)));
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => postLogs(url, "concurrent.ids", withIds)),
      ...Array.from({ length: 10 }, () => postLogs(url, "concurrent.content", without)),
    ]);
    for (const a of answers) expect(a).toMatchObject({ status: 200, body: { accepted: 30 } });
    expect(await storedIds(backend, "concurrent.ids")).toHaveLength(30);
    expect(new Set(await storedIds(backend, "concurrent.content")).size).toBe(30);
    expect(await storedIds(backend, "concurrent.content")).toHaveLength(30);
  });

  it("a chunked body without Content-Length is read, and refused with 413 past the limit", async () => {
    const { url, backend } = served;
    const body = Buffer.from(json([event("ch1", "x"), event("ch2", "y")]));
    expect(await postChunked(url, "chunked.src", [body.subarray(0, 7), body.subarray(7)])).toMatchObject({
      status: 200,
      body: { accepted: 2 },
    });
    const big = Buffer.from(json([event("ch3", "x".repeat(1536 * 1024))]));
    const refused = await postChunked(url, "chunked.src", [big.subarray(0, 1 << 20), big.subarray(1 << 20)]);
    expect(refused).toMatchObject({ status: 413, body: { error: { code: "request_too_large" } } });
    expect(await storedIds(backend, "chunked.src")).toEqual(["ch1", "ch2"]);
  });

  it("keys with dots, spaces, unicode or nothing, duplicate keys and integers beyond 2^53 read back alike", async () => {
    const { url, backend } = served;
    const body =
      `[{"id":"k1","timestamp":"${at}","a.b":1,"sp ace":"s","ünï😀":true,"":"empty",` +
      `"dup":1,"dup":"last","big":9007199254740993,"metadata":{"x.y":{"z":-9223372036854775808}}}]`;
    expect((await postLogs(url, "odd.keys", body)).status).toBe(200);
    const rows = await runSql(
      backend,
      "select t.`a.b`, t.`sp ace`, t.`ünï😀`, t.dup, t.big, r.z from `odd.keys` t " +
        "cross join unnest(t.metadata) as m cross join unnest(m.`x.y`) as r",
    );
    expect(rows).toEqual([
      {
        "a.b": 1,
        "sp ace": "s",
        "ünï😀": true,
        dup: "last",
        big: "9007199254740993",
        z: "-9223372036854775808",
      },
    ]);
    expect(Object.keys((await backend.schema()).sources["odd.keys"]!.fields)).toContain("");
  });

  it("an event of 10,000 distinct keys is refused by the default field limit, naming it", async () => {
    const { url, backend } = served;
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    const r = await postLogs(url, "wide.keys", json([event("w0", "x"), { ...event("w1", "x"), ...wide }]));
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^event 1: .*QES_INGEST_MAX_FIELDS \(1000\)/);
    expect((await backend.schema()).sources["wide.keys"]).toBeUndefined();
  });
});
