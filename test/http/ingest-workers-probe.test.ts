import { gzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, TEST_POSTGRES_URL } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, type Posted, postLogs } from "./support/ingest.ts";
import { PREPARING, parsedOn, servedPair, storedRows, withPreparer } from "./support/ingest-workers.ts";

/**
 * Probes of the ingest worker: every body below goes to a server parsing and encoding on its
 * ingest worker and to one parsing on its main thread (no `ingestPreparer`); the answers and the
 * stored rows must be the same.
 */
const postgres = BACKENDS.find((b) => b.name === "postgres")!;

const ndjson = (events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n");
const NDJSON = { "Content-Type": "application/x-ndjson" };

/** an answer without what differs between two servers anyway */
function answer(r: Posted): unknown {
  if (r.status === 200) return { status: r.status, body: r.body };
  const { requestId: _, ...error } = r.body.error;
  return { status: r.status, error };
}

type Body = [string | Uint8Array, Record<string, string>?];

describe.each(PREPARING)(
  "ingest worker probes on $name: the same answers and rows as the main thread",
  (fixture) => {
    const pair = servedPair(fixture, ingestEnv({ QES_INGEST_QUEUE_EVENTS: "40" }));

    /** each body to both servers in turn; the answers compared */
    async function both(source: string, bodies: Body[]): Promise<Posted[]> {
      const out: Posted[] = [];
      for (const [body, headers] of bodies) {
        const a = await postLogs(pair.worker.url, source, body, headers);
        const b = await postLogs(pair.main.url, source, body, headers);
        const shown = typeof body === "string" ? body.slice(0, 200) : `<${body.length} bytes>`;
        expect(answer(a), shown).toEqual(answer(b));
        expect(a.status, shown).toBeLessThan(500);
        out.push(a);
      }
      return out;
    }

    it("keys named like Object.prototype's members, at the top and nested", async () => {
      const source = "probe.keys";
      const event = (i: number) => ({
        id: `k${i}`,
        timestamp: "2025-01-15T10:00:00Z",
        event_message: `m${i}`,
        constructor: `c${i}`,
        toString: i,
        ["__proto__"]: { inner: i },
        "a.b": "dot",
        "": "empty key",
        metadata: {
          hasOwnProperty: i,
          valueOf: "v",
          constructor: { name: `n${i}` },
          ["__proto__"]: [1, 2, i],
        },
      });
      // JSON.stringify drops an own __proto__ set by a literal: write it by hand
      const text = (i: number) =>
        JSON.stringify(event(i)).replace('"a.b"', `"__proto__":{"inner":${i}},"a.b"`);
      const before = (await parsedOn(pair.worker)).worker ?? 0;
      await both(source, [[`[${text(0)}]`], [`[${text(1)},${text(2)}]`], [`${text(3)}\n${text(4)}`, NDJSON]]);
      expect((await parsedOn(pair.worker)).worker ?? 0).toBeGreaterThan(before);
      expect(await storedRows(pair.worker, source)).toEqual(await storedRows(pair.main, source));
    }, 60_000);

    it("events without ids or times, duplicates, blank lines, batch bodies, gzip, message moved", async () => {
      const source = "probe.shapes";
      const first = {
        id: "f",
        timestamp: "2025-01-15T10:00:00Z",
        event_message: "f",
        metadata: { n: 1, s: "x" },
      };
      const same = { event_message: "same", metadata: { n: 2 } };
      const bodies: Body[] = [
        [JSON.stringify([first])],
        // no id, no timestamp: the id from the content, the time from the server's clock
        [JSON.stringify([same, same, { event_message: "other" }])],
        [JSON.stringify([same])],
        // one id twice in a body: the first is kept
        [
          JSON.stringify([
            { id: "dup", event_message: "one" },
            { id: "dup", event_message: "two" },
          ]),
        ],
        [JSON.stringify({ batch: [{ id: "b1", event_message: "batched" }] })],
        [JSON.stringify({ batch: [{ id: "b2", event_message: "not a batch" }], metadata: { n: 3 } })],
        [`\n\n${ndjson([{ id: "n1", event_message: "a" }])}\r\n\r\n\n${ndjson([{ id: "n2" }])}\n`, NDJSON],
        [`\ufeff${JSON.stringify({ id: "bom", event_message: "bom" })}`],
        [
          `${JSON.stringify({ id: "t1", event_message: "a" })}${JSON.stringify({ id: "t2", event_message: "b" })}`,
        ],
        [`${JSON.stringify({ id: "t3" })}\n\n${JSON.stringify({ id: "t4" })}`],
        [
          gzipSync(JSON.stringify([{ id: "gz", event_message: "gzipped", metadata: { s: "g" } }])),
          { "Content-Encoding": "gzip" },
        ],
        [JSON.stringify([{ id: "msg", message: "moved" }, { message: "moved too" }])],
        [
          '[{"id": "big", "metadata": {"n": 123456789012345678}}, {"id": "big2", "metadata": {"n": -9223372036854775808}}]',
        ],
        [JSON.stringify([{ id: "nul", event_message: "a\u0000b\\c\td", metadata: { s: "\ud800" } }])],
        [JSON.stringify([])],
        [JSON.stringify({ batch: [] })],
        [
          JSON.stringify([
            { id: 17, event_message: "numeric id" },
            { id: "  ", event_message: "blank id" },
          ]),
        ],
        [
          JSON.stringify([
            { id: "tz", timestamp: 1736935200.5 },
            { id: "tz2", timestamp: "2025-01-15" },
          ]),
        ],
        [JSON.stringify([{ id: "proj", project: "p", event_message: "x" }])],
        // the fixed fields holding what they usually do not
        [
          JSON.stringify([
            { id: "em1", event_message: 5 },
            { id: "em2", event_message: { a: [1, "x"] } },
            { id: "em3", event_message: null, message: "m" },
            { id: "em4", project: 7, metadata: null },
            { id: "em5", timestamp: null, metadata: { n: null, s: null } },
            { id: "em6", event_message: ["a"], message: { not: "text" } },
          ]),
        ],
      ];
      // every body twice: a retry stores nothing twice
      await both(source, [...bodies, ...bodies]);
      expect(await storedRows(pair.worker, source)).toEqual(await storedRows(pair.main, source));
    }, 60_000);

    it("the first events of a built-in source (there from start-up, empty), retried", async () => {
      const body = JSON.stringify([
        { id: "b1", timestamp: "2025-01-15T09:00:00Z", event_message: "builtin" },
        { timestamp: "2025-01-15T09:00:01Z", event_message: "no id" },
        { id: "b2", timestamp: "2025-01-15T09:00:02Z", event_message: "with field", metadata: { x: 1 } },
      ]);
      const before = (await parsedOn(pair.worker)).worker ?? 0;
      await both("pgbouncer.logs.prod", [[body], [body]]);
      await both("gotrue.logs.prod", [[JSON.stringify([{ id: "g", event_message: "covered" }])]]);
      // the retry (covered once the first widened) and the covered body: on the worker
      expect((await parsedOn(pair.worker)).worker).toBe(before + 2);
      for (const source of ["pgbouncer.logs.prod", "gotrue.logs.prod"])
        expect(await storedRows(pair.worker, source)).toEqual(await storedRows(pair.main, source));
    }, 60_000);

    it("a source named like an Object.prototype member is refused alike", async () => {
      for (const source of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
        const [r] = await both(source, [[JSON.stringify([{ event_message: "x" }])]]);
        expect(r!.status).toBe(400);
      }
    }, 60_000);

    it("refusals: the same status, message and line", async () => {
      const source = "probe.bad";
      const ok = (id: string) => JSON.stringify({ id, event_message: "ok", metadata: { n: 1 } });
      await both(source, [[`[${ok("seed")}]`]]);
      const bodies: Body[] = [
        [`\n\n${ok("a")}\n\n${ok("b")}\n\n{"nope"}\n`, NDJSON],
        [`\n\n${ok("a")}\n\n[1]\n`, NDJSON],
        [`${ok("a")}\n\n${ok("b")}\n"text"`],
        [`${ok("a")}\n{"id": {"x": 1}}`, NDJSON],
        [`${ok("a")}\n{"id": "${"x".repeat(5000)}"}`, NDJSON],
        [`${ok("a")}\n{"project": "${"x".repeat(5000)}"}`, NDJSON],
        [JSON.stringify([{ event_message: "x", timestamp: "0000-12-31T00:00:00Z" }])],
        [JSON.stringify([{ event_message: "x", timestamp: "2025-01-17T00:00:00Z" }])],
        [JSON.stringify([{ event_message: "x", timestamp: true }])],
        [ndjson(Array.from({ length: 41 }, (_, i) => ({ id: `many${i}` }))), NDJSON],
        [JSON.stringify(Array.from({ length: 41 }, (_, i) => ({ id: `many${i}` })))],
        [
          ndjson(
            Array.from({ length: 30 }, (_, i) => ({ id: `d${i}`, timestamp: `20${10 + i}-01-01T00:00:00Z` })),
          ),
          NDJSON,
        ],
        [`[${ok("a")}, {"n": 1e400}]`],
        [`{"a": 1, "a": 2}`],
        [`[{"id": "m", "a": 1, "a": {"b": 1}}]`],
        [Uint8Array.from([0x5b, 0xff, 0x5d])],
        [""],
        ["   \n  "],
        ["", NDJSON],
        [ok("x"), { "Content-Type": "text/plain" }],
        [Uint8Array.from([1, 2, 3]), { "Content-Encoding": "gzip" }],
      ];
      for (const r of await both(source, bodies)) expect(r.status).toBeGreaterThanOrEqual(200);
      expect(await storedRows(pair.worker, source)).toEqual(await storedRows(pair.main, source));
    }, 60_000);
  },
);

// rows a worker encoded for the schema the route read are not written once a batch committed
// ahead of them (in an earlier group or earlier in theirs) changed the source: a new field, or a
// field's type widened (INT64 to FLOAT64 to STRING)
describe("ingest worker probes on postgres: the schema changes between a body's encoding and its commit", () => {
  const pair = servedPair(postgres, ingestEnv());

  /** `first`, then `bodies` posted at once while the source's table is locked, so they commit together after it */
  async function heldUp(
    served: ServedFixture,
    source: string,
    first: string[],
    bodies: string[],
  ): Promise<number[]> {
    const schema = (served.backend as unknown as { config: { schema: string } }).config.schema;
    const table = (await served.backend.schema()).sources[source]!.table;
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query(`lock table "${schema}"."${table}" in access exclusive mode`);
      const posted: Promise<Posted>[] = [];
      for (const body of first) {
        posted.push(postLogs(served.url, source, body));
        await new Promise((r) => setTimeout(r, 150));
      }
      for (const body of bodies) posted.push(postLogs(served.url, source, body));
      await new Promise((r) => setTimeout(r, 500));
      await holder.query("rollback");
      return (await Promise.all(posted)).map((r) => r.status);
    } finally {
      await holder.end();
    }
  }

  const seed = JSON.stringify([
    { id: "seed", timestamp: "2025-01-15T10:00:00Z", metadata: { n: 1, s: "a" } },
  ]);
  const covered = (round: number, i: number) =>
    JSON.stringify([
      { id: `c${round}-${i}`, timestamp: "2025-01-15T10:00:01Z", metadata: { n: i * 3, s: `s${i}` } },
      { timestamp: "2025-01-14T10:00:01Z", metadata: { n: -i, s: `t${round}-${i}` } },
    ]);

  it("ids repeated across bodies committed together, within bodies, and of events without ids: each stored once", async () => {
    const source = "probe.race.duplicates";
    const body = (i: number) =>
      JSON.stringify([
        { id: "shared", timestamp: "2025-01-15T10:00:02Z", metadata: { n: 7, s: "same" } },
        { id: `own${i}`, timestamp: "2025-01-15T10:00:03Z", metadata: { n: i, s: "own" } },
        { timestamp: "2025-01-15T10:00:04Z", metadata: { n: 8, s: "no id" } },
        { id: `own${i}`, timestamp: "2025-01-15T10:00:05Z", metadata: { n: -i, s: "repeated" } },
      ]);
    for (const served of [pair.worker, pair.main]) {
      expect((await postLogs(served.url, source, seed)).status).toBe(200);
      const statuses = await heldUp(served, source, [body(0)], [1, 2, 3, 4, 5, 0].map(body));
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
    }
    const stored = await storedRows(pair.worker, source);
    expect(stored).toHaveLength(1 + 1 + 6 + 1);
    expect(stored).toEqual(await storedRows(pair.main, source));
  }, 60_000);

  it("NUL and lone surrogates escaped in JSON text (jsonb refuses both), committed with others: stored alike", async () => {
    const source = "probe.race.unstorable";
    const bad = JSON.stringify([
      { id: "bad", metadata: { n: 3, s: "nul \u0000 and \ud800", r: { q: "a\u0000\udc00b" } } },
    ]);
    const statuses: number[][] = [];
    for (const served of [pair.worker, pair.main]) {
      expect(
        (
          await postLogs(
            served.url,
            source,
            JSON.stringify([{ id: "seed", metadata: { n: 1, s: "a", r: { q: "b" } } }]),
          )
        ).status,
      ).toBe(200);
      statuses.push(await heldUp(served, source, [covered(0, 9)], [covered(0, 1), bad, covered(0, 2)]));
    }
    expect(statuses[0]).toEqual(statuses[1]);
    expect(statuses[0]).toEqual([200, 200, 200, 200]);
    expect(await storedRows(pair.worker, source)).toEqual(await storedRows(pair.main, source));
  }, 60_000);

  it("bodies encoded before a widening that commits ahead of them are parsed again, and counted on the main thread too", async () => {
    const source = "probe.race.counted";
    expect((await postLogs(pair.worker.url, source, seed)).status).toBe(200);
    const before = await parsedOn(pair.worker);
    const widening = JSON.stringify([{ id: "w", metadata: { n: 2.5 } }]);
    expect(
      await heldUp(
        pair.worker,
        source,
        [widening],
        [0, 1, 2].map((i) => covered(0, i)),
      ),
    ).toEqual([200, 200, 200, 200]);
    const after = await parsedOn(pair.worker);
    // the widening on the main thread (new to the schema); the 3 others on the worker, encoded for
    // the schema before it, then parsed again at their commit
    expect((after.worker ?? 0) - (before.worker ?? 0)).toBe(3);
    expect((after.main ?? 0) - (before.main ?? 0)).toBe(1 + 3);
  }, 60_000);

  it.each([
    ["a new field", JSON.stringify([{ id: "w", metadata: { n: 2, fresh: true } }])],
    ["INT64 to FLOAT64", JSON.stringify([{ id: "w", metadata: { n: 2.5 } }])],
    ["INT64 to STRING", JSON.stringify([{ id: "w", metadata: { n: "two" } }])],
    ["a record over a scalar", JSON.stringify([{ id: "w", metadata: { s: { deep: 1 } } }])],
  ])(
    "widened by %s committed ahead, or within the same group",
    async (name, widening) => {
      const source = `probe.race.${name.replaceAll(" ", "_")}`;
      for (const served of [pair.worker, pair.main]) {
        expect((await postLogs(served.url, source, seed)).status).toBe(200);
        // the widening commits first, alone (its group started the commit the lock holds up)
        expect(
          await heldUp(
            served,
            source,
            [widening],
            [0, 1, 2, 3].map((i) => covered(0, i)),
          ),
        ).toEqual([200, 200, 200, 200, 200]);
        // then widening again within one group of bodies encoded for the schema before it
        const again = JSON.stringify([{ id: "w2", metadata: { n: "again", other: [1] } }]);
        expect(
          await heldUp(served, source, [covered(1, 9)], [covered(1, 0), again, covered(1, 1), covered(1, 2)]),
        ).toEqual([200, 200, 200, 200, 200]);
      }
      const stored = await storedRows(pair.worker, source);
      expect(stored).toHaveLength(1 + 1 + 8 + 1 + 8);
      expect(stored).toEqual(await storedRows(pair.main, source));
    },
    60_000,
  );
});

