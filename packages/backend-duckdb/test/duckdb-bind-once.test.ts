import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { bindOnce } from "../src/duckdb-sql.ts";

// DuckDB's once is a lambda over a one-element list, and "subqueries in lambda expressions are not
// supported": a body that holds one keeps its value written in place.
describe("DuckDB's once", () => {
  const long = `(1 + ${Array.from({ length: 200 }, () => "0").join(" + ")})`;

  it("binds a long value by a lambda, and writes it in place when the body holds a subquery", async () => {
    const instance = await DuckDBInstance.create(":memory:");
    const conn = await instance.connect();
    try {
      const plain = bindOnce(long, (v) => `${v} * 2`);
      expect(plain).toContain("lambda");
      const withSubquery = bindOnce(long, (v) => `(SELECT max(x) FROM unnest([${v}, 0]) AS t(x)) * 2`);
      expect(withSubquery).not.toContain("lambda");
      const rows = (await conn.runAndReadAll(`SELECT ${plain} AS a, ${withSubquery} AS b`)).getRows();
      expect(rows).toEqual([[2, 2]]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
