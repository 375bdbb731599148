import { describe, expect, it } from "vitest";
import { capturingGroups, checkRegexPattern, isPlainPattern } from "../src/sandbox/regex-subset.ts";

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
    // a `-` first, last, or as a range's end reads alike on every engine
    "[\\d-]",
    "[-\\d]",
    "[\\w.-]+",
    "[a-c-]",
    "[--a]",
    "[%--a]",
    "[]-a]",
    "[^]-a]",
    "[\\x41-\\x5a]",
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
    // RE2 reads these; PostgreSQL refuses them ("invalid character range", "invalid character class")
    ["[\\d-z]", '"-" at position 4'],
    ["[\\s-x]", '"-" at position 4'],
    ["[\\d-\\w]", '"-" at position 4'],
    ["[a-c-e]", '"-" at position 5'],
    ["[\\x41-\\x5a-z]", '"-" at position 11'],
    ["[[:alpha:]-z]", '"-" at position 11'],
    ["[[:^alpha:]]", "negated class name"],
    ["[^[:^digit:]x]", "negated class name"],
    // inside the subset's shape, refused by RE2's own parser (re2js)
    ["[b-a]", "invalid character class range"],
    ["[[:foo:]]", "invalid character class range"],
    ["x[z-a]y|q", "invalid character class range"],
  ])("refuses %s", (p, why) => {
    expect(checkRegexPattern(p)).toContain(why);
  });
});

describe("plain patterns (tested as substrings by the dialects)", () => {
  it.each(["kzbtwfqmxrhyglnpvcas", "/rest", "100%", "under_score", "日本", "a-b:c"])("%s is plain", (p) => {
    expect(isPlainPattern(p)).toBe(true);
  });
  it.each(["", "a.b", "^a", "a$", "a|b", "a?", "a*", "a+", "(a)", "[a]", "a{2}", "a\\b"])(
    "%j is not",
    (p) => {
      expect(isPlainPattern(p)).toBe(false);
    },
  );
});

describe("capturing groups of a pattern (REGEXP_EXTRACT's group)", () => {
  it.each([
    ["abc", 0],
    ["(?i)abc", 0],
    ["(?:a|b)c", 0],
    ["[(]b[)]", 0],
    ["\\(b\\)", 0],
    ["[]()]x", 0],
    ["[^](]x", 0],
    ["[[:alpha:](]x", 0],
    ["(a)", 1],
    ["(?i)(a)b", 1],
    ["[(](\\d+)[)]", 1],
    ["(a)(b)", 2],
    ["((a)b)", 2],
  ] as const)("%s has %i", (pattern, groups) => {
    expect(capturingGroups(pattern)).toBe(groups);
  });
});
