import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, INGEST_TOKEN, ingestEnv, ingestJwt, postLogs, QUERY_TOKEN } from "./support/ingest.ts";

/**
 * What a holder of one valid token learns from the HTTP layer beyond its rights: an ingest
 * refusal that named the stored query (and quoted its compiler's message on the query's columns)
 * to a token that may not run queries. The HTTP layer is the same on every engine: DuckDB only.
 */
const EDGE = "cloudflare.logs.prod";
const BUILTIN_NAMES = ["usage.api-counts", "logs.all"];

describe("an ingest refusal that protects a stored query", () => {
  let served: ServedFixture;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    served = await serveFixture(BACKENDS[0]!, {}, ingestEnv(), logs);
    const good = event("g1", "GET /rest/v1/x", {
      project: "leftovers",
      metadata: { request: { path: "/rest/v1/x", url: "https://x.example.co/rest/v1/x" } },
    });
    expect((await postLogs(served.url, EDGE, JSON.stringify([good]))).status).toBe(200);
  });
  afterAll(() => served.close());

  // the record every usage counter unnests, sent as a number: the widening would make it STRING
  const hostile = JSON.stringify([event("h1", "x", { project: "leftovers", metadata: { request: 5 } })]);

  it("tells an ingest token the field and that a stored query depends on it, not which one nor its SQL", async () => {
    const r = await postLogs(served.url, EDGE, hostile);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_event");
    expect(r.body.error.message).toMatch(
      /^event 0: field "metadata\.request" would change from RECORD to STRING, and a stored query this server runs depends on the field's type/,
    );
    const text = JSON.stringify(r.body);
    for (const name of BUILTIN_NAMES) expect(text).not.toContain(name);
    // nothing of the compiler's message on the query's columns and unnests either
    expect(text).not.toMatch(/could no longer run|unnest|column/i);
    // the server log has what the answer leaves out, under the answer's request id
    const line = logs.find((l) => l.requestId === r.body.error.requestId && l.msg === "request refused");
    expect(line).toMatchObject({ storedQuery: "usage.api-counts", source: EDGE, code: "invalid_event" });
    expect(String(line?.reason)).not.toBe("");
  });

  it("answers a token that may also run queries the same way (the log has the details)", async () => {
    const both = { "X-API-KEY": "", Authorization: `Bearer ${ingestJwt(`query ingest:${EDGE}`)}` };
    const r = await postLogs(served.url, EDGE, hostile, both);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/a stored query this server runs depends on the field's type/);
    for (const name of BUILTIN_NAMES) expect(JSON.stringify(r.body)).not.toContain(name);
    // and the store took nothing: the stored query still runs
    const res = await fetch(
      `${served.url}/api/endpoints/query/usage.api-counts?project=leftovers&interval=daily`,
      {
        headers: { "X-API-KEY": QUERY_TOKEN },
      },
    );
    expect(res.status).toBe(200);
  });
});

/**
 * `/api/openapi.json` is token-scoped by design (routes/service-routes.ts): it needs a token, and it
 * names only the endpoints that token may run. It is neither a query nor an ingest, so the 403 of
 * "a query token cannot ingest and an ingest token cannot query" is not its answer: an ingest
 * token gets the document of what it may use — the ingest route and the service routes — and no
 * endpoint's name, id or columns. The ingest route is documented to every token: its existence is
 * no secret (`HEAD /api/logs` answers without a token), while endpoint names are.
 */
