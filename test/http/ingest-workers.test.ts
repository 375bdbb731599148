import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, TEST_POSTGRES_URL } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs } from "./support/ingest.ts";
import { PREPARING, parsedOn, servedPair, storedRows, withPreparer } from "./support/ingest-workers.ts";

const postgres = BACKENDS.find((b) => b.name === "postgres")!;

const SOURCE = "worker.logs";
/** every stored column of the source, ordered */
const rows = (served: ServedFixture) => storedRows(served, SOURCE);
const ndjson = (events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n");

/** the first request: every field the later ones send, so it creates the source (parsed on the main thread) */
const FIRST = [
  {
    id: "first",
    timestamp: "2025-01-15T10:00:00Z",
    event_message: "first",
    metadata: {
      level: "info",
      count: 1,
      ratio: 0.5,
      ok: true,
      tags: ["a"],
      request: { path: "/", headers: { ua: "x" } },
      spans: [{ name: "s", ms: 1 }],
    },
  },
];

/** values every part of the encoding meets: escapes, unicode, numbers, nulls, times in every form */
function laterEvents(round: number): unknown[] {
  const out: unknown[] = [];
  const texts = [
    "tab\there",
    "new\nline",
    "back\\slash",
    'quote"d',
    "émoji 🎉",
    "\u0001ctl",
    "",
    "  spaced  ",
    "\\N",
  ];
  const times: unknown[] = [
    "2025-01-15T10:00:00.123456Z",
    "2025-01-14T23:59:59+02:00",
    1736935200,
    1736935200123,
    1736935200123456,
    "2025-01-13 08:00:00",
  ];
  for (let i = 0; i < 60; i++) {
    const text = texts[i % texts.length]!;
    out.push({
      ...(i % 7 === 3 ? {} : { id: `r${round}-${i}` }),
      ...(i % 11 === 5 ? {} : { timestamp: times[i % times.length] }),
      event_message: `${text} ${round}-${i}`,
      metadata: {
        level: i % 2 ? "error" : text,
        count: i % 5 === 0 ? null : (i - 30) * 2 ** 40,
        ratio: i % 3 === 0 ? -0 : i / 7,
        ok: i % 2 === 0,
        tags: i % 4 === 0 ? [] : [text, `t${i}`],
        request: { path: `/p/${text}`, headers: i % 6 === 0 ? {} : { ua: text } },
        spans:
          i % 5 === 1
            ? []
            : [
                { name: text, ms: i },
                { name: "b", ms: null },
              ],
      },
    });
  }
  return out;
}

// the rows a worker encodes are the rows the main thread would have: the same bodies to a server
// parsing on its ingest worker and to one parsing on its main thread store the same table
describe.each(PREPARING)("ingest bodies parsed and encoded on an ingest worker, on $name", (fixture) => {
  const pair = servedPair(fixture, ingestEnv());

  it("stores exactly the rows the main thread stores, JSON and NDJSON, retried batches once", async () => {
    expect(pair.worker.backend.ingestPreparer).toBeDefined();
    for (const served of [pair.worker, pair.main]) {
      expect((await postLogs(served.url, SOURCE, JSON.stringify(FIRST))).status).toBe(200);
      for (let round = 0; round < 3; round++) {
        const events = laterEvents(round);
        const body = round === 1 ? ndjson(events) : JSON.stringify(events);
        const headers: Record<string, string> = round === 1 ? { "Content-Type": "application/x-ndjson" } : {};
        const r = await postLogs(served.url, SOURCE, body, headers);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toEqual({ accepted: 60 });
        // a retry stores nothing twice
        expect((await postLogs(served.url, SOURCE, body, headers)).status).toBe(200);
      }
    }
    const stored = await rows(pair.worker);
    expect(stored).toHaveLength(1 + 3 * 60);
    expect(stored).toEqual(await rows(pair.main));
    expect((await parsedOn(pair.worker)).worker).toBeGreaterThanOrEqual(6);
    expect((await parsedOn(pair.main)).worker ?? 0).toBe(0);
  }, 60_000);

  it("refuses a bad body on the worker exactly as on the main thread, storing nothing", async () => {
    const bad: [string, Record<string, string>][] = [
      ['[{"event_message": "a"}, 3]', {}],
      ['[{"a": 1}, {"b": ', {}],
      [JSON.stringify([{ event_message: "x" }, { timestamp: "yesterday" }]), {}],
      [JSON.stringify([{ event_message: "x", timestamp: "2031-01-01T00:00:00Z" }]), {}],
      [`[${JSON.stringify({ event_message: "x" })}, {"n": 123456789012345678901234567890e400}]`, {}],
      [
        `{"event_message": "ok"}\n{"event_message": "ok"}\n{"nope"}`,
        { "Content-Type": "application/x-ndjson" },
      ],
      [`[${"[".repeat(80)}${"]".repeat(80)}]`, {}],
      [JSON.stringify({ batch: [{ event_message: "fine" }, "text"] }), {}],
    ];
    for (const [body, headers] of bad) {
      const a = await postLogs(pair.worker.url, SOURCE, body, headers);
      const b = await postLogs(pair.main.url, SOURCE, body, headers);
      expect(a.status, body).toBeGreaterThanOrEqual(400);
      expect(a.status, body).toBeLessThan(500);
      const { requestId: _a, ...errorA } = a.body.error;
      const { requestId: _b, ...errorB } = b.body.error;
      expect({ status: a.status, error: errorA }, body).toEqual({ status: b.status, error: errorB });
    }
    expect(await rows(pair.worker)).toEqual(await rows(pair.main));
  }, 60_000);

  it("a new field in a later body is widened for on the main thread, and stored", async () => {
    const before = (await parsedOn(pair.worker)).main ?? 0;
    const r = await postLogs(
      pair.worker.url,
      SOURCE,
      JSON.stringify([{ event_message: "new", metadata: { brand_new: 7 } }]),
    );
    expect(r.status).toBe(200);
    expect((await parsedOn(pair.worker)).main).toBe(before + 1);
    const found = await runSql(
      pair.worker.backend,
      `select metadata.brand_new as n from \`${SOURCE}\` where event_message = 'new'`,
    );
    expect(found).toEqual([{ n: 7 }]);
  }, 60_000);
});

describe("PostgreSQL ingest when the worker cannot run its preparer", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(
      withPreparer(postgres, "file:///nonexistent/qes-preparer.ts"),
      {},
      ingestEnv(),
    );
  }, 60_000);
  afterAll(() => served?.close());

  it("parses the bodies on the main thread: every request is answered and stored", async () => {
    expect((await postLogs(served.url, SOURCE, JSON.stringify(FIRST))).status).toBe(200);
    for (let round = 0; round < 5; round++) {
      const r = await postLogs(served.url, SOURCE, JSON.stringify(laterEvents(round)));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(await rows(served)).toHaveLength(1 + 5 * 60);
    const parsed = await parsedOn(served);
    expect(parsed.worker ?? 0).toBe(0);
    expect(parsed.main).toBe(6);
  }, 60_000);
});

