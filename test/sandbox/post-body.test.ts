import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import {
  type Answer,
  getQuery,
  PROJECT,
  postQuery,
  type SandboxServer,
  send,
  startSandboxServer,
  TOKEN,
} from "./support/sandbox-server.ts";

// DESIGN.md §7: POST /api/endpoints/query/:idOrName with a flat JSON object of string values,
// merged with the query string; a parameter in both with different values is a 400
// invalid_parameter; any other body is a 400 with a message that says what is wrong; a body over
// the limit is a 413 request_too_large. The body is parsed the same way on every backend: DuckDB.

const ENDPOINT = "logs.all";
const COUNT_SQL = "select count(*) as n from edge_logs";

function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(status);
  expect(answer.body.error.code).toBe(code);
  expect(answer.body.error.requestId).toBe(answer.headers["x-request-id"]);
}

describe("POST bodies", () => {
  let server: SandboxServer;

  beforeAll(async () => {
    server = await startSandboxServer(BACKENDS.find((b) => b.name === "duckdb")!);
  });
  afterAll(async () => {
    await server?.close();
  });

  const raw = (text: string, headers: Record<string, string> = {}, query?: Record<string, string>) =>
    postQuery(server, ENDPOINT, undefined, { raw: text, headers, ...(query ? { query } : {}) });

  describe("a flat JSON object of string values", () => {
    it("runs consumer SQL from the body, as GET runs it from the query string", async () => {
      const sql = "select id, event_message from edge_logs order by timestamp desc limit 2";
      const post = await postQuery(server, ENDPOINT, { project: PROJECT, sql });
      const get = await getQuery(server, ENDPOINT, { project: PROJECT, sql });
      expect(post.status).toBe(200);
      expect(post.body).toEqual(get.body);
      expect(post.body.result.map((r: { id: string }) => r.id)).toEqual(["a-1", "a-2"]);
    });

    it("takes the stored query's parameters from the body without any SQL", async () => {
      const answer = await postQuery(server, ENDPOINT, {
        project: PROJECT,
        iso_timestamp_start: "2025-01-15T11:30:00Z",
      });
      expect(answer.status).toBe(200);
      expect(answer.body.result.map((r: { id: string }) => r.id)).toEqual(["a-1", "a-2"]);
    });

    it("merges the query string and the body", async () => {
      const answer = await postQuery(server, ENDPOINT, { sql: COUNT_SQL }, { query: { project: PROJECT } });
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
    });

    it("accepts a parameter given in both with the same value", async () => {
      const answer = await postQuery(
        server,
        ENDPOINT,
        { project: PROJECT, sql: COUNT_SQL },
        { query: { project: PROJECT, sql: COUNT_SQL } },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
    });

    it("refuses a parameter given in both with different values: 400 invalid_parameter naming it", async () => {
      const before = server.backend.executedQueries();
      const project = await postQuery(server, ENDPOINT, { project: "beta" }, { query: { project: PROJECT } });
      expectError(project, 400, "invalid_parameter");
      expect(project.body.error.param).toBe("project");
      expect(project.body.error.message).toContain("query string and in the body");
      // consumer SQL in the body may not replace SQL in the URL, nor the other way round
      const sql = await postQuery(
        server,
        ENDPOINT,
        { project: PROJECT, sql: "select 1 as x" },
        { query: { sql: COUNT_SQL } },
      );
      expectError(sql, 400, "invalid_parameter");
      expect(sql.body.error.param).toBe("sql");
      expect(server.backend.executedQueries()).toBe(before);
    });

    it("reads a body sent as text/plain (a browser's simple request) as JSON", async () => {
      const answer = await raw(JSON.stringify({ project: PROJECT, sql: COUNT_SQL }), {
        "Content-Type": "text/plain;charset=UTF-8",
      });
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
    });

    it("treats an empty body as no parameters", async () => {
      const answer = await raw("", {}, { project: PROJECT, sql: COUNT_SQL });
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
      const missing = await raw("");
      expectError(missing, 400, "missing_parameter");
      expect(missing.body.error.param).toBe("project");
    });

    it("keeps `__proto__` an ordinary (unknown) parameter", async () => {
      const answer = await raw(`{"project":"${PROJECT}","__proto__":"x","sql":"${COUNT_SQL}"}`);
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
      expect(answer.headers["qes-ignored-params"]).toBe("__proto__");
      const object = await raw(`{"project":"${PROJECT}","__proto__":{"sql":"select 1 as x"}}`);
      expectError(object, 400, "invalid_parameter");
      expect(object.body.error.param).toBe("__proto__");
    });

    it("does not read the token from the body: api_key counts only in the query string", async () => {
      const answer = await postQuery(
        server,
        ENDPOINT,
        { project: PROJECT, api_key: TOKEN },
        { headers: { "X-API-KEY": "" } },
      );
      expectError(answer, 401, "unauthorized");
    });

    it("never runs SQL from the body of a GET", async () => {
      const before = server.backend.executedQueries();
      const answer = await send(
        `${server.url}/api/endpoints/query/${ENDPOINT}?project=${PROJECT}&iso_timestamp_start=2025-01-15T11:30:00Z`,
        {
          method: "GET",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ sql: "select 'from the body' as x" }),
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.result.map((r: { id: string }) => r.id)).toEqual(["a-1", "a-2"]);
      expect(server.backend.executedQueries()).toBe(before + 1);
    });

    it("bounds QES-Ignored-Params when a body names thousands of unknown parameters", async () => {
      const extra = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`unknown_${i}`, "v"]));
      const answer = await postQuery(server, ENDPOINT, { project: PROJECT, sql: COUNT_SQL, ...extra });
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
      const header = String(answer.headers["qes-ignored-params"]);
      expect(header.length).toBeLessThanOrEqual(2048 + 20);
      expect(header.startsWith("unknown_0, unknown_1, ")).toBe(true);
      expect(header).toMatch(/, \(\+\d+ more\)$/);
      const listed = header.split(", ").length - 1;
      expect(header.endsWith(`(+${20_000 - listed} more)`)).toBe(true);
      // and through fetch, whose client refuses headers over 16 KiB
      const res = await fetch(`${server.url}/api/endpoints/query/${ENDPOINT}`, {
        method: "POST",
        headers: { "X-API-KEY": TOKEN, "Content-Type": "application/json" },
        body: JSON.stringify({ project: PROJECT, sql: COUNT_SQL, ...extra }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ result: [{ n: 3 }] });
    });
  });

  describe("any other body is a 400 that says what is wrong", () => {
    it.each([
      ["an array", "[]"],
      ["an array of objects", `[{"project":"${PROJECT}"}]`],
      ["a string", '"select 1"'],
      ["a number", "42"],
      ["a boolean", "true"],
      ["null", "null"],
    ])("a JSON body that is %s", async (_name, text) => {
      const answer = await raw(text, {}, { project: PROJECT });
      expectError(answer, 400, "invalid_parameter");
      expect(answer.body.error.message).toBe("The request body must be a JSON object of string values.");
    });

    it.each([
      ["a number", { project: PROJECT, iso_timestamp_start: 1736942400 }, "iso_timestamp_start"],
      ["a boolean", { project: PROJECT, sql: true }, "sql"],
      ["null", { project: null }, "project"],
      ["an object", { project: PROJECT, sql: { text: "select 1 as x" } }, "sql"],
      ["an array", { project: [PROJECT] }, "project"],
    ])("a parameter that is %s", async (_name, body, param) => {
      const before = server.backend.executedQueries();
      const answer = await postQuery(server, ENDPOINT, body);
      expectError(answer, 400, "invalid_parameter");
      expect(answer.body.error.param).toBe(param);
      expect(answer.body.error.message).toBe(`Parameter "${param}" in the request body must be a string.`);
      expect(server.backend.executedQueries()).toBe(before);
    });

    it.each([
      ["cut short", `{"project": "${PROJECT}", "sql": `],
      ["single-quoted", `{'project': '${PROJECT}'}`],
      ["with a trailing comma", `{"project": "${PROJECT}",}`],
      ["form-encoded", `project=${PROJECT}&sql=select+1`],
      ["a bare word", "select 1"],
    ])("a body that is not JSON: %s", async (_name, text) => {
      const answer = await raw(text, {}, { project: PROJECT });
      expectError(answer, 400, "invalid_parameter");
      expect(answer.body.error.message).toBe("The request body is not valid JSON.");
    });
  });

  describe("size", () => {
    it("answers a body over the limit with 413 request_too_large and runs nothing", async () => {
      const before = server.backend.executedQueries();
      const answer = await postQuery(server, ENDPOINT, {
        project: PROJECT,
        sql: `select '${"x".repeat(1_100_000)}' as x from edge_logs`,
      });
      expectError(answer, 413, "request_too_large");
      expect(server.backend.executedQueries()).toBe(before);
    });

    it("reads a body under the limit whose SQL is over 100,000 characters as sql_too_complex", async () => {
      const before = server.backend.executedQueries();
      const answer = await postQuery(server, ENDPOINT, {
        project: PROJECT,
        sql: `select '${"x".repeat(200_000)}' as x from edge_logs`,
      });
      expectError(answer, 422, "sql_too_complex");
      expect(server.backend.executedQueries()).toBe(before);
    });

    it("runs a long consumer query that a URL could not carry", async () => {
      const conditions = Array.from({ length: 1500 }, (_, i) => `id != 'not-an-id-${i}'`).join(" and ");
      const sql = `select count(*) as n from edge_logs where ${conditions}`;
      expect(sql.length).toBeGreaterThan(30_000);
      const answer = await postQuery(server, ENDPOINT, { project: PROJECT, sql });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
      expect(answer.body.result).toEqual([{ n: 3 }]);
    });
  });
});
