import { duckdbDialect } from "@qes/backend-duckdb";
import { builtinLogSchema, compileEndpoint, type QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { builtinRegistry } from "../support/run-endpoint.ts";

function refusal(run: () => unknown): QesError {
  try {
    run();
  } catch (e) {
    return e as QesError;
  }
  throw new Error("expected a refusal");
}

describe("compile cache", () => {
  // an attacker repeating refused consumer SQL must not cost a parse and an analysis each time
  it("keeps a refusal like a result: the same inputs get the same error without compiling again", async () => {
    const logsAll = (await builtinRegistry()).get("logs.all")!;
    const schema = builtinLogSchema();
    const compile = (consumerSql: string) => () =>
      compileEndpoint(logsAll, { schema, dialect: duckdbDialect, consumerSql });
    const hostile = "select * from read_csv('/etc/passwd')";
    const first = refusal(compile(hostile));
    expect(first.code).toBe("relation_not_allowed");
    // the very object: nothing was parsed or analysed the second time
    expect(refusal(compile(hostile))).toBe(first);
    // other SQL is compiled on its own, and a good query still compiles and is cached as before
    expect(refusal(compile("select x from nowhere"))).not.toBe(first);
    const ok = compile("select id from edge_logs limit 1");
    expect(ok()).toBe(ok());
    // another schema object (a widening, another backend) compiles again
    expect(
      refusal(() =>
        compileEndpoint(logsAll, {
          schema: builtinLogSchema(),
          dialect: duckdbDialect,
          consumerSql: hostile,
        }),
      ),
    ).not.toBe(first);
  });
});
