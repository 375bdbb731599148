import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import {
  getQuery,
  PROJECT,
  postQuery,
  type SandboxServer,
  startSandboxServer,
} from "./support/sandbox-server.ts";

// Issue 12: a NUL byte is a client's mistake on every engine. PostgreSQL's protocol cannot carry
// one (it answered 503 backend_unavailable, "insufficient data left in message"), DuckDB answered
// 422 quoting compiled SQL. Both now refuse it with 400 invalid_parameter before any engine runs.

const CASES: { name: string; params: Record<string, string>; param: string; via: "get" | "post" }[] = [
  {
    name: "in a string literal of consumer SQL",
    params: { sql: "select 'a\0b' as x from edge_logs" },
    param: "sql",
    via: "get",
  },
  {
    name: "in consumer SQL sent as a POST body",
    params: { sql: "select id from edge_logs where id = 'x\0'" },
    param: "sql",
    via: "post",
  },
  { name: "alone as consumer SQL", params: { sql: "\0" }, param: "sql", via: "get" },
  {
    name: "in a comment of consumer SQL",
    params: { sql: "select id from edge_logs -- \0" },
    param: "sql",
    via: "post",
  },
  {
    name: "in a declared parameter",
    params: { iso_timestamp_start: "2025-01-15T00:00:00\0Z" },
    param: "iso_timestamp_start",
    via: "get",
  },
  { name: "in the project parameter", params: { project: `${PROJECT}\0` }, param: "project", via: "post" },
  { name: "in an undeclared parameter", params: { extra: "a\0" }, param: "extra", via: "get" },
];

describe.each(BACKENDS)("NUL bytes on $name", (fixture) => {
  let server: SandboxServer;
  beforeAll(async () => {
    server = await startSandboxServer(fixture);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    "%s: 400 invalid_parameter naming it, no query ran",
    async (_n, c) => {
      const before = server.backend.executedQueries();
      const params = { project: PROJECT, ...c.params };
      const answer =
        c.via === "post"
          ? await postQuery(server, "logs.all", params)
          : await getQuery(server, "logs.all", params);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_parameter");
      expect(answer.body.error.param).toBe(c.param);
      expect(answer.body.error.message).toContain("NUL");
      expect(server.backend.executedQueries()).toBe(before);
    },
  );

  it("a NUL in a parameter name is refused too", async () => {
    const answer = await getQuery(server, "logs.all", { project: PROJECT, "a\0b": "1" });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_parameter");
  });

  // A NUL written as an escape of a string literal (`'\x00'`, `"\u0000"`, `'\000'`) reaches no
  // engine either: PostgreSQL answered 503 backend_unavailable, DuckDB 422 with its own text.
  it.each([
    "select '\\x00' as x from edge_logs",
    'select "a\\u0000b" as x from edge_logs',
    "select id from edge_logs where event_message = '\\000'",
    "select regexp_contains(id, '\\U00000000') as x from edge_logs",
  ])("a NUL spelled as an escape in a literal is 422 sql_invalid at its place: %s", async (sql) => {
    const before = server.backend.executedQueries();
    const answer = await getQuery(server, "logs.all", { project: PROJECT, sql });
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.error.code).toBe("sql_invalid");
    expect(answer.body.error.message).toContain("NUL");
    expect(answer.body.error.line).toBe(1);
    expect(server.backend.executedQueries()).toBe(before);
  });

  it("a raw string keeps \\x00 as four characters and runs", async () => {
    const answer = await getQuery(server, "logs.all", {
      project: PROJECT,
      sql: "select r'\\x00' as x from edge_logs",
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });

  it("the same request without the NUL answers 200 (the refusal is about the byte)", async () => {
    const answer = await getQuery(server, "logs.all", {
      project: PROJECT,
      sql: "select 'ab' as x from edge_logs",
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });
});
