import { duckdbDialect } from "@qes/backend-duckdb";
import { builtinLogSchema, compileEndpoint, type EndpointDefinition } from "@qes/core";
import { describe, expect, it } from "vitest";
import { undeclaredSources, withEmptySource } from "../src/check/declared-sources.ts";

function definition(name: string, sql: string): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000d5c1",
    name,
    sql,
    sqlFile: `${name}.sql`,
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: false,
    redactPii: false,
    params: {},
    version: name,
  };
}

const schema = builtinLogSchema();
const undeclared = (...defs: EndpointDefinition[]) =>
  Object.fromEntries(undeclaredSources(defs, schema, duckdbDialect));

describe("sources a stored query names that the store lacks", () => {
  it("are found with every endpoint that names them, several in one query, CTE names left alone", () => {
    expect(
      undeclared(
        definition("a", "select count(*) as n from `myapp.logs`"),
        definition(
          "b",
          "with edge as (select id from `cloudflare.logs.prod`), mine as (select id from `myapp.logs`)\n" +
            "select id from mine union all select id from `other-app` union all select id from edge",
        ),
        definition("c", "select id from `cloudflare.logs.prod`"),
      ),
    ).toEqual({ "myapp.logs": ["a", "b"], "other-app": ["b"] });
  });

  it("compile once the empty source is there: its fields unknown, so NULL", () => {
    const def = definition("a", "select id, m.level from `myapp.logs` cross join unnest(metadata) as m");
    expect(() => compileEndpoint(def, { schema, dialect: duckdbDialect })).toThrow(/not a known log source/);
    const compiled = compileEndpoint(def, {
      schema: withEmptySource(schema, "myapp.logs"),
      dialect: duckdbDialect,
    });
    expect(compiled.sql).toContain("src_myapp_logs");
  });

  it("are never an engine's catalogue, qes's own tables, a source's physical table or a reserved name", () => {
    const table = schema.sources["cloudflare.logs.prod"]!.table;
    for (const relation of [
      "pg_class",
      "PG_CATALOG.pg_roles",
      "`pg_catalog.pg_authid`",
      "duckdb_tables",
      "sqlite_master",
      "information_schema.tables",
      "`information_schema.columns`",
      "`information_schema`",
      "`system.tables`",
      "`main.src_postgres_logs`",
      "`temp.t`",
      "qes_sources",
      table,
      table.toUpperCase(),
      "`constructor`",
      "`__proto__`",
      "`toString`",
      "somedb.sometable",
      "`somedb`.`sometable`",
      "`   `",
    ]) {
      expect(undeclared(definition("x", `select 1 as one from ${relation}`)), relation).toEqual({});
    }
  });
});