describe("ingest worker probes on postgres: a worker's thread ends with bodies in flight", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    const exiting = new URL("./fixtures/preparers/exiting-postgres-preparer.ts", import.meta.url).href;
    served = await serveFixture(withPreparer(postgres, exiting), {}, ingestEnv());
  }, 60_000);
  afterAll(() => served?.close());

  it("answers and stores every body, those in flight on the thread included, once", async () => {
    const source = "probe.exit";
    const body = (i: number, message: string) =>
      JSON.stringify(
        Array.from({ length: 50 }, (_, j) => ({
          id: `e${i}-${j}`,
          event_message: j === 25 ? message : "fine",
        })),
      );
    expect((await postLogs(served.url, source, body(0, "fine"))).status).toBe(200);
    for (let round = 1; round <= 2; round++) {
      const posted = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((i) =>
          postLogs(served.url, source, body(round * 10 + i, i === 3 ? "exit" : "fine")),
        ),
      );
      expect(posted.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    }
    const stored = await runSql(
      served.backend,
      `select count(*) as n, count(distinct id) as d from \`${source}\``,
    );
    expect(stored).toEqual([{ n: 50 * 13, d: 50 * 13 }]);
    const exits = await runSql(
      served.backend,
      `select count(*) as n from \`${source}\` where event_message = 'exit'`,
    );
    expect(exits).toEqual([{ n: 2 }]);
  }, 60_000);
});

