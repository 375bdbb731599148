import { describe, expect, it } from "vitest";
import { canMatchEmpty, groupCannotBeEmpty } from "../src/sandbox/regex-empty-match.ts";

// Which patterns REGEXP_REPLACE and REGEXP_EXTRACT treat specially on engines whose replacement
// loop or unset groups differ from RE2's (the rows themselves: test/sql/cases/dashboard-edges.ts).

describe("canMatchEmpty", () => {
  it("is true for a pattern that matches the empty string at some place, assertions included", () => {
    for (const p of ["", "a*", "x?", "a|", "(ab)*", "^", "$", "\\b", "\\B", "(?i)a*?", "[0-9]{0,3}"])
      expect(canMatchEmpty(p), p).toBe(true);
  });
  it("is false for a pattern every match of which takes a character", () => {
    for (const p of ["a", "a+", "/[0-9]+", "\\ba\\b", "^a", "(?i)x|y", "\\.?a"])
      expect(canMatchEmpty(p), p).toBe(false);
  });
});

describe("groupCannotBeEmpty", () => {
  it("is true when the first capturing group cannot capture the empty string", () => {
    for (const p of ["a(x)?b", "(a)|b", "(?i)A(X)?B", "\\((b)", "(?:a)((?:x)+)?b", "[(](\\d+)"])
      expect(groupCannotBeEmpty(p), p).toBe(true);
  });
  it("is false without a group, or when the group may capture ''", () => {
    for (const p of ["ab", "a(x*)b", "a(x?)b", "[(]x", "(?:a)b"])
      expect(groupCannotBeEmpty(p), p).toBe(false);
  });
});
