import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

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
    // the four fields every source has, then 30 per event: event 33 takes it to 1,024
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(
      /^event 33: source "many\.fields" would hold 1024 fields, more than QES_INGEST_MAX_FIELDS \(1000\)/,
    );
    expect(await storedIds(backend, "many.fields")).toEqual([]);
    expect(await postLogs(url, "many.fields", json([{ id: "after", timestamp: at }]))).toMatchObject({
      status: 200,
    });
  });
});
