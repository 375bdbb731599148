import { RESULT_TOO_LARGE } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limitedSql } from "../src/postgres-executor.ts";
import { TEST_POSTGRES_URL } from "./helpers.ts";

/** the guard's size of a result: rows a query may send before it is refused (limitedSql) */
describe("the result size guard", () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    // text that compresses ~85 times: stored, each value takes ~1.7 KB of its 150 KB
    await client.query(
      "create temp table compressible as select repeat('x', 150000) || g as s, g from generate_series(1, 4) g",
    );
  });
  afterAll(async () => {
    await client?.end();
  });

  const run = (sql: string, maxRows: number, maxBytes: number) =>
    client.query({ text: limitedSql(sql, maxRows, maxBytes), rowMode: "array" });

  it("counts stored values as they are sent, not as they are stored compressed", async () => {
    // 4 × 150 KB sent; pg_column_size saw 4 × 1.7 KB and let it through
    const sent = run("select s from compressible order by g", 100, 500_000);
    await expect(sent).rejects.toThrow(RESULT_TOO_LARGE);
    // the same rows under a limit they fit are answered, guard column last
    const fits = await run("select s, g from compressible order by g", 100, 700_000);
    expect(fits.rows).toHaveLength(4);
    expect(fits.rows.map((r) => [(r[0] as string).length, r[1], r[2]])).toEqual([
      [150001, 1, null],
      [150001, 2, null],
      [150001, 3, null],
      [150001, 4, null],
    ]);
  });

  it("refuses at the row that passes the limit, a computed value past it included", async () => {
    await expect(run("select repeat('y', 300000) as s", 10, 200_000)).rejects.toThrow(RESULT_TOO_LARGE);
    // two rows fit, the third passes: refused, not cut
    await expect(run("select s from compressible order by g limit 3", 10, 400_000)).rejects.toThrow(
      RESULT_TOO_LARGE,
    );
    expect((await run("select s from compressible order by g limit 2", 10, 400_000)).rows).toHaveLength(2);
  });
});
