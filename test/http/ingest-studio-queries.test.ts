import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRows } from "../conformance/support/compare.ts";
import { desc, type Row, sortBy } from "../conformance/support/oracle.ts";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { INGEST_TOKEN, ingestEnv, QUERY_TOKEN } from "./support/ingest.ts";
import { SHIPPED_NOW } from "./support/shipped-events.ts";
import { CASES, EVENTS, PARAMS, rows, STORE, ts } from "./support/studio-queries.ts";

// The reference platform's dashboard (Supabase Studio's Logs Explorer) over events that came in
// as its self-hosted shipper sends them: Vector's http sink, a gzip JSON array per request,
// through POST /api/logs, in the nine sources' shapes of log-event-shapes.md. Each query is the
// SQL text Studio builds — its per-table default query with its filter templates, its count and
// chart queries, its saved templates — sent as consumer SQL of logs.all with `project=default`.
// Expected rows are computed here from the events sent (conformance's oracle model), never taken
// from an engine; every backend must give them. Events carry no `id` (Vector sends none): the
// ids the service derived are mapped back to events by their (distinct) timestamps.

/** a served store per backend, with the answers of each case, for the cross-backend comparison */
const answers = new Map<string, Map<string, Row[]>>();
/** per backend, the ids it derived for the events (Vector sends none), sorted */
const derivedIds = new Map<string, string[]>();

describe.each(BACKENDS)("Studio's log queries over shipped events on $name", (fixture) => {
  let served: ServedFixture;
  /** the id the service derived → the oracle's stand-in id */
  const idMap = new Map<string, string>();
  const mine = new Map<string, Row[]>();
  answers.set(fixture.name, mine);
  derivedIds.set(fixture.name, []);

  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_TEST_NOW: SHIPPED_NOW }));
    // Vector's http sink: batches of a JSON array, gzip, x-api-key
    for (const [source, events] of Object.entries(EVENTS)) {
      for (let i = 0; i < events.length; i += 100) {
        const res = await fetch(`${served.url}/api/logs?source_name=${encodeURIComponent(source)}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-encoding": "gzip",
            "accept-encoding": "zstd,gzip,deflate,br",
            "user-agent": "Vector/0.43.1 (x86_64-unknown-linux-gnu)",
            "x-api-key": INGEST_TOKEN,
          },
          body: gzipSync(JSON.stringify(events.slice(i, i + 100))),
        });
        expect(await res.json(), source).toEqual({ accepted: Math.min(100, events.length - i) });
      }
      for (const r of await runSql(served.backend, `select id, timestamp from \`${source}\``)) {
        idMap.set(String(r.id), `${source}@${r.timestamp}`);
        derivedIds.get(fixture.name)!.push(String(r.id));
      }
    }
  }, 120_000);
  afterAll(() => served?.close());

  it("stored every event once, each under an id of its own", () => {
    const total = Object.values(EVENTS).reduce((n, es) => n + es.length, 0);
    expect(idMap.size).toBe(total);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const params = new URLSearchParams({ ...(c.params ?? PARAMS), sql: c.sql });
    const res = await fetch(`${served.url}/api/endpoints/query/logs.all?${params}`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    const body = (await res.json()) as { result?: Row[] };
    expect(res.status, JSON.stringify(body).slice(0, 600)).toBe(200);
    const got = (body.result ?? []).map((r) =>
      "id" in r ? { ...r, id: idMap.get(String(r.id)) ?? `unknown ${r.id}` } : r,
    );
    mine.set(c.name, got);
    const expected = c.expected();
    expect(expected.length, "the oracle expects rows").toBeGreaterThan(0);
    if (c.orderedBy !== undefined) {
      const key = c.orderedBy;
      const counts = got.map((r) => Number(r[key]));
      expect(counts, `ordered by ${key} desc`).toEqual([...counts].sort((a, b) => b - a));
      expectRows(got, expected, false);
    } else {
      expectRows(got, expected, c.ordered ?? true);
    }
  });

  it("a single log by id (Studio's row detail): metadata's wire shape, records in arrays", async () => {
    for (const cte of ["storage_logs", "realtime_logs", "edge_logs", "auth_logs"] as const) {
      // the newest event of the source that carries the most fields
      const event = sortBy(rows(cte), (e) => desc(JSON.stringify(e.metadata ?? {}).length))[0]!;
      const id = [...idMap].find(([, stand]) => stand === event.id)?.[0];
      expect(id, event.id).toBeDefined();
      const sql = `select id, timestamp, event_message, metadata from ${cte} where id = '${id}' limit 1`;
      const res = await fetch(
        `${served.url}/api/endpoints/query/logs.all?${new URLSearchParams({ ...PARAMS, sql })}`,
        {
          headers: { "X-API-KEY": QUERY_TOKEN },
        },
      );
      const body = (await res.json()) as { result: Row[] };
      expect(res.status, JSON.stringify(body).slice(0, 400)).toBe(200);
      expect(body.result, cte).toEqual([
        { id, timestamp: ts(event), event_message: event.event_message, metadata: STORE.wireMetadata(event) },
      ]);
    }
  });
});

describe("the three backends", () => {
  it("gave the same rows for every Studio query", () => {
    // the same event gets the same id everywhere: Studio fetches a row's detail by it
    const ids = [...derivedIds.values()].map((list) => [...list].sort());
    for (const list of ids.slice(1)) expect(list).toEqual(ids[0]);
    const [first, ...rest] = [...answers.entries()];
    if (!first) return;
    for (const [name, theirs] of rest) {
      for (const [query, rowsOfFirst] of first[1]) {
        if (!theirs.has(query)) continue;
        const sorted = (rs: Row[]) => rs.map((r) => JSON.stringify(r)).sort();
        expect(sorted(theirs.get(query)!), `${name} vs ${first[0]}: ${query}`).toEqual(sorted(rowsOfFirst));
      }
    }
  });
});
