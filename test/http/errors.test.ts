import { connect } from "node:net";
import { QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { faultyBackend } from "./support/faulty-backend.ts";
import {
  call,
  type HttpServer,
  type Reply,
  SCOPED_TOKEN,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { postgresStore, type Store, unique } from "./support/stores.ts";
import { TcpProxy } from "./support/tcp-proxy.ts";

/**
 * Every error status and code of DESIGN.md §7 over HTTP, on PostgreSQL reached through a TCP proxy
 * the test can cut (503), with a short query timeout (504) and a backend that can be made to throw
 * a bug (500): the error body, X-Request-Id on every response, no stack traces, and the legacy
 * format.
 */
const INGEST_TOKEN = "errors-ingest-token-0123456789";
let proxy: TcpProxy;
let store: Store;
let faulty: ReturnType<typeof faultyBackend>;
let server: HttpServer;
let legacy: HttpServer;

beforeAll(async () => {
  proxy = await TcpProxy.start("127.0.0.1", 5432);
  store = await postgresStore(
    { "cloudflare.logs.prod": EDGE_EVENTS },
    `postgres://postgres@127.0.0.1:${proxy.port}/test`,
  );
  faulty = faultyBackend(store.backend);
  const env = {
    QES_REDIS_URL: "redis://127.0.0.1:6379",
    QES_REDIS_PREFIX: `${unique("qes_errors")}:`,
    QES_QUERY_TIMEOUT_MS: "300",
  };
  server = await startHttpServer(faulty.backend, env);
  legacy = await startHttpServer(faulty.backend, {
    ...env,
    QES_ERROR_FORMAT: "legacy",
    QES_INGEST_KEYS: INGEST_TOKEN,
  });
});
afterAll(async () => {
  await server?.close();
  await legacy?.close();
  await store?.dispose();
  await proxy?.close();
});

const replies: Reply[] = [];
async function get(path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }, on = server) {
  const reply = await call(`${on.url}${path}`, { headers });
  replies.push(reply);
  return reply;
}
async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const reply = await call(`${server.url}${path}`, {
    method: "POST",
    headers: { "X-API-KEY": TOKEN, "Content-Type": "application/json", ...headers },
    body,
  });
  replies.push(reply);
  return reply;
}

function expectError(res: Reply, status: number, code: string, extra: Record<string, unknown> = {}) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(res.body.error).toMatchObject({ code, ...extra });
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(Object.keys(res.body)).toEqual(["error"]);
}

const LOGS = "/api/endpoints/query/logs.all";
const USAGE = "/api/endpoints/query/usage.api-counts";
const sql = (text: string) => `${LOGS}?project=alpha&sql=${encodeURIComponent(text)}`;

describe("400", () => {
  it("missing_parameter names the parameter (and the allowed values)", async () => {
    expectError(await get(LOGS), 400, "missing_parameter", { param: "project" });
    expectError(await get(`${LOGS}?project=`), 400, "missing_parameter", { param: "project" });
    expectError(await get(`${USAGE}?project=alpha`), 400, "missing_parameter", {
      param: "interval",
      allowed: ["hourly", "daily", "minutely"],
    });
  });

  it("invalid_parameter for values that are not valid", async () => {
    expectError(await get(`${USAGE}?project=alpha&interval=weekly`), 400, "invalid_parameter", {
      param: "interval",
      allowed: ["hourly", "daily", "minutely"],
    });
    expectError(await get(`${LOGS}?project=alpha&iso_timestamp_start=yesterday`), 400, "invalid_parameter", {
      param: "iso_timestamp_start",
    });
    expectError(await get(`${LOGS}?project=alpha&project=beta`), 400, "invalid_parameter", {
      param: "project",
    });
    expectError(
      await get(`${USAGE}?interval=daily&project=${encodeURIComponent("(?=x)")}`),
      400,
      "invalid_parameter",
      {
        param: "project",
      },
    );
    expectError(
      await get("/api/endpoints/query/counts.short?pattern=x&limit=ten"),
      400,
      "invalid_parameter",
      {
        param: "limit",
      },
    );
  });

  it("invalid_parameter for a POST body that is not a flat object of strings or contradicts the query string", async () => {
    expectError(await post(LOGS, "{not json"), 400, "invalid_parameter");
    expectError(await post(LOGS, "[1,2]"), 400, "invalid_parameter");
    expectError(await post(LOGS, JSON.stringify({ project: 1 })), 400, "invalid_parameter", {
      param: "project",
    });
    expectError(
      await post(`${LOGS}?project=alpha`, JSON.stringify({ project: "beta" })),
      400,
      "invalid_parameter",
      {
        param: "project",
      },
    );
    const ok = await post(
      `${LOGS}?project=alpha`,
      JSON.stringify({ project: "alpha", sql: "select id from edge_logs" }),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.result).toHaveLength(4);
  });
});

