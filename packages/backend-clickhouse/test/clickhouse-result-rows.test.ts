import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readResultRows } from "../src/clickhouse-result-rows.ts";

const body = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));

describe("readResultRows", () => {
  it("reads JSONCompactEachRow rows across chunks, multi-byte characters split between them too", async () => {
    const text = '["a","é"]\n[1,null]\n';
    const bytes = Buffer.from(text);
    const cut = bytes.indexOf(Buffer.from("é")) + 1;
    const rows = await readResultRows(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]));
    expect(rows).toEqual([
      ["a", "é"],
      [1, null],
    ]);
    expect(await readResultRows(body(""))).toEqual([]);
  });

  it("refuses a body past the bound as a 422 before making a string of it", async () => {
    const err = await readResultRows(body('["', "x".repeat(600), '"]\n'), 512).catch((e) => e);
    expect(err).toMatchObject({ code: "sql_invalid" });
  });

  it("throws the engine's error written after rows it had sent, and not a JSON parse error", async () => {
    const err = await readResultRows(
      body(
        "[1]\n[2",
        "Code: 241. DB::Exception: Memory limit (for query) exceeded. (MEMORY_LIMIT_EXCEEDED)\n",
      ),
    ).catch((e) => e);
    expect(String(err.message)).toMatch(/^Code: 241\. DB::Exception: Memory limit/);
    // as a row of its own (http_write_exception_in_output_format)
    const row = await readResultRows(
      body('[1]\n{"exception": "Code: 159. DB::Exception: Timeout exceeded: elapsed 5 seconds"}\n'),
    ).catch((e) => e);
    expect(String(row.message)).toMatch(/^Code: 159\. DB::Exception: Timeout exceeded/);
  });
});
