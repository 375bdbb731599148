import { backoffDelay, createClient, QesApiError } from "@qes/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { answer, closedPort, type FakeServer, qesError, startFakeServer } from "./support/fake-server.ts";

const ROWS = [{ id: "r1", timestamp: 1736942370123456, event_message: "m", metadata: [] }];
let servers: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fake(handler: Parameters<typeof startFakeServer>[0]): Promise<FakeServer> {
  const s = await startFakeServer(handler);
  servers.push(s);
  return s;
}

/** a server that fails `failures` times with `status`, then answers rows */
function failThenSucceed(failures: number, status: number, code: string) {
  return fake((_req, n, res) => {
    if (n <= failures) answer(res, status, qesError(code));
    else answer(res, 200, { result: ROWS });
    return undefined;
  });
}

const fast = { retryDelayMs: 5, maxRetryDelayMs: 20 };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

describe("retries", () => {
  it("retries a 503 twice and returns the third answer", async () => {
    const s = await failThenSucceed(2, 503, "backend_unavailable");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", ...fast });
    const res = await qes.logsAll({ project: "p" });
    expect(res.rows).toEqual(ROWS);
    expect(s.requests).toHaveLength(3);
    // one request id for the call, the same on every attempt
    const ids = new Set(s.requests.map((r) => r.headers["x-request-id"]));
    expect(ids.size).toBe(1);
  });

  it("retries a 504 twice and returns the third answer", async () => {
    const s = await failThenSucceed(2, 504, "query_timeout");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", ...fast });
    const res = await qes.usageApiCounts({ project: "p", interval: "hourly" });
    expect(res.rows).toEqual(ROWS);
    expect(s.requests).toHaveLength(3);
  });

  it("gives up after `retries` with the last QesApiError", async () => {
    const s = await failThenSucceed(5, 503, "backend_unavailable");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", retries: 1, ...fast });
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect(e).toBeInstanceOf(QesApiError);
    expect([e.status, e.code, e.retryable]).toEqual([503, "backend_unavailable", true]);
    expect(s.requests).toHaveLength(2);
  });

  it.each([
    [500, "internal"],
    [400, "invalid_parameter"],
    [401, "unauthorized"],
    [404, "endpoint_not_found"],
    [422, "sql_syntax"],
  ])("does not retry a %i", async (status, code) => {
    const s = await failThenSucceed(1, status, code);
    const qes = createClient({ baseUrl: s.url, apiKey: "k", ...fast });
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect([e.status, e.code]).toEqual([status, code]);
    expect(s.requests).toHaveLength(1);
  });

  it("retries a reset connection, then succeeds", async () => {
    const s = await fake((_req, n, res) => {
      if (n <= 2) return "destroy";
      answer(res, 200, { result: ROWS });
      return undefined;
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k", ...fast });
    expect((await qes.logsAll({ project: "p" })).rows).toEqual(ROWS);
    expect(s.requests).toHaveLength(3);
  });

  it("reports a refused connection as network_error (status 0) after its retries", async () => {
    const port = await closedPort();
    let calls = 0;
    const qes = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      retries: 2,
      ...fast,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect(e).toBeInstanceOf(QesApiError);
    expect([e.status, e.code]).toEqual([0, "network_error"]);
    expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls).toBe(3);
  });

  it("maps a non-JSON 503 of a proxy to invalid_response and still retries it", async () => {
    const s = await fake((_req, n, res) => {
      if (n === 1) {
        res.writeHead(503, { "Content-Type": "text/html" });
        res.end("<html>Service Unavailable</html>");
      } else answer(res, 200, { result: ROWS });
      return undefined;
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k", ...fast });
    expect((await qes.logsAll({ project: "p" })).rows).toEqual(ROWS);
    expect(s.requests).toHaveLength(2);
    s.requests.length = 0; // the next request is the first again: 503 in HTML
    const once = createClient({ baseUrl: s.url, apiKey: "k", retries: 0 });
    const e = (await rejection(once.logsAll({ project: "p" }))) as QesApiError;
    expect([e.status, e.code, e.retryable]).toEqual([503, "invalid_response", true]);
    expect(e.message).toContain("Service Unavailable");
  });

  it("honours Retry-After as a lower bound on the wait, capped by maxRetryDelayMs", async () => {
    const s = await fake((_req, n, res) => {
      if (n === 1) answer(res, 503, qesError("backend_unavailable"), { "Retry-After": "1" });
      else answer(res, 200, { result: ROWS });
      return undefined;
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k", retryDelayMs: 1, maxRetryDelayMs: 300 });
    const t0 = Date.now();
    await qes.logsAll({ project: "p" });
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(3000);
  });

  it("backs off exponentially with jitter, within [d/2, d] for d = base·2^(n-1) capped", () => {
    const opts = { baseMs: 100, maxMs: 1000 };
    expect(backoffDelay(1, { ...opts, random: () => 0 })).toBe(50);
    expect(backoffDelay(1, { ...opts, random: () => 0.999999 })).toBeCloseTo(100, 3);
    expect(backoffDelay(3, { ...opts, random: () => 0 })).toBe(200);
    expect(backoffDelay(10, { ...opts, random: () => 0.5 })).toBe(750);
    expect(backoffDelay(1, { ...opts, random: () => 0 }, 600)).toBe(600);
    expect(backoffDelay(1, { ...opts, random: () => 0 }, 60_000)).toBe(1000);
  });
});

describe("timeouts", () => {
  it("gives up on an attempt after timeoutMs with code timeout", async () => {
    const s = await fake(() => "hang");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", timeoutMs: 150, retries: 0 });
    const t0 = Date.now();
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect(e).toBeInstanceOf(QesApiError);
    expect([e.status, e.code, e.retryable]).toEqual([0, "timeout", true]);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("times out per attempt: a hung first attempt is retried", async () => {
    const s = await fake((_req, n, res) => {
      if (n === 1) return "hang";
      answer(res, 200, { result: ROWS });
      return undefined;
    });
    // long enough for the second attempt to be answered on a loaded machine: a third request
    // would mean the answering attempt timed out too
    const qes = createClient({ baseUrl: s.url, apiKey: "k", timeoutMs: 1000, ...fast });
    expect((await qes.logsAll({ project: "p" })).rows).toEqual(ROWS);
    expect(s.requests).toHaveLength(2);
  });

  it("also bounds a body that never ends", async () => {
    const s = await fake((_req, _n, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"result": [');
      return "hang";
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k", timeoutMs: 150, retries: 0 });
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect(e.code).toBe("timeout");
  });
});

describe("abort", () => {
  it("rejects at once with the signal's reason when already aborted, sending nothing", async () => {
    const s = await fake((_req, _n, res) => {
      answer(res, 200, { result: ROWS });
      return undefined;
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k" });
    const e = await rejection(qes.logsAll({ project: "p" }, { signal: AbortSignal.abort() }));
    expect((e as Error).name).toBe("AbortError");
    expect(s.requests).toHaveLength(0);
  });

  it("stops waiting for an answer at once", async () => {
    const s = await fake(() => "hang");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", timeoutMs: 30_000 });
    const controller = new AbortController();
    const t0 = Date.now();
    setTimeout(() => controller.abort(), 100);
    const e = await rejection(qes.logsAll({ project: "p" }, { signal: controller.signal }));
    expect((e as Error).name).toBe("AbortError");
    expect(e).not.toBeInstanceOf(QesApiError);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("stops a backoff wait at once, with the caller's reason", async () => {
    const s = await failThenSucceed(5, 503, "backend_unavailable");
    const qes = createClient({ baseUrl: s.url, apiKey: "k", retryDelayMs: 20_000, maxRetryDelayMs: 20_000 });
    const controller = new AbortController();
    const t0 = Date.now();
    setTimeout(() => controller.abort(new Error("user left the page")), 150);
    const e = await rejection(qes.logsAll({ project: "p" }, { signal: controller.signal }));
    expect((e as Error).message).toBe("user left the page");
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(s.requests).toHaveLength(1);
  });
});

describe("the request on the wire", () => {
  it("GET with the token, parameters, redaction header and request id", async () => {
    const s = await fake((_req, _n, res) => {
      answer(res, 200, { result: [] }, { "QES-Row-Limit-Reached": "true", "QES-Ignored-Params": "a%20b, c" });
      return undefined;
    });
    const qes = createClient({ baseUrl: `${s.url}/`, apiKey: "secret-token-0123456789" });
    const res = await qes.logsAll(
      { project: "p q", isoTimestampStart: new Date("2025-01-15T11:00:00Z"), isoTimestampEnd: undefined },
      { redactPii: true, requestId: "trace-1" },
    );
    const [req] = s.requests;
    expect(req?.method).toBe("GET");
    expect(req?.url).toBe(
      "/api/endpoints/query/logs.all?project=p+q&iso_timestamp_start=2025-01-15T11%3A00%3A00.000Z",
    );
    expect(req?.headers["x-api-key"]).toBe("secret-token-0123456789");
    expect(req?.headers["qes-endpoint-redact-pii"]).toBe("true");
    expect(req?.headers["x-request-id"]).toBe("trace-1");
    expect(res.rowLimitReached).toBe(true);
    expect(res.ignoredParams).toEqual(["a b", "c"]);
    expect(res.requestId).toBe("fake-request-id");
  });

  it("POST with a flat JSON body when the URL would be too long", async () => {
    const s = await fake((_req, _n, res) => {
      answer(res, 200, { result: [] });
      return undefined;
    });
    const qes = createClient({ baseUrl: `${s.url}/qes`, apiKey: "k", maxUrlLength: 200 });
    const sql = `select id from edge_logs where event_message like '%${"x".repeat(300)}%'`;
    await qes.logsAll({ project: "p", isoTimestampEnd: "2025-01-15T11:00:00.123456Z" }, { sql });
    const [req] = s.requests;
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/qes/api/endpoints/query/logs.all");
    expect(req?.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(req?.body ?? "")).toEqual({
      project: "p",
      iso_timestamp_end: "2025-01-15T11:00:00.123456Z",
      sql,
    });
    await qes.logsAll({ project: "p" }, { sql: "select id from edge_logs" });
    expect(s.requests[1]?.method).toBe("GET");
  });

  it("reads a legacy-format error as QesApiError legacy_error", async () => {
    const s = await fake((_req, _n, res) => {
      answer(res, 200, { error: "Parameter interval is invalid" });
      return undefined;
    });
    const qes = createClient({ baseUrl: s.url, apiKey: "k" });
    const e = (await rejection(qes.logsAll({ project: "p" }))) as QesApiError;
    expect([e.status, e.code, e.message]).toEqual([200, "legacy_error", "Parameter interval is invalid"]);
  });
});