describe("401, 403, 404, 413", () => {
  it("401 unauthorized and 403 forbidden", async () => {
    expectError(await get(`${LOGS}?project=alpha`, {}), 401, "unauthorized");
    expectError(await get(`${LOGS}?project=alpha`, { "X-API-KEY": SCOPED_TOKEN }), 403, "forbidden");
  });

  it("404 endpoint_not_found for an unknown name, UUID, path or method", async () => {
    expectError(await get("/api/endpoints/query/no.such"), 404, "endpoint_not_found");
    expectError(
      await get("/api/endpoints/query/11111111-2222-4333-8444-555555555555"),
      404,
      "endpoint_not_found",
    );
    expectError(await get("/api/nothing"), 404, "endpoint_not_found");
    const put = await call(`${server.url}${LOGS}`, { method: "PUT", headers: { "X-API-KEY": TOKEN } });
    expectError(put, 404, "endpoint_not_found");
  });

  it("413 request_too_large for a huge header, URL or body", async () => {
    expectError(
      await get(`${LOGS}?project=alpha`, { "X-API-KEY": TOKEN, "X-Big": "x".repeat(20_000) }),
      413,
      "request_too_large",
    );
    expectError(await get(`${LOGS}?project=alpha&x=${"y".repeat(20_000)}`), 413, "request_too_large");
    expectError(
      await post(LOGS, JSON.stringify({ project: "alpha", sql: "x".repeat(1_100_000) })),
      413,
      "request_too_large",
    );
  });
});

describe("422 consumer SQL", () => {
  it("422 sql_not_allowed for consumer SQL on an endpoint without query sandboxing", async () => {
    expectError(
      await get(`/api/endpoints/query/pii.always?project=pii&sql=${encodeURIComponent("select 1 as x")}`),
      422,
      "sql_not_allowed",
      { param: "sql" },
    );
  });

  it.each([
    ["sql_syntax", "select from where"],
    ["sql_invalid", "select no_such_column from edge_logs"],
    ["sql_too_complex", `select id from edge_logs where ${"id = 'x' or ".repeat(10_000)}false`],
    ["statement_not_allowed", "delete from edge_logs where true"],
    ["relation_not_allowed", "select * from `cloudflare.logs.prod`"],
    ["function_not_allowed", "select id from edge_logs where pg_sleep(30) is null"],
  ])("%s", async (code, text) => {
    // in a POST body: long SQL does not fit a URL
    const res = await post(`${LOGS}?project=alpha`, JSON.stringify({ sql: text }));
    expectError(res, 422, code);
  });

  it("carries line and column", async () => {
    const res = await get(sql("select id\nfrom nowhere"));
    expectError(res, 422, "relation_not_allowed", { line: 2 });
    expect(typeof res.body.error.column).toBe("number");
  });
});

