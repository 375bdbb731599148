import { duckdbDialect } from "@qes/backend-duckdb";
import { postgresDialect } from "@qes/backend-postgres";
import {
  bindRequestParams,
  builtinLogSchema,
  compileEndpoint,
  type EndpointDefinition,
  type LogSchema,
  parseEvent,
  parseSelect,
  widenSchema,
} from "@qes/core";
import { beforeAll, describe, expect, it } from "vitest";
import { builtinRegistry } from "../support/run-endpoint.ts";

// The shape of the SQL the emitters write, where it decides speed or safety and the rows alone
// would not show it.

let schema: LogSchema;
beforeAll(() => {
  schema = builtinLogSchema();
  const event = parseEvent(
    JSON.stringify({
      project: "p",
      event_message: "x",
      metadata: { request: { path: "/rest/v1", url: "https://p.supabase.co/rest/v1" } },
    }),
    1,
    0n,
  )!;
  widenSchema(schema.sources["cloudflare.logs.prod"]!, event.body);
});

function columnOf(path: string[]): string {
  let fields = schema.sources["cloudflare.logs.prod"]!.fields;
  let column = "";
  for (const name of path) {
    const node = fields[name]!;
    column = node.column!;
    fields = node.fields ?? {};
  }
  return column;
}

function endpoint(sql: string, params: EndpointDefinition["params"] = {}): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000e5a1",
    name: "emitted",
    sql,
    sqlFile: "emitted.sql",
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params,
    version: sql,
  };
}

describe("emitted SQL", () => {
  it("tests a nested record's presence instead of reading the top-level record's JSON column", async () => {
    const usage = (await builtinRegistry()).get("usage.api-counts")!;
    for (const dialect of [duckdbDialect, postgresDialect]) {
      const { sql } = compileEndpoint(usage, { schema, dialect });
      expect(sql).toContain(`"${columnOf(["metadata", "request"])}" IS NOT NULL`);
      expect(sql).not.toContain(`"${columnOf(["metadata"])}" IS NOT NULL`);
    }
  });

  it("keeps the top-level presence test when nothing below it is unnested", () => {
    const ep = endpoint("select t.id from `cloudflare.logs.prod` t cross join unnest(t.metadata) m");
    const { sql } = compileEndpoint(ep, { schema, dialect: duckdbDialect });
    expect(sql).toContain(`"${columnOf(["metadata"])}" IS NOT NULL`);
  });

  it("tests plain-character patterns with strpos on PostgreSQL, and keeps regexes as regexes", () => {
    const ep = endpoint(
      "select countif(regexp_contains(event_message, '/rest')) a, countif(regexp_contains(event_message, '^/rest')) b from `cloudflare.logs.prod`",
    );
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    expect(sql).toContain(`strpos("t0"."event_message", '/rest') > 0`);
    expect(sql).toContain(`"t0"."event_message" ~ '^/rest'`);
  });

  it("translates a pattern parameter for PostgreSQL when it is bound, and leaves it as written for DuckDB", () => {
    const ep = endpoint("select id from `cloudflare.logs.prod` where regexp_contains(event_message, @p)", {
      p: { required: true, kind: "string" },
    });
    const pg = compileEndpoint(ep, { schema, dialect: postgresDialect });
    const duck = compileEndpoint(ep, { schema, dialect: duckdbDialect });
    expect(bindRequestParams(ep, pg, { p: "a.b" }, 0n).values).toEqual(["a[^\\n]b"]);
    expect(bindRequestParams(ep, duck, { p: "a.b" }, 0n).values).toEqual(["a.b"]);
  });

  it("orders strings by code point on PostgreSQL, outside the set operation", () => {
    const ep = endpoint("select event_message m from `cloudflare.logs.prod` union all select 'x' order by m");
    const { sql } = compileEndpoint(ep, { schema, dialect: postgresDialect });
    expect(sql).toMatch(/\) AS "__set"\nORDER BY \("c0" COLLATE "C"\) ASC NULLS FIRST/);
  });
});

describe("parsing limits and names", () => {
  it("refuses more tokens than the parser can take cheaply", () => {
    const sql = `select ${Array.from({ length: 12000 }, () => "1").join("+")} as x`;
    expect(() => parseSelect(sql)).toThrow(expect.objectContaining({ code: "sql_too_complex" }));
  });

  it("refuses quoted names holding a backtick or a backslash, where the lexer and the parser could disagree", () => {
    expect(() => parseSelect("select `a\\`b` from t")).toThrow(
      expect.objectContaining({ code: "sql_invalid" }),
    );
    expect(() => parseSelect("select `a\\\\b` from t")).toThrow(
      expect.objectContaining({ code: "sql_invalid" }),
    );
  });

  it("shows a string used as a table name as written, not as its internal placeholder", () => {
    const ep = endpoint('select 1 from "edge"');
    expect(() => compileEndpoint(ep, { schema, dialect: duckdbDialect })).toThrow(/'edge'/);
  });
});
