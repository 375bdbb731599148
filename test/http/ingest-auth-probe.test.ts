import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, INGEST_TOKEN, ingestEnv, postLogs, QUERY_TOKEN, storedIds } from "./support/ingest.ts";

/**
 * Attacks on the rights of POST /api/logs by a holder of one valid token: the token where the
 * query route takes it (the `api_key` parameter), given twice.
 */
describe.each(BACKENDS)("ingest tokens in the api_key parameter on $name", (fixture) => {
  let served: ServedFixture;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv(), logs);
  });
  afterAll(() => served.close());

  const body = JSON.stringify([event("k1", "by parameter")]);
  const noHeader = { "X-API-KEY": "" };

  it("the same token twice counts once, as on the query route", async () => {
    const key = encodeURIComponent(INGEST_TOKEN);
    const r = await postLogs(
      served.url,
      { query: `source_name=param.src&api_key=${key}&api_key=${key}` },
      body,
      noHeader,
    );
    expect(r).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await storedIds(served.backend, "param.src")).toEqual(["k1"]);
  });

  it("two different tokens are a 400 naming api_key (not 401 'a token is required'), never echoed", async () => {
    const query = `source_name=param2.src&api_key=${INGEST_TOKEN}&api_key=${QUERY_TOKEN}`;
    const r = await postLogs(served.url, { query }, body, noHeader);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_parameter", param: "api_key" });
    expect(JSON.stringify(r.body)).not.toContain(INGEST_TOKEN);
    expect(JSON.stringify(logs)).not.toContain(INGEST_TOKEN);
    expect(await storedIds(served.backend, "param2.src")).toEqual([]);
  });
});

describe.each(BACKENDS)("no ingest request's token reaches the log on $name", (fixture) => {
  let served: ServedFixture;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_INGEST_MAX_BYTES: "1KiB" }), logs);
  });
  afterAll(() => served.close());

  it("in the api_key parameter, on every refusal: 400, gzip, 401, 403, 413 and an aborted body", async () => {
    const near = `${INGEST_TOKEN.slice(0, -1)}X`;
    const as = (token: string) => ({
      query: `source_name=leak.src&api_key=${encodeURIComponent(token)}`,
    });
    const noHeader = { "X-API-KEY": "" };
    const statuses = [
      (await postLogs(served.url, as(INGEST_TOKEN), "[{", noHeader)).status,
      (await postLogs(served.url, as(INGEST_TOKEN), "not gzip", { ...noHeader, "Content-Encoding": "gzip" }))
        .status,
      (await postLogs(served.url, as(near), "[]", noHeader)).status,
      (await postLogs(served.url, as(QUERY_TOKEN), "[]", noHeader)).status,
      (
        await postLogs(
          served.url,
          as(INGEST_TOKEN),
          JSON.stringify([event("big", "x".repeat(4096))]),
          noHeader,
        )
      ).status,
    ];
    expect(statuses).toEqual([400, 400, 401, 403, 413]);
    // a body the client stops sending half-way
    const aborted = new AbortController();
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('[{"event_message":"'));
        setTimeout(() => aborted.abort(), 100);
      },
    });
    await fetch(`${served.url}/api/logs?source_name=leak.src&api_key=${INGEST_TOKEN}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
      duplex: "half",
      signal: aborted.signal,
    } as RequestInit).catch(() => undefined);
    // the request lines of the answered ones are written, the token stripped from each
    await expect.poll(() => logs.filter((l) => l.msg === "request").length).toBeGreaterThanOrEqual(5);
    const text = JSON.stringify(logs);
    for (const secret of [INGEST_TOKEN, near, QUERY_TOKEN]) expect(text).not.toContain(secret);
    expect(text).not.toContain("api_key");
  });
});
