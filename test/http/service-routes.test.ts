import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointsFromOpenApi } from "../../packages/sdk/src/codegen.ts";
import { EDGE_EVENTS } from "./support/events.ts";
import { call, type HttpServer, startHttpServer, TOKEN } from "./support/in-process.ts";
import { metricSum } from "./support/prometheus.ts";
import { duckdbStore, type Store, unique } from "./support/stores.ts";

/** /health, /ready, /metrics, /api/openapi.json and CORS over HTTP (DuckDB, Redis). */
let store: Store;
let server: HttpServer;
let open: HttpServer;

beforeAll(async () => {
  store = await duckdbStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  const redis = { QES_REDIS_URL: "redis://127.0.0.1:6379", QES_REDIS_PREFIX: `${unique("qes_routes")}:` };
  server = await startHttpServer(store.backend, {
    ...redis,
    QES_CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
  });
  open = await startHttpServer(store.backend, { ...redis, QES_CORS_ORIGINS: "*" });
});
afterAll(async () => {
  await server?.close();
  await open?.close();
  await store?.dispose();
});

const auth = { "X-API-KEY": TOKEN };

describe("health, readiness and metrics", () => {
  it("/health answers 200 while the process is up; /ready names backend, Redis and cache", async () => {
    expect((await call(`${server.url}/health`)).body).toEqual({ status: "ok" });
    const ready = await call(`${server.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", backend: "duckdb", redis: "up", cache: "redis" });
  });

  it("/metrics has the request and query histograms, counters and gauges in Prometheus format", async () => {
    await call(`${server.url}/api/endpoints/query/usage.api-counts?interval=daily&project=alpha`, {
      headers: auth,
    });
    await call(`${server.url}/api/endpoints/query/usage.api-counts?interval=daily&project=alpha`, {
      headers: auth,
    });
    const res = await call(`${server.url}/metrics`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const sum = (name: string, labels: Record<string, string>) => metricSum(res.text, name, labels);
    const hit = {
      route: "query",
      endpoint: "usage.api-counts",
      backend: "duckdb",
      status: "200",
      cache: "HIT",
    };
    expect(sum("qes_http_request_duration_seconds_bucket", { ...hit, le: "+Inf" })).toBe(1);
    expect(sum("qes_http_request_duration_seconds_count", { ...hit, cache: "MISS" })).toBe(1);
    expect(
      sum("qes_query_duration_seconds_count", {
        endpoint: "usage.api-counts",
        backend: "duckdb",
        origin: "request",
      }),
    ).toBe(1);
    expect(
      sum("qes_backend_queries_total", { endpoint: "usage.api-counts", origin: "request", outcome: "ok" }),
    ).toBe(1);
    expect(sum("qes_cache_requests_total", { endpoint: "usage.api-counts", outcome: "MISS" })).toBe(1);
    expect(sum("qes_cache_requests_total", { endpoint: "usage.api-counts", outcome: "HIT" })).toBe(1);
    expect(sum("qes_backend_executed_queries", {})).toBeGreaterThanOrEqual(1);
    expect(sum("qes_redis_up", {})).toBe(1);
    expect(sum("qes_http_request_duration_seconds_count", { route: "/ready", status: "200" })).toBe(1);
    for (const name of [
      "# TYPE qes_http_request_duration_seconds histogram",
      "# TYPE qes_query_duration_seconds histogram",
      "# TYPE qes_warm_runs_total counter",
      "# TYPE qes_warm_refreshes_total counter",
      "# TYPE qes_warm_failures_total counter",
      "qes_process_resident_memory_bytes",
    ]) {
      expect(res.text, name).toContain(name);
    }
  });
});

describe("the OpenAPI document", () => {
  let doc: any;
  beforeAll(async () => {
    const res = await call(`${server.url}/api/openapi.json`, { headers: auth });
    expect(res.status).toBe(200);
    doc = res.body;
  });

  it("has one GET and one POST per endpoint, with the endpoint id", () => {
    expect(doc.openapi).toBe("3.1.0");
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/api/endpoints/query/"));
    expect(paths.sort()).toEqual(
      ["counts.short", "logs.all", "pii.always", "pii.cached", "usage.api-counts"].map(
        (n) => `/api/endpoints/query/${n}`,
      ),
    );
    for (const path of paths) {
      expect(Object.keys(doc.paths[path]).sort()).toEqual(["get", "post"]);
    }
    expect(doc.paths["/api/endpoints/query/logs.all"].get["x-qes-endpoint-id"]).toBe(
      "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19",
    );
  });

  it("describes parameters from the endpoint files: kinds, required, enums, defaults, sql where sandboxable", () => {
    const params = (name: string) =>
      Object.fromEntries(
        doc.paths[`/api/endpoints/query/${name}`].get.parameters
          .filter((p: any) => p.in === "query")
          .map((p: any) => [p.name, p]),
      );
    const usage = params("usage.api-counts");
    expect(usage.interval).toMatchObject({
      required: true,
      schema: { type: "string", enum: ["hourly", "daily", "minutely"] },
    });
    expect(usage.project).toMatchObject({ required: true, schema: { type: "string" } });
    expect(usage.sql).toMatchObject({ required: false });
    const logs = params("logs.all");
    expect(logs.iso_timestamp_start).toMatchObject({
      required: false,
      schema: { type: "string", format: "date-time" },
    });
    const counts = params("counts.short");
    expect(counts.limit).toMatchObject({ required: false, schema: { type: "integer", default: "10" } });
    expect(params("pii.always").sql).toBeUndefined();
    const headers = doc.paths["/api/endpoints/query/logs.all"].get.parameters.filter(
      (p: any) => p.in === "header",
    );
    expect(headers.map((h: any) => h.name)).toEqual([
      "QES-ENDPOINT-REDACT-PII",
      "SVC-ENDPOINT-REDACT-PII",
      "LF-ENDPOINT-REDACT-PII",
    ]);
    const body =
      doc.paths["/api/endpoints/query/usage.api-counts"].post.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(["interval", "project"]);
    expect(body.properties.interval.enum).toEqual(["hourly", "daily", "minutely"]);
  });

  it("gives the built-ins' rows as SPEC §2.2/§2.3 and DESIGN §4 say, and other rows from their compiled types", () => {
    const row = (name: string) =>
      doc.paths[`/api/endpoints/query/${name}`].get.responses["200"].content["application/json"].schema
        .properties.result.items;
    const logs = row("logs.all");
    expect(logs.required).toEqual(["id", "timestamp", "event_message", "metadata"]);
    expect(logs.properties.timestamp.type).toBe("integer");
    expect(logs.properties.metadata.type).toBe("array");
    const usage = row("usage.api-counts");
    expect(usage.properties.timestamp).toMatchObject({ type: "string" });
    expect(new RegExp(usage.properties.timestamp.pattern).test("2025-01-15T12:00:00")).toBe(true);
    for (const c of [
      "total_rest_requests",
      "total_storage_requests",
      "total_auth_requests",
      "total_realtime_requests",
    ]) {
      expect(usage.properties[c].type).toBe("integer");
      expect(usage.required).toContain(c);
    }
    const pii = row("pii.cached");
    expect(Object.keys(pii.properties)).toEqual(["id", "event_message", "metadata"]);
    expect(pii.properties.id.type).toEqual(["string", "null"]);
    expect(pii.properties.metadata.type).toEqual(["array", "null"]);
    const counts = row("counts.short");
    expect(counts.properties.requests.oneOf[0].oneOf[0].type).toBe("integer");
    const errors = doc.paths["/api/endpoints/query/logs.all"].get.responses;
    for (const status of ["400", "401", "403", "404", "413", "422", "500", "503", "504"]) {
      expect(errors[status].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    }
  });

  it("is read by the SDK's type generator", () => {
    const models = endpointsFromOpenApi(doc);
    const usage = models.find((m) => m.name === "usage.api-counts");
    expect(usage?.id).toBe("0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63");
    expect(usage?.params).toEqual([
      expect.objectContaining({
        name: "interval",
        required: true,
        kind: "string",
        allowed: ["hourly", "daily", "minutely"],
      }),
      expect.objectContaining({ name: "project", required: true, kind: "string" }),
    ]);
    const logs = models.find((m) => m.name === "logs.all");
    expect(logs?.params.find((p) => p.name === "iso_timestamp_end")?.kind).toBe("timestamp");
    expect(logs?.row?.required).toEqual(["id", "timestamp", "event_message", "metadata"]);
  });
});

describe("CORS", () => {
  const preflight = (on: HttpServer, origin: string) =>
    call(`${on.url}/api/endpoints/query/logs.all?project=alpha`, {
      method: "OPTIONS",
      headers: {
        Origin: origin,
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key, qes-endpoint-redact-pii",
      },
    });

  it("answers a preflight from a listed origin with the methods and headers a client sends", async () => {
    const res = await preflight(server, "https://app.example.com");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const h of [
      "x-api-key",
      "authorization",
      "content-type",
      "content-encoding",
      "qes-endpoint-redact-pii",
      "svc-endpoint-redact-pii",
    ]) {
      expect(allowed).toContain(h);
    }
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("lets a listed origin read the response and its headers, and gives others nothing", async () => {
    const path = "/api/endpoints/query/logs.all?project=alpha";
    const ok = await call(`${server.url}${path}`, { headers: { ...auth, Origin: "http://localhost:5173" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(ok.headers.get("vary")).toContain("Origin");
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-Cache");
    // a 429's Retry-After is not CORS-safelisted: a browser reads it only when exposed
    expect(ok.headers.get("access-control-expose-headers")).toContain("Retry-After");
    const other = await call(`${server.url}${path}`, {
      headers: { ...auth, Origin: "https://evil.example" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const otherPreflight = await preflight(server, "https://evil.example");
    expect(otherPreflight.headers.get("access-control-allow-origin")).toBeNull();
    // CORS never replaces authentication
    const anonymous = await call(`${server.url}${path}`, { headers: { Origin: "https://app.example.com" } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });

  it("allows any origin with *", async () => {
    const res = await preflight(open, "https://anywhere.example");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const posted = await call(`${open.url}/api/endpoints/query/logs.all`, {
      method: "POST",
      headers: { ...auth, Origin: "https://anywhere.example", "Content-Type": "text/plain" },
      body: JSON.stringify({ project: "alpha" }),
    });
    expect(posted.status).toBe(200);
    expect(posted.headers.get("access-control-allow-origin")).toBe("*");
    expect(posted.body.result).toHaveLength(4);
  });
});