// ClickHouse commits one call at a time: bodies posted at once meet in groups, some encoded
// before a body of their group (or of the group ahead) added fields
describe.each(PREPARING)("ingest worker probes on $name: bodies at once, some adding fields", (fixture) => {
  const pair = servedPair(fixture, ingestEnv());

  it("stores what the main thread stores", async () => {
    const source = "probe.concurrent";
    const body = (i: number) =>
      JSON.stringify(
        Array.from({ length: 20 }, (_, j) => ({
          id: `x${i}-${j}`,
          timestamp: `2025-01-1${4 + (j % 2)}T10:00:${String(j).padStart(2, "0")}Z`,
          event_message: `m${i}`,
          metadata: { n: j, s: `s${i}`, ...(i % 4 === 3 && j === 7 ? { [`new${i}`]: { deep: i } } : {}) },
        })),
      );
    for (const served of [pair.worker, pair.main]) {
      expect((await postLogs(served.url, source, body(0))).status).toBe(200);
      for (let round = 0; round < 2; round++) {
        const posted = await Promise.all(
          Array.from({ length: 12 }, (_, i) => postLogs(served.url, source, body(100 * round + i + 1))),
        );
        expect(posted.map((r) => r.status)).toEqual(Array(12).fill(200));
      }
    }
    const stored = await storedRows(pair.worker, source);
    expect(stored).toHaveLength(20 * 25);
    expect(stored).toEqual(await storedRows(pair.main, source));
  }, 60_000);
});

describe.each(PREPARING)(
  "ingest worker probes on $name: retention drops the days bodies are for",
  (fixture) => {
    const pair = servedPair(fixture, ingestEnv({ QES_RETENTION_DAYS: "2" }));

    it("bodies for a dropped day, sent again, are stored again, as on the main thread", async () => {
      const source = "probe.retention";
      const body = (day: string) =>
        JSON.stringify(
          Array.from({ length: 10 }, (_, j) => ({
            id: `r${day}-${j}`,
            timestamp: `2025-01-${day}T10:00:0${j}Z`,
            metadata: { n: j },
          })),
        );
      for (const served of [pair.worker, pair.main]) {
        for (const day of ["05", "15"])
          expect((await postLogs(served.url, source, body(day))).status).toBe(200);
        await served.service.retention.run();
        expect(await storedRows(served, source)).toHaveLength(10);
        const again = await Promise.all(
          [body("05"), body("15"), body("06")].map((b) => postLogs(served.url, source, b)),
        );
        expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
      }
      const stored = await storedRows(pair.worker, source);
      expect(stored).toHaveLength(30);
      expect(stored).toEqual(await storedRows(pair.main, source));
    }, 60_000);
  },
);
