import { request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { AUTH_EVENTS, before, EDGE_EVENTS } from "./support/events.ts";
import { RESTRICTED_TOKEN, startTestServer, type TestServer, TOKEN } from "./support/test-server.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/endpoints", import.meta.url));
const LOGS_ALL_ID = "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19";
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";

describe.each(BACKENDS)("over HTTP on $name", (fixture) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      fixture,
      loads: { "cloudflare.logs.prod": EDGE_EVENTS, "gotrue.logs.prod": AUTH_EVENTS },
      env: { QES_ENDPOINTS_DIR: FIXTURES },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function get(path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }) {
    const res = await fetch(`${server.url}${path}`, { headers });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
  }

  const micros = (iso: string) => Date.parse(iso) * 1000;

  describe("authentication", () => {
    it("refuses a request without a token with 401 unauthorized", async () => {
      const res = await get("/api/endpoints/query/logs.all?project=alpha", {});
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
      expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
    });

    it("refuses an unknown token with 401, before looking up the endpoint", async () => {
      const res = await get("/api/endpoints/query/no.such.endpoint", {
        "X-API-KEY": "not-a-known-token-at-all",
      });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
    });

    it("accepts the token as Authorization: Bearer and as the api_key parameter", async () => {
      const bearer = await get("/api/endpoints/query/logs.all?project=alpha", {
        Authorization: `Bearer ${TOKEN}`,
      });
      expect(bearer.status).toBe(200);
      const param = await get(`/api/endpoints/query/logs.all?project=alpha&api_key=${TOKEN}`, {});
      expect(param.status).toBe(200);
      expect(param.headers.get("qes-ignored-params")).toBeNull();
    });

    it("answers 403 when a token is limited to other endpoints", async () => {
      const res = await get("/api/endpoints/query/logs.all?project=alpha", { "X-API-KEY": RESTRICTED_TOKEN });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
      const allowed = await get("/api/endpoints/query/usage.api-counts?project=alpha&interval=hourly", {
        "X-API-KEY": RESTRICTED_TOKEN,
      });
      expect(allowed.status).toBe(200);
    });
  });

  describe("endpoint lookup", () => {
    it("answers 404 endpoint_not_found for an unknown endpoint", async () => {
      const res = await get("/api/endpoints/query/no.such.endpoint?project=alpha");
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("endpoint_not_found");
      const byId = await get("/api/endpoints/query/11111111-2222-4333-8444-555555555555");
      expect(byId.status).toBe(404);
    });

    it("serves the same rows by name and by UUID", async () => {
      const byName = await get("/api/endpoints/query/logs.all?project=alpha");
      const byId = await get(`/api/endpoints/query/${LOGS_ALL_ID}?project=alpha`);
      const byUpperId = await get(`/api/endpoints/query/${LOGS_ALL_ID.toUpperCase()}?project=alpha`);
      expect(byName.status).toBe(200);
      expect(byId.text).toBe(byName.text);
      expect(byUpperId.text).toBe(byName.text);
    });

    it("answers 404 in the error shape for paths it does not serve", async () => {
      const res = await get("/api/nothing-here");
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("endpoint_not_found");
    });
  });

  describe("logs.all over HTTP", () => {
    it('answers 200 {"result": [...]} with the edge rows of the project, newest first', async () => {
      const res = await get("/api/endpoints/query/logs.all?project=alpha");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(Object.keys(res.body)).toEqual(["result"]);
      const rows = res.body.result as Record<string, unknown>[];
      expect(rows.map((r) => r.id)).toEqual([
        "e-alpha-1",
        "e-alpha-2",
        "e-alpha-3",
        "e-alpha-4",
        "e-alpha-5",
      ]);
      expect(Object.keys(rows[0] as object)).toEqual(["id", "timestamp", "event_message", "metadata"]);
      expect(rows[0]?.timestamp).toBe(micros(before(30)) + 123456);
      const metadata = rows[0]?.metadata as { request: { path: string }[] }[];
      expect(metadata[0]?.request[0]?.path).toBe("/rest/v1/todos");
    });

    it("bounds the time range: start exclusive, end inclusive, empty ignored", async () => {
      const start = encodeURIComponent(before(110));
      const after = await get(`/api/endpoints/query/logs.all?project=alpha&iso_timestamp_start=${start}`);
      expect(after.body.result.map((r: { id: string }) => r.id)).toEqual(["e-alpha-1"]);
      const upTo = await get(
        `/api/endpoints/query/logs.all?project=alpha&iso_timestamp_end=${start}&iso_timestamp_start=`,
      );
      expect(upTo.body.result.map((r: { id: string }) => r.id)).toEqual([
        "e-alpha-2",
        "e-alpha-3",
        "e-alpha-4",
        "e-alpha-5",
      ]);
    });

    it("answers 400 missing_parameter naming a missing required parameter", async () => {
      const res = await get("/api/endpoints/query/logs.all");
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("missing_parameter");
      expect(res.body.error.param).toBe("project");
      expect(res.body.error.message).toContain("project");
    });

    it("answers 400 invalid_parameter for a timestamp that is not ISO 8601", async () => {
      const res = await get("/api/endpoints/query/logs.all?project=alpha&iso_timestamp_start=yesterday");
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_parameter");
      expect(res.body.error.param).toBe("iso_timestamp_start");
    });

    it("ignores unknown parameters and names them in QES-Ignored-Params", async () => {
      const plain = await get("/api/endpoints/query/logs.all?project=alpha");
      const res = await get("/api/endpoints/query/logs.all?project=alpha&utm_source=x&limit=5");
      expect(res.status).toBe(200);
      expect(res.headers.get("qes-ignored-params")).toBe("limit, utm_source");
      expect(res.text).toBe(plain.text);
      expect(plain.headers.get("qes-ignored-params")).toBeNull();
    });

    it("answers a GET that carries Content-Type: application/json; charset=utf-8 and no body", async () => {
      const viaFetch = await get("/api/endpoints/query/logs.all?project=alpha", {
        "X-API-KEY": TOKEN,
        "Content-Type": "application/json; charset=utf-8",
      });
      expect(viaFetch.status).toBe(200);
      expect(viaFetch.body.result).toHaveLength(5);
      // and with an explicit empty body, as some HTTP clients send it
      const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          `${server.url}/api/endpoints/query/logs.all?project=alpha`,
          {
            method: "GET",
            headers: {
              "X-API-KEY": TOKEN,
              "Content-Type": "application/json; charset=utf-8",
              "Content-Length": "0",
            },
          },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c) => {
              body += c;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.end();
      });
      expect(raw.status).toBe(200);
      expect(JSON.parse(raw.body).result).toHaveLength(5);
    });
  });

  describe("usage.api-counts over HTTP", () => {
    const counts = (ts: string, rest: number, storage: number, auth: number, realtime: number) => ({
      timestamp: ts,
      total_rest_requests: rest,
      total_storage_requests: storage,
      total_auth_requests: auth,
      total_realtime_requests: realtime,
    });

    it("counts per hour, minute and day in ascending buckets", async () => {
      const hourly = await get("/api/endpoints/query/usage.api-counts?project=alpha&interval=hourly");
      expect(hourly.status).toBe(200);
      expect(hourly.body.result).toEqual([counts("2025-01-15T11:00:00", 1, 1, 1, 0)]);
      const minutely = await get("/api/endpoints/query/usage.api-counts?project=alpha&interval=minutely");
      expect(minutely.body.result).toEqual([
        counts("2025-01-15T11:30:00", 0, 0, 1, 0),
        counts("2025-01-15T11:58:00", 0, 1, 0, 0),
        counts("2025-01-15T11:59:00", 1, 0, 0, 0),
      ]);
      const daily = await get(`/api/endpoints/query/${USAGE_ID}?project=alpha&interval=daily`);
      expect(daily.body.result).toEqual([
        counts("2025-01-14T00:00:00", 0, 0, 0, 0),
        counts("2025-01-15T00:00:00", 1, 1, 1, 1),
      ]);
    });

    it("treats the project as a regular expression over the request URL", async () => {
      const res = await get("/api/endpoints/query/usage.api-counts?project=al.ha%7Cbeta&interval=hourly");
      expect(res.body.result).toEqual([counts("2025-01-15T11:00:00", 2, 1, 1, 0)]);
    });

    it("answers 400 with the allowed values for an interval outside hourly|daily|minutely", async () => {
      const res = await get("/api/endpoints/query/usage.api-counts?project=alpha&interval=weekly");
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_parameter");
      expect(res.body.error.param).toBe("interval");
      expect(res.body.error.allowed).toEqual(["hourly", "daily", "minutely"]);
    });
  });

  describe("an endpoint added through QES_ENDPOINTS_DIR", () => {
    it("serves the failed auth requests of one project, newest first", async () => {
      const res = await get("/api/endpoints/query/auth.errors?project=alpha");
      expect(res.status).toBe(200);
      const rows = res.body.result as { id: string; status: number; path: string }[];
      expect(rows.map((r) => r.id)).toEqual(["a-alpha-422", "a-alpha-401", "a-alpha-500"]);
      expect(rows.map((r) => r.status)).toEqual([422, 401, 500]);
      const byId = await get("/api/endpoints/query/3f6e2a9c-71d4-4b8e-a0c5-9d2b7e1f4a68?project=beta");
      expect(byId.body.result.map((r: { id: string }) => r.id)).toEqual(["a-beta-400"]);
    });
  });

  describe("every response", () => {
    it("carries X-Request-Id, and keeps a safe one the caller sent", async () => {
      const ok = await get("/api/endpoints/query/logs.all?project=alpha");
      expect(ok.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const failed = await get("/api/endpoints/query/logs.all", {});
      expect(failed.headers.get("x-request-id")).toBe(failed.body.error.requestId);
      const mine = await get("/api/endpoints/query/logs.all?project=alpha", {
        "X-API-KEY": TOKEN,
        "X-Request-Id": "trace-42",
      });
      expect(mine.headers.get("x-request-id")).toBe("trace-42");
      const health = await fetch(`${server.url}/health`);
      expect(health.headers.get("x-request-id")).toBeTruthy();
    });
  });

  describe("request logs", () => {
    it("never contain a token, however it was sent", async () => {
      await get("/api/endpoints/query/logs.all?project=alpha");
      await get("/api/endpoints/query/logs.all?project=alpha", { Authorization: `Bearer ${TOKEN}` });
      await get(`/api/endpoints/query/logs.all?api_key=${TOKEN}&project=alpha`, {});
      await get(`/api/endpoints/query/logs.all?project=alpha&API_KEY=${TOKEN}`, {});
      await get("/api/endpoints/query/logs.all?project=alpha", {
        "X-API-KEY": "wrong-token-value-0123456789",
      });
      const logs = server.logs();
      expect(logs).toContain('"url":"/api/endpoints/query/logs.all?project=alpha"');
      expect(logs).not.toContain(TOKEN);
      expect(logs).not.toContain("wrong-token-value-0123456789");
    });
  });
});
