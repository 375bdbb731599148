import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { INGEST_TOKEN, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);
const at = "2025-01-15T11:00:00Z";

/** Probes of POST /api/logs as shippers and token holders send it: every backend stores or refuses alike. */
describe.each(BACKENDS)("ingest probes on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("a source named like another's day or index (`pp 20250115`, `qq timestamp idx`) leaves both taking events", async () => {
    const { url, backend } = served;
    // each name first, then the source whose table's own day partition or index it would name
    const pairs: [string, string][] = [
      ["pp 20250115", "pp"],
      ["qq timestamp idx", "qq"],
      ["rr", "rr project"],
    ];
    for (const [first, second] of pairs) {
      for (const source of [first, second]) {
        const r = await postLogs(url, source, json([{ id: source, timestamp: at }]));
        expect(r, source).toMatchObject({ status: 200, body: { accepted: 1 } });
      }
      expect(await storedIds(backend, first)).toEqual([first]);
      expect(await storedIds(backend, second)).toEqual([second]);
    }
    // and a later day of the shorter-named source still finds its own partition
    const later = await postLogs(url, "pp", json([{ id: "pp2", timestamp: "2025-01-14T11:00:00Z" }]));
    expect(later).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await storedIds(backend, "pp")).toEqual(["pp", "pp2"]);
  });

  it("bodies of no events are 200 {accepted: 0}, an empty body a 400; a body that is one non-object is a 400 naming event 0", async () => {
    const { url, backend } = served;
    for (const body of ["[]", '{"batch":[]}', " [ ] \n"]) {
      expect(await postLogs(url, "no.events", body), body).toMatchObject({
        status: 200,
        body: { accepted: 0 },
      });
    }
    // an empty body is a client's mistake in either form (an unread file, a drained buffer)
    expect(await postLogs(url, "no.events", "", { "Content-Type": "application/x-ndjson" })).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_event", message: "The body is empty: it holds no events." } },
    });
    for (const [body, what] of [
      ["null", "null"],
      ['"text"', "a string"],
      ["42", "a number"],
      ["true", "a boolean"],
    ]) {
      const r = await postLogs(url, "no.events", body as string);
      expect(r.status, body).toBe(400);
      expect(r.body.error.message).toBe(`event 0: an event must be a JSON object, got ${what}`);
    }
    expect(await storedIds(backend, "no.events")).toEqual([]);
  });

  it("keys a JSON path quotes (empty, dots, slashes, quotes, brackets, $) inside records read back alike", async () => {
    const { url, backend } = served;
    const keys = [
      "",
      "a.b",
      "a/b",
      "a~1b",
      "$",
      "$.x",
      "'q'",
      '"d"',
      'a"b',
      "[0]",
      "a]b",
      "..",
      "sp ace",
      "ü",
      "%s",
    ];
    const rec = Object.fromEntries(keys.map((k, i) => [k, i]));
    const body = [
      { id: "k", timestamp: at, m: rec, arr: [rec, { ...rec, extra: 1 }], deep: { r: [{ x: rec }] } },
    ];
    expect(await postLogs(url, "path.keys", json(body))).toMatchObject({
      status: 200,
      body: { accepted: 1 },
    });
    for (const [i, k] of keys.entries()) {
      // read from a record, from the second of an array of records (JSON text on some backends), and deeper
      const f = `\`${k}\``;
      const rows = await runSql(
        backend,
        `select m[0].${f} as a, arr[1].${f} as b, deep[0].r[0].x[0].${f} as c from \`path.keys\``,
      );
      expect(rows, JSON.stringify(k)).toEqual([{ a: i, b: i, c: i }]);
    }
  });
});

describe.each(BACKENDS.filter((b) => b.name === "duckdb"))("a hostile body's fields on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("20,000 events of 30 new keys each are refused at the event past QES_INGEST_MAX_FIELDS, not after widening by all of them", async () => {
    const { url, backend } = served;
    // 8.6 MB: within the body limit. Each event's widening copied the whole schema so far, and
    // every copy was kept until the limit was checked after the last: 600,000 fields, the server
    // ran out of memory and died
    const events: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const keys = Array.from({ length: 30 }, (_, k) => `"f${i}_${k}":1`).join(",");
      events.push(`{"timestamp":"${at}",${keys}}`);
    }
    const r = await postLogs(url, "many.fields", `[${events.join(",")}]`);
    // the four fields every source has, then 30 per event: event 33 takes it past 1,000
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(
      /^event 33: source "many\.fields" would hold more than 1000 fields, the most QES_INGEST_MAX_FIELDS \(1000\)/,
    );
    expect(await storedIds(backend, "many.fields")).toEqual([]);
    expect(await postLogs(url, "many.fields", json([{ id: "after", timestamp: at }]))).toMatchObject({
      status: 200,
    });
  });
});

/** a raw HTTP/1.1 exchange on its own socket: `head`, then `parts`, closed after `closeAfterMs` */
function rawExchange(
  url: string,
  head: string,
  parts: (string | Buffer)[],
  closeAfterMs: number,
): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString();
    });
    socket.on("error", () => resolve(answer));
    socket.on("close", () => resolve(answer));
    socket.write(head);
    for (const part of parts) socket.write(part);
    setTimeout(() => socket.destroy(), closeAfterMs);
  });
}

describe.each(BACKENDS.filter((b) => b.name === "duckdb"))("requests cut short on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_INGEST_MAX_BYTES: "100000" }));
  });
  afterAll(() => served.close());

  const head = (length: number, extra = "") =>
    "POST /api/logs?source_name=cut.short HTTP/1.1\r\nHost: qes\r\n" +
    `X-API-KEY: ${INGEST_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  it("1,000 bodies aborted halfway store nothing and hold none of the bytes read at once", async () => {
    const { url, backend } = served;
    // 50 KB of a 90 KB body each, read before the client goes: had an abort kept its bytes
    // counted, the budget of bodies read at once (4 × 100 KB) would be gone after eight
    const half = `[${`{"id":"x","timestamp":"${at}","pad":"${"p".repeat(200)}"},`.repeat(200)}`;
    for (let round = 0; round < 20; round++) {
      await Promise.all(Array.from({ length: 50 }, () => rawExchange(url, head(90_000), [half], 200)));
    }
    expect(await storedIds(backend, "cut.short")).toEqual([]);
    // 60 KB: more than what is left of the budget were even one round's bytes still counted
    const after = await postLogs(
      url,
      "cut.short",
      json([{ id: "after", timestamp: at, pad: "p".repeat(60_000) }]),
    );
    expect(after).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await storedIds(backend, "cut.short")).toEqual(["after"]);
  });

  it("Expect: 100-continue is answered 100, then 200 once the body is committed; with a bad token 401", async () => {
    const { url } = served;
    const body = json([{ id: "continued", timestamp: at }]);
    const ok = await rawExchange(url, head(body.length, "Expect: 100-continue\r\n"), [body], 1000);
    expect(ok).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK[\s\S]*\{"accepted":1\}$/);
    const refused = await rawExchange(
      url,
      head(body.length, "Expect: 100-continue\r\n").replace(INGEST_TOKEN, "not-a-token-0123456789"),
      [body],
      1000,
    );
    expect(refused).toMatch(/HTTP\/1\.1 401 Unauthorized/);
  });
});
