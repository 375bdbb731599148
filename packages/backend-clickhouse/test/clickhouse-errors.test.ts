import { describe, expect, it } from "vitest";
import { clickhouseQueryError } from "../src/clickhouse-errors.ts";

// ClickHouse's messages quote the compiled query (`__table4.f21`, `In query SELECT …`); what
// reaches the user names neither (DESIGN.md §7). The messages are ClickHouse's own, met by the
// fuzzer of bench/.scratch over the SQL case events.

function chError(code: number, text: string): Error {
  return Object.assign(new Error(`Code: ${code}. DB::Exception: ${text}`), { code: String(code) });
}

const INTERNAL =
  /__table|__array_join|\bt\d+\.|\bf\d+\b|\bq\d+_h\d+|In query|SELECT|toInt|assumeNotNull|_CAST/;

describe("ClickHouse errors in the user's terms", () => {
  it.each([
    [
      48,
      "Current query is not supported yet, because can't find correlated column '__table4.f21' in current header: __table4.`f2.null`, __table4.f12. (NOT_IMPLEMENTED)",
    ],
    [10, "Not found column __table6.id in block __table4.`1` UInt8 Const(size = 0, UInt8(size = 1))."],
    [
      48,
      "Correlated subqueries are not supported as IN function arguments yet, but found in expression: reverseUTF8(t4.project) IN (SELECT coalesce(t4.id) AS c0). (NOT_IMPLEMENTED)",
    ],
    [
      215,
      "Column 'u5.value' is not under aggregate function and not in GROUP BY keys. In query SELECT toJSONString(arrayMap(u5 -> u5.value, x)) AS c0. (NOT_AN_AGGREGATE)",
    ],
    [
      41,
      "Cannot read DateTime: unexpected word: while executing function parseDateTime64BestEffort on arguments ifNull(coalesce('not a date'_String, __table1.f11)). (CANNOT_PARSE_DATETIME)",
    ],
    [
      153,
      "Division by zero: while executing function modulo on arguments __table1.f30 Nullable(Int64), _CAST(0_Nullable(Int64), 'Nullable(Int64)'_String). (ILLEGAL_DIVISION)",
    ],
    [
      32,
      "Attempt to read after eof: Cannot parse Int128 from String, because value is too short: while executing function toInt128 on arguments trimBoth(assumeNotNull(__table1.c1)). (ATTEMPT_TO_READ_AFTER_EOF)",
    ],
  ])("code %i is a 422 that quotes no compiled SQL", (code, text) => {
    const e = clickhouseQueryError(chError(code, text));
    expect(e.code).toBe("sql_invalid");
    expect(e.message).not.toMatch(INTERNAL);
  });
});

describe("the engine's own size and depth bounds", () => {
  it.each([
    [
      718,
      "Maximum amount of backtracking (1000000) exceeded in the parser. Consider rising max_parser_backtracks parameter.",
    ],
    [168, "AST is too big. Maximum: 50000."],
    [167, "AST is too deep. Maximum: 1000."],
    [306, "Maximum recursion depth exceeded"],
  ])("code %i is a 422 sql_too_complex, not a 500", (code, text) => {
    const e = clickhouseQueryError(chError(code, text));
    expect(e.code).toBe("sql_too_complex");
    expect(e.message).not.toMatch(/max_parser_backtracks|Maximum: \d/);
  });
});

describe("memory bounds", () => {
  // chDB 26.7's words for a query past its own max_memory_usage (met in clickhouse-execution.test.ts)
  // and ClickHouse's for the engine-wide limit several queries reach together
  it.each([
    [
      "Query memory limit exceeded: would use 20.07 MiB (attempt to allocate chunk of 8.00 MiB), maximum: 20.00 MiB. Untracked memory across all threads: 69.82 KiB: While executing AggregatingTransform.",
      /^The query needs more memory than the service allows one query \(20\.00 MiB\)/,
    ],
    [
      "Memory limit (total) exceeded: would use 21.19 GiB (attempt to allocate chunk of 4.00 MiB), current RSS: 21.10 GiB, maximum: 21.19 GiB. OvercommitTracker decision: Query was selected to stop by OvercommitTracker.: While executing AggregatingTransform. (MEMORY_LIMIT_EXCEEDED)",
      /the engine's memory for all queries at once \(21\.19 GiB\) is used up/,
    ],
  ])("%s is a 422 naming the bound", (text, expected) => {
    const e = clickhouseQueryError(chError(241, text));
    expect(e.code).toBe("sql_invalid");
    expect(e.message).toMatch(expected);
    expect(e.message).not.toMatch(/Transform|Untracked|Overcommit|RSS/);
  });
});
