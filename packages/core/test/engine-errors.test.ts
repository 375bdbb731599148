import { describe, expect, it } from "vitest";
import { userFacingEngineMessage, userSqlError } from "../src/engine-errors.ts";

// Engine errors caused by a user's SQL reach the client in terms of that SQL (issue 11): these are
// messages the engines gave for compiled queries, with the parts a user never wrote.

describe("userFacingEngineMessage", () => {
  it.each([
    [
      "DuckDB's compiled-SQL excerpt and settings hint",
      'Binder Error: ORDER BY non-integer literal has no effect.\n* SET order_by_non_integer_literal=true to allow this behavior.\n\nLINE 3: ORDER BY NULL ASC NULLS FIRST, "t0"."id" ASC\n                 ^',
      "ORDER BY non-integer literal has no effect.",
    ],
    [
      "PostgreSQL naming an internal alias and column",
      'column "r18.c1" must appear in the GROUP BY clause or be used in an aggregate function',
      "column a value of the query must appear in the GROUP BY clause or be used in an aggregate function",
    ],
    [
      "quoted qualified internal names",
      'Referenced column "f7" not found in FROM clause! Candidate bindings: "t0"."f8"',
      "Referenced column a value of the query not found in FROM clause! Candidate bindings: a value of the query",
    ],
    [
      "DuckDB's physical source column of a cast",
      "Conversion Error: Could not convert string 'abc' to INT64 when casting from source column f12",
      "Could not convert string 'abc' to INT64",
    ],
    ["a PostgreSQL hint", "division by zero HINT: do something", "division by zero"],
    [
      "DuckDB's advice to change a locked setting",
      'Binder Error: Max expression depth limit of 1000 exceeded. Use "SET max_expression_depth TO x" to increase the maximum expression depth.',
      "Max expression depth limit of 1000 exceeded.",
    ],
    ["nothing left", "\n\n", "the engine refused it"],
  ])("%s", (_name, message, expected) => {
    expect(userFacingEngineMessage(message)).toBe(expected);
  });

  it("keeps the user's own text, quotes included", () => {
    expect(userFacingEngineMessage('invalid input syntax for type bigint: "worker heartbeat"')).toBe(
      'invalid input syntax for type bigint: "worker heartbeat"',
    );
  });

  it("is a 422 sql_invalid keeping the engine's error as its cause", () => {
    const cause = new Error("boom");
    const e = userSqlError("division by zero", cause);
    expect(e.code).toBe("sql_invalid");
    expect(e.message).toBe("The query cannot run: division by zero");
    expect(e.cause).toBe(cause);
  });
});
