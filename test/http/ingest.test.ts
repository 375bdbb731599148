import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Backend } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, startService } from "@qes/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import {
  event,
  INGEST_TOKEN,
  ingestEnv,
  ingestJwt,
  postLogs,
  QUERY_TOKEN,
  SCOPED_INGEST_TOKEN,
  storedIds,
} from "./support/ingest.ts";
import { metricSum, scrape } from "./support/prometheus.ts";

const json = (v: unknown) => JSON.stringify(v);

/** a second server over the same store, as a restart starts it (with `env` added to the ingest env) */
async function serveStore(backend: Backend, env: Record<string, string> = {}) {
  const config = loadConfig({ ...ingestEnv(env), NODE_ENV: "test", PORT: "0" });
  return startService({
    config,
    backend,
    keys: parseApiKeys(config.apiKeys ?? ""),
    logger: createLogger({ destination: { write: () => undefined } }),
    host: "127.0.0.1",
  });
}

describe.each(BACKENDS)("POST /api/logs on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("takes each body form: a JSON array, one object, {batch: [...]}, NDJSON", async () => {
    const { url, backend } = served;
    expect((await postLogs(url, "forms.src", json([event("a1", "one"), event("a2", "two")]))).body).toEqual({
      accepted: 2,
    });
    expect((await postLogs(url, "forms.src", json(event("o1", "object")))).body).toEqual({ accepted: 1 });
    expect(
      (await postLogs(url, "forms.src", json({ batch: [event("b1", "x"), event("b2", "y")] }))).body,
    ).toEqual({
      accepted: 2,
    });
    const nd = `${json(event("n1", "nd"))}\n\n${json(event("n2", "nd"))}\n`;
    const r = await postLogs(url, "forms.src", nd, { "Content-Type": "application/x-ndjson" });
    expect(r).toMatchObject({ status: 200, body: { accepted: 2 } });
    expect(await storedIds(backend, "forms.src")).toEqual(["a1", "a2", "b1", "b2", "n1", "n2", "o1"]);
  });

  it("takes a gzip body and answers 413 past QES_INGEST_MAX_BYTES, storing nothing", async () => {
    const { url, backend } = served;
    const gz = gzipSync(json([event("g1", "zipped"), event("g2", "zipped")]));
    expect(await postLogs(url, "gzip.src", gz, { "Content-Encoding": "gzip" })).toMatchObject({
      status: 200,
      body: { accepted: 2 },
    });
    expect(await storedIds(backend, "gzip.src")).toEqual(["g1", "g2"]);
    // 11 MiB of one event's message, compressed to a few KiB
    const big = json([event("big", "x".repeat(11 * 1024 * 1024))]);
    const plain = await postLogs(url, "gzip.src", big);
    expect(plain.status).toBe(413);
    expect(plain.body.error.code).toBe("request_too_large");
    const zipped = await postLogs(url, "gzip.src", gzipSync(big), { "Content-Encoding": "gzip" });
    expect(zipped.status).toBe(413);
    expect(zipped.body.error.message).toContain("QES_INGEST_MAX_BYTES");
    expect(await storedIds(backend, "gzip.src")).toEqual(["g1", "g2"]);
  });

  it("refuses a request with a bad event with 400 naming its index and reason, storing none of it", async () => {
    const { url, backend } = served;
    const r = await postLogs(
      url,
      "bad.src",
      json([event("ok1", "fine"), event("ok2", "fine"), event("bad", "x", { timestamp: "yesterday" })]),
    );
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(/^event 2: "timestamp"/);
    const nd = await postLogs(url, "bad.src", `${json(event("ok3", "fine"))}\n{"broken":\n`, {
      "Content-Type": "application/x-ndjson",
    });
    expect(nd.status).toBe(400);
    expect(nd.body.error.message).toMatch(/^event 1 \(line 2\): not valid JSON/);
    expect(await storedIds(backend, "bad.src")).toEqual([]);
    expect((await backend.schema()).sources["bad.src"]).toBeUndefined();
  });

  it("stores a batch posted twice once: by id, and by content for events without one", async () => {
    const { url, backend } = served;
    const withIds = json([event("d1", "a"), event("d2", "b"), event("d1", "a")]);
    for (let i = 0; i < 2; i++) expect((await postLogs(url, "dedupe.ids", withIds)).status).toBe(200);
    expect(await storedIds(backend, "dedupe.ids")).toEqual(["d1", "d2"]);
    const noIds = json([event(undefined, "first"), event(undefined, "second")]);
    for (let i = 0; i < 2; i++) expect((await postLogs(url, "dedupe.content", noIds)).status).toBe(200);
    // gzip and another key order are the same events
    const reordered = json([{ event_message: "first", timestamp: "2025-01-15T11:00:00Z" }]);
    await postLogs(url, "dedupe.content", gzipSync(reordered), { "Content-Encoding": "gzip" });
    const ids = await storedIds(backend, "dedupe.content");
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });

  it("commits concurrent requests together: fewer transactions than requests, each answered after its commit", async () => {
    const { url, backend } = served;
    const calls: number[] = [];
    const ingest = backend.ingest.bind(backend);
    backend.ingest = (batches) => {
      calls.push(batches.length);
      return ingest(batches);
    };
    try {
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, c) =>
          postLogs(url, "group.src", json(Array.from({ length: 20 }, (_, i) => event(`g${c}-${i}`, "x")))),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(16).fill(200));
    } finally {
      backend.ingest = ingest;
    }
    expect(calls.reduce((a, b) => a + b, 0)).toBe(16);
    expect(calls.length).toBeLessThan(16);
    expect(Math.max(...calls)).toBeGreaterThan(1);
    expect(await storedIds(backend, "group.src")).toHaveLength(16 * 20);
    const text = await scrape(url, QUERY_TOKEN);
    expect(metricSum(text, "qes_ingest_events_total", { outcome: "stored" })).toBeGreaterThanOrEqual(16 * 20);
    expect(metricSum(text, "qes_ingest_commit_requests_sum")).toBeGreaterThanOrEqual(16);
    expect(metricSum(text, "qes_ingest_queued_events")).toBe(0);
  });

  it("keeps query and ingest rights apart: 403 both ways, 401 without a token", async () => {
    const { url } = served;
    const asQuery = await postLogs(url, "rights.src", json([event("r1", "x")]), { "X-API-KEY": QUERY_TOKEN });
    expect(asQuery.status).toBe(403);
    expect(asQuery.body.error.code).toBe("forbidden");
    const query = await fetch(`${url}/api/endpoints/query/logs.all?project=alpha`, {
      headers: { "X-API-KEY": INGEST_TOKEN },
    });
    expect(query.status).toBe(403);
    expect(((await query.json()) as any).error.message).toMatch(/ingest token/);
    const jwtQuery = await postLogs(url, "rights.src", json([event("r2", "x")]), {
      "X-API-KEY": "",
      Authorization: `Bearer ${ingestJwt("query")}`,
    });
    expect(jwtQuery.status).toBe(403);
    const jwtIngest = await fetch(`${url}/api/endpoints/query/logs.all?project=alpha`, {
      headers: { Authorization: `Bearer ${ingestJwt("ingest")}` },
    });
    expect(jwtIngest.status).toBe(403);
    expect((await postLogs(url, "rights.src", "[]", { "X-API-KEY": "" })).status).toBe(401);
    expect(
      (await postLogs(url, "rights.src", "[]", { "X-API-KEY": "not-a-known-token-0123456789" })).status,
    ).toBe(401);
    expect(await storedIds(served.backend, "rights.src")).toEqual([]);
  });

  it("limits scoped tokens to their sources: QES_INGEST_KEYS @source and JWT ingest:<source>", async () => {
    const { url, backend } = served;
    expect(
      (await postLogs(url, "only.this", json([event("s1", "x")]), { "X-API-KEY": SCOPED_INGEST_TOKEN }))
        .status,
    ).toBe(200);
    const other = await postLogs(url, "not.this", json([event("s2", "x")]), {
      "X-API-KEY": SCOPED_INGEST_TOKEN,
    });
    expect(other.status).toBe(403);
    const jwt = { "X-API-KEY": "", Authorization: `Bearer ${ingestJwt("query:logs.all ingest:jwt.src")}` };
    expect((await postLogs(url, "jwt.src", json([event("j1", "x")]), jwt)).status).toBe(200);
    expect((await postLogs(url, "only.this", json([event("j2", "x")]), jwt)).status).toBe(403);
    expect(await storedIds(backend, "only.this")).toEqual(["s1"]);
    expect(await storedIds(backend, "jwt.src")).toEqual(["j1"]);
    expect(await storedIds(backend, "not.this")).toEqual([]);
  });

  it("answers ingested events from logs.all right after the 200 (a built-in source)", async () => {
    const { url } = served;
    const edge = (id: string) =>
      event(id, `GET | 200 | https://ingested.example.co/rest/v1/x`, {
        project: "ingested",
        metadata: { request: { method: "GET", path: "/rest/v1/x" }, response: { status_code: 200 } },
      });
    const before = await fetch(`${url}/api/endpoints/query/logs.all?project=ingested`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    expect(((await before.json()) as any).result).toEqual([]);
    expect((await postLogs(url, "cloudflare.logs.prod", json([edge("v1"), edge("v2")]))).status).toBe(200);
    const after = await fetch(`${url}/api/endpoints/query/logs.all?project=ingested`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    const rows = ((await after.json()) as any).result;
    expect(rows.map((r: any) => r.id).sort()).toEqual(["v1", "v2"]);
    expect(rows[0].metadata[0].request[0].path).toBe("/rest/v1/x");
  });

  it("a field that only ingest brought is read by the next query (compiled queries follow the schema)", async () => {
    const { url } = served;
    const sql = encodeURIComponent(
      "select m.fresh_field from edge_logs cross join unnest(metadata) as m where m.fresh_field is not null",
    );
    const ask = async () => {
      const res = await fetch(`${url}/api/endpoints/query/logs.all?project=fresh&sql=${sql}`, {
        headers: { "X-API-KEY": QUERY_TOKEN },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as any).result;
    };
    expect(await ask()).toEqual([]);
    const ev = event("fresh1", "x", { project: "fresh", metadata: { fresh_field: "new!" } });
    expect((await postLogs(url, "cloudflare.logs.prod", json([ev]))).status).toBe(200);
    expect(await ask()).toEqual([{ fresh_field: "new!" }]);
  });

  it("refuses an event whose widening would break a served stored query; the server still starts afterwards", async () => {
    const { url, backend } = served;
    const usage = async (on: string) => {
      const res = await fetch(`${on}/api/endpoints/query/usage.api-counts?project=guarded&interval=daily`, {
        headers: { "X-API-KEY": QUERY_TOKEN },
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const good = (id: string) =>
      event(id, "GET | 200 | https://guarded.example.co/rest/v1/x", {
        project: "guarded",
        metadata: { request: { path: "/rest/v1/x", url: "https://guarded.example.co/rest/v1/x" } },
      });
    expect((await postLogs(url, "cloudflare.logs.prod", json([good("g1")]))).status).toBe(200);
    // the record every usage counter unnests, sent once as a number: widening would make it STRING
    const hostile = [good("g2"), event("h1", "x", { project: "guarded", metadata: { request: 5 } })];
    const r = await postLogs(url, "cloudflare.logs.prod", json(hostile));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(
      /^event 1: field "metadata\.request" would change from RECORD to STRING/,
    );
    // the stored query is the server log's to name, not an ingest token's (ingest-token-leftovers.test.ts)
    expect(r.body.error.message).toContain("a stored query this server runs depends on the field's type");
    // all or nothing: the good event of the refused request is not stored either
    expect(await storedIds(backend, "cloudflare.logs.prod")).not.toContain("g2");
    expect((await usage(url)).status).toBe(200);

    // a widening no stored query minds is still taken, as a load would take it
    const loose = (id: string, v: unknown) =>
      event(id, "x", { project: "guarded", metadata: { loose_field: v } });
    expect((await postLogs(url, "cloudflare.logs.prod", json([loose("l1", 1)]))).status).toBe(200);
    expect((await postLogs(url, "cloudflare.logs.prod", json([loose("l2", "text")]))).status).toBe(200);

    // and the store still starts a server: every stored query compiles against its schema
    const second = await serveStore(backend);
    try {
      const counted = await usage(second.url);
      expect(counted.status).toBe(200);
      expect(counted.body.result.length).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });

  it("a source created by ingest is read by a stored query of QES_ENDPOINTS_DIR", async () => {
    const { url, backend } = served;
    const ev = (id: string, status: number) =>
      event(id, "request", { project: "p1", metadata: { response: { status_code: status } } });
    expect(
      (await postLogs(url, "myapp.logs", json([ev("m1", 200), ev("m2", 500), ev("m3", 503)]))).status,
    ).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), "qes-ingest-endpoints-"));
    try {
      writeFileSync(
        join(dir, "myapp.errors.sql"),
        "select t.id from `myapp.logs` as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r\n" +
          "where r.status_code >= 500 order by t.id",
      );
      writeFileSync(
        join(dir, "myapp.errors.json"),
        json({ id: "2d6f0e3a-8c1b-4e7d-9a5f-3b2c1d0e9f8a", maxRows: 100, params: {} }),
      );
      const second = await serveStore(backend, { QES_ENDPOINTS_DIR: dir });
      try {
        const res = await fetch(`${second.url}/api/endpoints/query/myapp.errors`, {
          headers: { "X-API-KEY": QUERY_TOKEN },
        });
        expect(((await res.json()) as any).result).toEqual([{ id: "m2" }, { id: "m3" }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a stored query of QES_ENDPOINTS_DIR may name a source before its first events: it is created empty at start-up", async () => {
    const { backend } = served;
    const dir = mkdtempSync(join(tmpdir(), "qes-ingest-endpoints-first-"));
    try {
      writeFileSync(
        join(dir, "early.errors.sql"),
        "select t.id, r.status_code from `early.logs` as t cross join unnest(t.metadata) as m\n" +
          "cross join unnest(m.response) as r where r.status_code >= 500 order by t.id",
      );
      writeFileSync(
        join(dir, "early.errors.json"),
        json({ id: "3e7a1f2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", maxRows: 100, params: {} }),
      );
      expect((await backend.schema()).sources["early.logs"]).toBeUndefined();
      const second = await serveStore(backend, { QES_ENDPOINTS_DIR: dir });
      try {
        const ask = async () => {
          const res = await fetch(`${second.url}/api/endpoints/query/early.errors`, {
            headers: { "X-API-KEY": QUERY_TOKEN },
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as any).result;
        };
        // the source exists, empty: no rows, not an error
        expect((await backend.schema()).sources["early.logs"]).toBeDefined();
        expect(await ask()).toEqual([]);
        const ev = (id: string, status: number) =>
          event(id, "request", { metadata: { response: { status_code: status } } });
        const posted = await postLogs(
          second.url,
          "early.logs",
          json([ev("e1", 200), ev("e2", 502), ev("e3", 500)]),
        );
        expect(posted.status, JSON.stringify(posted.body)).toBe(200);
        expect(await ask()).toEqual([
          { id: "e2", status_code: 502 },
          { id: "e3", status_code: 500 },
        ]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses the second of two requests sent at once whose widenings together would break a served stored query", async () => {
    const { backend } = served;
    const dir = mkdtempSync(join(tmpdir(), "qes-ingest-guard-"));
    try {
      // tags as records or as an array of numbers: either can be unnested; both together are STRING
      writeFileSync(
        join(dir, "tag.counts.sql"),
        "select count(*) as n from `realtime.logs.prod` as t cross join unnest(t.tags) as g",
      );
      writeFileSync(
        join(dir, "tag.counts.json"),
        json({ id: "7c1e4b2a-9d3f-4e8a-b6c5-1a2b3c4d5e6f", params: {} }),
      );
      const second = await serveStore(backend, { QES_ENDPOINTS_DIR: dir });
      try {
        const [records, numbers] = await Promise.all([
          postLogs(second.url, "realtime.logs.prod", json([event("tags-r", "x", { tags: [{ k: "a" }] })])),
          postLogs(second.url, "realtime.logs.prod", json([event("tags-n", "x", { tags: [1, 2] })])),
        ]);
        const statuses = [records.status, numbers.status].sort();
        expect(statuses).toEqual([200, 400]);
        const refused = records.status === 400 ? records : numbers;
        expect(refused.body.error.code).toBe("invalid_event");
        expect(refused.body.error.message).toMatch(/^event 0: field "tags" would change .*a stored query/);
        const res = await fetch(`${second.url}/api/endpoints/query/tag.counts`, {
          headers: { "X-API-KEY": QUERY_TOKEN },
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as any).result).toEqual([{ n: records.status === 200 ? 1 : 2 }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes a request shaped exactly as Vector's http sink sends it (gzip JSON array, x-api-key)", async () => {
    const { url } = served;
    // what Vector 0.4x posts with `encoding.codec = "json"`, `compression = "gzip"` and
    // `request.headers.x-api-key`: header names in lower case, nanosecond timestamps, its own fields
    const events = [
      {
        event_message: "GET /rest/v1/todos 200",
        host: "edge-1",
        source_type: "docker_logs",
        timestamp: "2025-01-15T11:59:58.123456789Z",
        project: "vector",
        metadata: { request: { method: "GET" } },
      },
      {
        event_message: "POST /auth/v1/token 400",
        host: "edge-1",
        source_type: "docker_logs",
        timestamp: "2025-01-15T11:59:59.000000001Z",
        project: "vector",
      },
      // Vector's own log schema, no remap: the text is `message`, which the platform takes as the
      // event message
      {
        message: "worker 3 restarted",
        host: "edge-2",
        source_type: "file",
        file: "/var/log/app.log",
        timestamp: "2025-01-15T11:59:57Z",
        project: "vector",
      },
    ];
    const res = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "accept-encoding": "zstd,gzip,deflate,br",
        "user-agent": "Vector/0.41.1 (x86_64-unknown-linux-gnu)",
        "x-api-key": INGEST_TOKEN,
      },
      body: gzipSync(json(events)),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 3 });
    // answered by logs.all within 1 s of the acknowledgement (issue 13), asked until then
    const until = Date.now() + 1000;
    let result: any[] = [];
    do {
      const rows = await fetch(`${url}/api/endpoints/query/logs.all?project=vector`, {
        headers: { "X-API-KEY": QUERY_TOKEN },
      });
      result = ((await rows.json()) as any).result;
    } while (result.length < 3 && Date.now() < until);
    expect(result.map((r: any) => [r.timestamp, r.event_message])).toEqual([
      [1736942399000000, "POST /auth/v1/token 400"],
      [1736942398123456, "GET /rest/v1/todos 200"],
      [1736942397000000, "worker 3 restarted"],
    ]);
    // no id was sent: each got one derived from its content
    for (const row of result)
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