// the queue's bound in events does not bound memory: one-event requests of a whole body each
// would fill it with 100,000 bodies. It holds at most 8 bodies' bytes (QES_INGEST_MAX_BYTES each).
describe("the ingest queue bounded in bytes, on PostgreSQL with its commits held up", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(postgres, {}, ingestEnv({ QES_INGEST_MAX_BYTES: "10KiB" }));
  }, 60_000);
  afterAll(() => served?.close());

  it("refuses with 429 past 8 bodies' bytes waiting, and takes every request once commits go on", async () => {
    expect((await postLogs(served.url, SOURCE, JSON.stringify(FIRST))).status).toBe(200);
    // the worker started: bodies then wait in the queue, not in parsing
    const warm = [{ id: "warm", timestamp: "2025-01-15T10:00:00Z", event_message: "warm" }];
    expect((await postLogs(served.url, SOURCE, JSON.stringify(warm))).status).toBe(200);
    const schema = (served.backend as unknown as { config: { schema: string } }).config.schema;
    const table = (await served.backend.schema()).sources[SOURCE]!.table;
    // one event of ~9 KB per request
    const body = (i: number) =>
      JSON.stringify([
        { id: `big-${i}`, timestamp: "2025-01-15T10:00:00Z", event_message: "x".repeat(9000) },
      ]);
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await holder.connect();
    let answers: Awaited<ReturnType<typeof postLogs>>[];
    try {
      await holder.query("begin");
      await holder.query(`lock table "${schema}"."${table}" in access exclusive mode`);
      const posted: Promise<Awaited<ReturnType<typeof postLogs>>>[] = [];
      let refusedWhileHeld = 0;
      for (let i = 0; i < 14; i++) {
        posted.push(
          postLogs(served.url, SOURCE, body(i)).then((r) => {
            if (r.status === 429 && /bytes of requests waiting/.test(r.body.error.message))
              refusedWhileHeld++;
            return r;
          }),
        );
        await new Promise((r) => setTimeout(r, 40));
      }
      // the refusals come back while the lock holds every commit up
      for (const deadline = Date.now() + 5000; refusedWhileHeld < 4 && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 20));
      expect(refusedWhileHeld).toBeGreaterThanOrEqual(4);
      await holder.query("rollback");
      answers = await Promise.all(posted);
    } finally {
      await holder.end();
    }
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused[0]!.headers.get("retry-after")).toBeTruthy();
    expect(answers.filter((r) => r.status === 200).length).toBe(14 - refused.length);
    const stored = await runSql(
      served.backend,
      `select count(*) as n from \`${SOURCE}\` where id like 'big-%'`,
    );
    expect(stored).toEqual([{ n: 14 - refused.length }]);
  }, 60_000);
});