describe("the OpenAPI document for an ingest token", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(BACKENDS[0]!, {}, ingestEnv());
  });
  afterAll(() => served.close());

  const documentFor = (headers: Record<string, string>) =>
    fetch(`${served.url}/api/openapi.json`, { headers }).then(async (r) => ({
      status: r.status,
      text: await r.text(),
    }));
  const SERVICE_AND_INGEST = ["/api/logs", "/api/openapi.json", "/health", "/metrics", "/ready"];
  const BUILTIN_IDS = ["6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19", "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63"];

  it("is 200 with the ingest and service routes only, naming no endpoint, for a static key and a JWT", async () => {
    const tokens: Record<string, string>[] = [
      { "X-API-KEY": INGEST_TOKEN },
      { Authorization: `Bearer ${ingestJwt(`ingest:${EDGE}`)}` },
    ];
    for (const headers of tokens) {
      const doc = await documentFor(headers);
      expect(doc.status).toBe(200);
      expect(Object.keys(JSON.parse(doc.text).paths).sort()).toEqual(SERVICE_AND_INGEST);
      for (const name of [...BUILTIN_NAMES, ...BUILTIN_IDS]) expect(doc.text).not.toContain(name);
    }
  });

  it("needs a token; a query token's lists its endpoints beside the same routes", async () => {
    expect((await documentFor({})).status).toBe(401);
    const doc = await documentFor({ "X-API-KEY": QUERY_TOKEN });
    expect(doc.status).toBe(200);
    const paths = Object.keys(JSON.parse(doc.text).paths);
    expect(paths).toEqual(expect.arrayContaining([...SERVICE_AND_INGEST, "/api/endpoints/query/logs.all"]));
  });

  it("an ingest token cannot tell a served endpoint from an unknown name: the same 403 for both", async () => {
    const ask = async (name: string, headers: Record<string, string>) => {
      const res = await fetch(`${served.url}/api/endpoints/query/${name}?project=x`, { headers });
      const body = (await res.json()) as any;
      return { status: res.status, code: body.error.code, message: body.error.message };
    };
    const tokens: Record<string, string>[] = [
      { "X-API-KEY": INGEST_TOKEN },
      { Authorization: `Bearer ${ingestJwt(`ingest:${EDGE}`)}` },
      // a JWT of no scope at all may run nothing either
      { Authorization: `Bearer ${ingestJwt("")}` },
    ];
    for (const headers of tokens) {
      const known = await ask("usage.api-counts", headers);
      expect(known.status).toBe(403);
      for (const other of ["no.such.endpoint", "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19", "logs.all"]) {
        expect(await ask(other, headers)).toEqual(known);
      }
      expect(known.message).not.toContain("usage.api-counts");
    }
  });

  it("does not open the routes it documents for the other kind of token: 403 both ways", async () => {
    const query = await fetch(`${served.url}/api/endpoints/query/logs.all?project=x`, {
      headers: { "X-API-KEY": INGEST_TOKEN },
    });
    expect(query.status).toBe(403);
    // /metrics names every endpoint in its labels
    const metrics = await fetch(`${served.url}/metrics`, { headers: { "X-API-KEY": INGEST_TOKEN } });
    expect(metrics.status).toBe(403);
    const ingest = await postLogs(served.url, "doc.src", JSON.stringify([event("d1", "x")]), {
      "X-API-KEY": QUERY_TOKEN,
    });
    expect(ingest.status).toBe(403);
  });
});

/**
 * A shipper configured with another method than POST was told 404 "Nothing is served at GET
 * /api/logs", sending its operator after a wrong URL. 405 `method_not_allowed` (a code DESIGN.md
 * §7 does not list) with `Allow`, in the standard error shape.
 */
describe("/api/logs with a method it does not take", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    // the legacy format answers errors of queries as 200: never those of the ingest route
    served = await serveFixture(BACKENDS[0]!, {}, ingestEnv({ QES_ERROR_FORMAT: "legacy" }));
  });
  afterAll(() => served.close());

  it("is 405 with Allow: POST, HEAD, with or without a token; HEAD and POST still work", async () => {
    for (const [method, headers] of [
      ["GET", { "X-API-KEY": INGEST_TOKEN }],
      ["GET", {}],
      ["PUT", { "X-API-KEY": INGEST_TOKEN, "Content-Type": "application/json" }],
      ["DELETE", {}],
    ] as const) {
      const res = await fetch(`${served.url}/api/logs?source_name=m.src`, {
        method,
        headers,
        ...(method === "PUT" ? { body: "[]" } : {}),
      });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, HEAD");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      const body = (await res.json()) as any;
      expect(body.error).toMatchObject({ code: "method_not_allowed", allowed: ["POST", "HEAD"] });
      expect(body.error.message).toContain(`${method} /api/logs is not served: send events with POST`);
      expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
    }
    expect((await fetch(`${served.url}/api/logs`, { method: "HEAD" })).status).toBe(200);
    expect((await postLogs(served.url, "m.src", JSON.stringify([event("m1", "x")]))).status).toBe(200);
    // another unknown path is still a 404
    expect((await fetch(`${served.url}/api/logz`)).status).toBe(404);
  });
});
