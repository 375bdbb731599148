import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QesError } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { startTestServer, type TestServer, TOKEN } from "./support/test-server.ts";

const dirs: string[] = [];
function endpointDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "qes-e2e-endpoints-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("start-up", () => {
  it("stops on a definition that does not compile, naming file, line and column", async () => {
    const dir = endpointDir({
      "broken.sql": "select id\nfrom `cloudflare.logs.prod`, read_csv('/etc/passwd')",
      "broken.json": JSON.stringify({ id: "5d0c8f7e-9a1b-4c2d-8e3f-4a5b6c7d8e9f" }),
    });
    const error = await startTestServer({ loads: {}, env: { QES_ENDPOINTS_DIR: dir } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QesError);
    const e = error as QesError;
    expect(e.code).toBe("invalid_config");
    expect(e.file).toBe(join(dir, "broken.sql"));
    expect(e.line).toBe(2);
    expect(e.column).toBeGreaterThan(0);
    expect(e.message).toContain(`${join(dir, "broken.sql")}:2:`);
  });
});

describe("limits and formats", () => {
  let server: TestServer;
  beforeAll(async () => {
    const dir = endpointDir({
      "edge.recent.sql": "select id, timestamp from `cloudflare.logs.prod` order by timestamp desc",
      "edge.recent.json": JSON.stringify({
        id: "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
        maxRows: 2,
        sandboxable: true,
      }),
      "edge.locked.sql": "select id from `cloudflare.logs.prod`",
      "edge.locked.json": JSON.stringify({ id: "8d2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a", sandboxable: false }),
    });
    server = await startTestServer({
      loads: { "cloudflare.logs.prod": EDGE_EVENTS },
      env: { QES_ENDPOINTS_DIR: dir },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = async (path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }) => {
    const res = await fetch(`${server.url}${path}`, { headers });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };

  it("cuts rows beyond maxRows and says so in QES-Row-Limit-Reached", async () => {
    const res = await get("/api/endpoints/query/edge.recent");
    expect(res.status).toBe(200);
    expect(res.body.result.map((r: { id: string }) => r.id)).toEqual(["e-alpha-1", "e-beta-1"]);
    expect(res.headers.get("qes-row-limit-reached")).toBe("true");
    const logs = await get("/api/endpoints/query/logs.all?project=alpha");
    expect(logs.headers.get("qes-row-limit-reached")).toBeNull();
  });

  it("runs consumer SQL over the stored query's CTEs when the endpoint is sandboxable", async () => {
    const sql = encodeURIComponent("select id from edge_logs order by timestamp asc limit 2");
    const res = await get(`/api/endpoints/query/logs.all?project=alpha&sql=${sql}`);
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual([{ id: "e-alpha-5" }, { id: "e-alpha-4" }]);
    expect(res.headers.get("qes-ignored-params")).toBeNull();
  });

  it("refuses consumer SQL on an endpoint that is not sandboxable (422 sql_not_allowed)", async () => {
    const res = await get("/api/endpoints/query/edge.locked?sql=select%201");
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: "sql_not_allowed", param: "sql" });
  });

  it("answers consumer SQL that leaves the sandbox with 422", async () => {
    const sql = encodeURIComponent("select * from `postgres.logs`");
    const res = await get(`/api/endpoints/query/logs.all?project=alpha&sql=${sql}`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("relation_not_allowed");
  });

  it("refuses a parameter repeated with different values", async () => {
    const res = await get("/api/endpoints/query/logs.all?project=alpha&project=beta");
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_parameter", param: "project" });
  });

  it("answers headers beyond Node's limit with 413 in the error shape", async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/api/endpoints/query/logs.all?project=alpha`,
        { headers: { "X-API-KEY": TOKEN, "X-Padding": "x".repeat(20_000) } },
        (r) => {
          let body = "";
          r.setEncoding("utf8");
          r.on("data", (c) => {
            body += c;
          });
          r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe("request_too_large");
  });
});

describe("QES_ERROR_FORMAT=legacy", () => {
  it("answers query errors as 200 {error: message}, as the reference platform did", async () => {
    const server = await startTestServer({ loads: {}, env: { QES_ERROR_FORMAT: "legacy" } });
    try {
      const res = await fetch(`${server.url}/api/endpoints/query/logs.all`, {
        headers: { "X-API-KEY": TOKEN },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { error: unknown };
      expect(typeof body.error).toBe("string");
      expect(body.error).toContain("project");
      const unauthorized = await fetch(`${server.url}/api/endpoints/query/logs.all?project=a`);
      expect(unauthorized.status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