describe("500, 503, 504", () => {
  it("504 query_timeout when the query outlasts QES_QUERY_TIMEOUT_MS", async () => {
    const joins = Array.from({ length: 14 }, (_, i) => `edge_logs as e${i}`).join(" cross join ");
    expectError(await get(sql(`select count(*) as n from ${joins}`)), 504, "query_timeout");
  });

  it("cancels the query of a client that goes away, logging it as such, not as a failure", async () => {
    // a server whose query timeout (300 ms on the others) cannot end the query first on a loaded
    // machine; the client leaves once its query runs, and the log is read once it says so
    const patient = await startHttpServer(faulty.backend, { QES_QUERY_TIMEOUT_MS: "60000" });
    try {
      const joins = Array.from({ length: 14 }, (_, i) => `edge_logs as e${i}`).join(" cross join ");
      const controller = new AbortController();
      const id = `abort-${Date.now()}`;
      const pending = fetch(`${patient.url}${sql(`select count(*) as n from ${joins}`)}`, {
        headers: { "X-API-KEY": TOKEN, "X-Request-Id": id },
        signal: controller.signal,
      }).catch((e: Error) => e.name);
      const running = async () => metricSum(await scrape(patient.url), "qes_running_queries") > 0;
      while (!(await running())) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      expect(await pending).toBe("AbortError");
      const lines = () =>
        patient
          .logs()
          .split("\n")
          .filter((l) => l.includes(id));
      while (!lines().some((l) => l.includes("client closed the request")))
        await new Promise((r) => setTimeout(r, 20));
      expect(lines().some((l) => l.includes('"level":50'))).toBe(false);
      // and the query stopped in the engine: nothing runs any more
      while (await running()) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await patient.close();
    }
  });

  it("500 internal for a bug, without its message or stack", async () => {
    const bug = new Error("boom in /srv/qes/secret/path.ts");
    faulty.failWith(bug);
    try {
      const res = await get(`${LOGS}?project=alpha`);
      expectError(res, 500, "internal");
      expect(res.text).not.toContain("boom");
      expect(res.text).not.toContain("/srv/qes");
      // the request id finds it in the server log
      const line = server
        .logs()
        .split("\n")
        .find((l) => l.includes(res.body.error.requestId) && l.includes("request failed"));
      expect(line).toContain("boom");
      const wrapped = new QesError(
        "internal",
        "PostgreSQL failed while running a query: relation qes.x missing",
      );
      faulty.failWith(wrapped);
      const internal = await get(`${LOGS}?project=alpha`);
      expectError(internal, 500, "internal");
      expect(internal.text).not.toContain("relation");
    } finally {
      faulty.failWith(undefined);
    }
  });

  it("503 backend_unavailable when PostgreSQL cannot be reached; /ready says so; back when it returns", async () => {
    proxy.cut();
    try {
      // the schema is re-read at most every second: wait until the cut is seen
      await new Promise((r) => setTimeout(r, 1100));
      expectError(await get(`${LOGS}?project=alpha`), 503, "backend_unavailable");
      expectError(await get("/ready", {}), 503, "backend_unavailable");
      const health = await get("/health", {});
      expect(health.status).toBe(200);
    } finally {
      proxy.restore();
    }
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await get(`${LOGS}?project=alpha`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect((await get("/ready", {})).status).toBe(200);
  });
});

describe("the legacy error format (QES_ERROR_FORMAT=legacy)", () => {
  it("answers query errors 200 {error: message}; 401, 403, 404 and 413 keep their status", async () => {
    const l = (path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }) =>
      get(path, headers, legacy);
    for (const path of [LOGS, `${USAGE}?project=alpha&interval=weekly`, sql("select from where")]) {
      const res = await l(path);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(["error"]);
      expect(typeof res.body.error).toBe("string");
      expect(res.headers.get("x-request-id")).toMatch(/.+/);
    }
    expect((await l(`${LOGS}?project=alpha`, {})).status).toBe(401);
    expect((await l(`${LOGS}?project=alpha`, { "X-API-KEY": SCOPED_TOKEN })).status).toBe(403);
    expect((await l("/api/endpoints/query/no.such")).status).toBe(404);
    const ok = await l(`${LOGS}?project=alpha`);
    expect(ok.status).toBe(200);
    expect(ok.body.result).toHaveLength(4);
  });
});

describe("ingest under the legacy error format", () => {
  const ingest = (body: string, headers: Record<string, string> = {}) =>
    call(`${legacy.url}/api/logs?source_name=legacy.ingest`, {
      method: "POST",
      headers: { "X-API-KEY": INGEST_TOKEN, "Content-Type": "application/json", ...headers },
      body,
    });

  it("keeps the status of every refusal and failure: a shipper takes a 200 as delivered", async () => {
    expectError(await ingest('[{"event_message":"ok"},{"timestamp":"nope"}]'), 400, "invalid_event");
    expectError(await ingest("[]", { "Content-Type": "text/plain" }), 415, "unsupported_media_type");
    expectError(await ingest("{}", { "Content-Encoding": "gzip" }), 400, "invalid_parameter");
    proxy.cut();
    try {
      // the schema is re-read at most every second: wait until the cut is seen
      await new Promise((r) => setTimeout(r, 1100));
      expectError(await ingest('[{"event_message":"lost?"}]'), 503, "backend_unavailable");
    } finally {
      proxy.restore();
    }
    const deadline = Date.now() + 15_000;
    let ok = await ingest('[{"event_message":"after"}]');
    while (ok.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      ok = await ingest('[{"event_message":"after"}]');
    }
    expect(ok).toMatchObject({ status: 200, body: { accepted: 1 } });
  });
});

describe("every response", () => {
  it("carries X-Request-Id: the caller's when safe, else a new UUID", async () => {
    const echoed = await get(`${LOGS}?project=alpha`, { "X-API-KEY": TOKEN, "X-Request-Id": "trace-42.a:b" });
    expect(echoed.headers.get("x-request-id")).toBe("trace-42.a:b");
    const replaced = await get(LOGS, { "X-API-KEY": TOKEN, "X-Request-Id": "bad id\twith tab" });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(replaced.body.error.requestId).toBe(replaced.headers.get("x-request-id"));
    for (const path of ["/health", "/ready", "/metrics"]) {
      expect((await get(path, {})).headers.get("x-request-id")).toMatch(/.+/);
    }
  });

  it("answers malformed HTTP in the error shape too", async () => {
    const { port } = new URL(server.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1");
      let text = "";
      socket.on("data", (c) => {
        text += c;
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
      socket.write("GET /health HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n");
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4));
    expect(body.error.code).toBe("invalid_parameter");
  });

  it("never shows a stack trace or a source path", () => {
    expect(replies.length).toBeGreaterThan(40);
    for (const reply of replies) {
      expect(reply.headers.get("x-request-id")).toMatch(/.+/);
      expect(reply.text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|\/work\//);
    }
  });
});
