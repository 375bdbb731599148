import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, ingestEnv, ingestJwt, postLogs, QUERY_TOKEN } from "./support/ingest.ts";

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
