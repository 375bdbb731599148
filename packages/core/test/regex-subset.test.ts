import { describe, expect, it } from "vitest";
import { checkRegexPattern, toPostgresRegex } from "../src/sandbox/regex-subset.ts";

describe("the RE2 subset every engine reads alike", () => {
  it.each([
    "/rest",
    "^https://[a-z0-9-]+\\.supabase\\.co/",
    "(?i)get|post",
    "\\d{2,3}-\\w+\\s*",
    "[[:alpha:]][^\\]x]*",
    "(?:a|b)+?c",
    "\\x41\\.\\/",
    "a{3}b{2,}c{1,4}",
    "a{255}",
    "(a{10}b{10}){100}",
    "((x{40})y){25}",
    "\\d{200}(a){2}",
  ])("accepts %s", (p) => {
    expect(checkRegexPattern(p)).toBeUndefined();
  });

  it.each([
    ["(a)\\1", "backreference"],
    ["a(?=b)", "group syntax"],
    ["a(?<!b)", "group syntax"],
    ["(?P<name>a)", "group syntax"],
    ["a(?i)b", "group syntax"],
    ["\\p{L}", "escape \\p"],
    ["\\Qa.b\\E", "escape \\Q"],
    ["a\\z", "escape \\z"],
    ["a++", "possessive"],
    ["*a", "nothing to repeat"],
    ["a{2,1}", "invalid repetition range"],
    ["a{5000}", "repetition over 255"],
    // PostgreSQL refuses counts over 255 (RE2 and DuckDB read them)
    ["a{256}", "repetition over 255"],
    ["a{2,256}", "repetition over 255"],
    // RE2 refuses nested counts whose product is over 1000 (PostgreSQL reads them)
    ["(a{11}){100}", "nested repetitions over 1000"],
    ["(((a{100}){100}){100})", "nested repetitions over 1000"],
    ["((x{40})y){26}", "nested repetitions over 1000"],
    ["(?:a|b{200}){6}", "nested repetitions over 1000"],
    ["(ab", 'missing ")"'],
    ["ab)", 'unmatched ")"'],
    ["[ab", 'missing "]"'],
    ["ab\\", "lone backslash"],
  ])("refuses %s", (p, why) => {
    expect(checkRegexPattern(p)).toContain(why);
  });

  it("gives PostgreSQL RE2's newline behaviour for dots, leaving classes and escapes alone", () => {
    expect(toPostgresRegex("a.b")).toBe("a[^\\n]b");
    expect(toPostgresRegex("(?i)a.b\\.[.]")).toBe("(?i)a[^\\n]b\\.[.]");
    expect(toPostgresRegex("[[:alpha:].]x.")).toBe("[[:alpha:].]x[^\\n]");
  });
});
