import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DuckdbDialect, duckdbDialect } from "@qes/backend-duckdb";
import { postgresDialect } from "@qes/backend-postgres";
import {
  builtinLogSchema,
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  type FunctionTable,
  isQesError,
  unsupported,
} from "@qes/core";
import { describe, expect, it } from "vitest";

// The dialect seam (issue 11): function tables typed over the catalogue, rows a dialect cannot
// express refused when a query compiles, pattern binding as a dialect hook, special forms
// validated once.

const schema = builtinLogSchema();

function endpoint(sql: string, params: EndpointDefinition["params"] = {}): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000e5a2",
    name: "seam",
    sql,
    sqlFile: "seam.sql",
    maxRows: 100,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params,
    version: sql,
  };
}

/** A dialect like DuckDB's that cannot express REVERSE: what a new engine's table may declare. */
class WithoutReverse extends DuckdbDialect {
  override readonly name = "no-reverse";
  override readonly functions: FunctionTable = {
    ...duckdbDialect.functions,
    REVERSE: unsupported("the engine has no string reversal"),
  };
}

function compileError(sql: string, dialect: Dialect = new WithoutReverse()) {
  try {
    compileEndpoint(endpoint(sql), { schema, dialect });
  } catch (e) {
    if (isQesError(e)) return e;
    throw e;
  }
  throw new Error(`compiled: ${sql}`);
}

describe("a function a dialect declares unsupported", () => {
  it("is refused when the query compiles, naming the function, the backend and the reason", () => {
    const e = compileError("select id,\n  reverse(event_message) as r from `cloudflare.logs.prod`");
    expect(e.code).toBe("function_not_allowed");
    expect(e.message).toBe(
      "Function REVERSE is not supported on no-reverse: the engine has no string reversal.",
    );
    expect([e.line, e.column]).toEqual([2, 3]);
  });

  it("compiles on the dialects that express it", () => {
    const sql = "select reverse(event_message) as r from `cloudflare.logs.prod`";
    for (const dialect of [duckdbDialect, postgresDialect])
      expect(compileEndpoint(endpoint(sql), { schema, dialect }).sql).toContain("reverse(");
  });
});

describe("regular-expression parameters", () => {
  it("are bound through the dialect's hook: PostgreSQL's, and none for DuckDB", () => {
    const sql = "select id from `cloudflare.logs.prod` where regexp_contains(event_message, @p)";
    const params = { p: { required: true, kind: "string" as const } };
    const pg = compileEndpoint(endpoint(sql, params), { schema, dialect: postgresDialect });
    const duck = compileEndpoint(endpoint(sql, params), { schema, dialect: duckdbDialect });
    expect(pg.bindPattern?.("x.y")).toBe("x[^\\n]y");
    expect(duck.bindPattern).toBeUndefined();
  });

  it("core holds no branch on a dialect's name", () => {
    const root = join(import.meta.dirname, "../../packages/core/src");
    const offenders: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) visit(path);
        else if (/["'](postgres|duckdb|clickhouse)["']|regexSyntax/i.test(readFileSync(path, "utf8")))
          offenders.push(path);
      }
    };
    visit(root);
    expect(offenders).toEqual([]);
  });
});

describe("APPROX_QUANTILES, one validation for both of its forms", () => {
  const forms = (args: string) => [
    `select approx_quantiles(${args}) as q from \`cloudflare.logs.prod\``,
    `select approx_quantiles(${args})[offset(0)] as q from \`cloudflare.logs.prod\``,
  ];

  it.each([
    ["0 quantiles", "id, 0", "APPROX_QUANTILES needs 1 to 1000 quantiles, got 0."],
    ["1001 quantiles", "id, 1001", "APPROX_QUANTILES needs 1 to 1000 quantiles, got 1001."],
    ["a fractional count", "id, 1.5", "APPROX_QUANTILES needs 1 to 1000 quantiles, got 1.5."],
    ["a column count", "id, id", "APPROX_QUANTILES needs a value and an integer number of quantiles."],
    ["three arguments", "id, 2, 3", "APPROX_QUANTILES needs a value and an integer number of quantiles."],
  ])("refuses %s the same way in both forms", (_what, args, message) => {
    for (const sql of forms(args)) {
      const e = compileError(sql, duckdbDialect);
      expect(e.code).toBe("sql_invalid");
      expect(e.message).toBe(message);
    }
  });

  it("refuses it in WHERE in both forms", () => {
    for (const form of ["approx_quantiles(timestamp, 2)", "approx_quantiles(timestamp, 2)[offset(1)]"]) {
      const e = compileError(`select id from \`cloudflare.logs.prod\` where ${form} is null`, duckdbDialect);
      expect(e.message).toBe("Aggregate function APPROX_QUANTILES is not allowed in WHERE.");
    }
  });
});
