import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { rowSize } from "../src/duckdb-result-size.ts";

/** the first row of `sql`, as the executor reads it (a chunk's rows) */
async function firstRow(sql: string) {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRows()[0]!;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

describe("the size a DuckDB row counts against a result's bound", () => {
  it("counts text inside lists, arrays, structs, maps and unions, not only at the top", async () => {
    const text = "x".repeat(1000);
    const cases: [string, number][] = [
      [`select '${text}'`, 1000],
      [`select [repeat('x', 1000), repeat('y', 1000), repeat('z', 1000)]`, 3000],
      [`select [[repeat('x', 1000)], [repeat('y', 2000)]]`, 3000],
      [`select array_value(repeat('x', 1000), repeat('y', 1000))`, 2000],
      [`select {'a': repeat('x', 1000), 'b': [repeat('y', 500)]}`, 1500],
      [`select map(['k'], [repeat('x', 1000)])`, 1000],
      [`select union_value(t := repeat('x', 1000))`, 1000],
    ];
    for (const [sql, atLeast] of cases) {
      const size = rowSize(await firstRow(sql));
      expect(size, sql).toBeGreaterThanOrEqual(atLeast);
      // and not wildly more: a few bytes of framing per value
      expect(size, sql).toBeLessThan(atLeast + 100);
    }
  });

  it("counts a deep value without recursing", async () => {
    const deep = await firstRow(`select ${"[".repeat(200)}'abc'${"]".repeat(200)}`);
    expect(rowSize(deep)).toBeGreaterThanOrEqual(3);
  });
});
