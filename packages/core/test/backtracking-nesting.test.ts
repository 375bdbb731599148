import { describe, expect, it } from "vitest";
import { MAX_BACKTRACKING_NESTING } from "../src/parse/backtracking-nesting.ts";
import { parseSelect } from "../src/parse/parse-sql.ts";

// Found probing issue 12: the parser's time doubled, about, per level of these constructs, on the
// event loop — eighteen nested STRUCTs took 11 s and sixty never ended, while the server answered
// nobody (not even /health). Past the limit they are refused before the parser runs.

const NESTS: Array<[string, (n: number) => string]> = [
  ["STRUCT", (n) => `select ${"struct(".repeat(n)}1 as a${") as a".repeat(n - 1)}) as x`],
  ["CAST", (n) => `select ${"cast(".repeat(n)}1${" as int64)".repeat(n)} as x`],
  ["SAFE_CAST", (n) => `select ${"safe_cast(".repeat(n)}1${" as int64)".repeat(n)} as x`],
  ["ARRAY(SELECT …)", (n) => `select ${"array(select ".repeat(n)}1${")".repeat(n)} as x`],
  ["EXISTS(SELECT …)", (n) => `select ${"exists(select ".repeat(n)}1${")".repeat(n)} as x`],
  ["CASE (…)", (n) => `select ${"case (".repeat(n)}1${") when 1 then 1 end".repeat(n)} as x`],
  [
    "CAST around STRUCT",
    (n) => `select ${"cast(struct(".repeat(n / 2)}1${" as a) as int64)".repeat(n / 2)} as x`,
  ],
];

describe("nesting the parser backtracks on", () => {
  it.each(NESTS)("%s past the limit is sql_too_complex at once", (_name, nest) => {
    // refused by the count before the parser runs (its own refusal, "nested too deeply to parse",
    // comes only after it has spent its time): the message names the limit
    expect(() => parseSelect(nest(14))).toThrow(
      expect.objectContaining({
        code: "sql_too_complex",
        message: expect.stringContaining(`deeper than ${MAX_BACKTRACKING_NESTING} levels`),
      }),
    );
  });

  it("up to the limit still parses", () => {
    expect(() => parseSelect(NESTS[1]![1](MAX_BACKTRACKING_NESTING))).not.toThrow();
    expect(() => parseSelect(NESTS[0]![1](MAX_BACKTRACKING_NESTING))).not.toThrow();
  });

  it("other nesting is not counted: 40 levels of UPPER and brackets", () => {
    expect(() => parseSelect(`select ${"upper(".repeat(40)}'a'${")".repeat(40)} as x`)).not.toThrow();
    expect(() => parseSelect(`select ${"(".repeat(40)}1${")".repeat(40)} as x`)).not.toThrow();
  });
});
