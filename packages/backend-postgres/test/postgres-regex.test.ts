import { describe, expect, it } from "vitest";
import { postgresDialect } from "../src/postgres-dialect.ts";
import { toPostgresRegex, WORD_BOUNDARIES } from "../src/postgres-regex.ts";

describe("RE2 patterns for PostgreSQL", () => {
  it("gives PostgreSQL RE2's newline behaviour for dots, leaving escaped characters alone", () => {
    expect(toPostgresRegex("a.b")).toBe("a[^\\n]b");
    expect(toPostgresRegex("(?i)a.b\\.[.]")).toBe("(?i)a[^\\n]b\\.[.]");
    expect(toPostgresRegex("[[:alpha:].]x.")).toBe("[A-Za-z.]x[^\\n]");
  });

  it("writes RE2's ASCII classes as their members, not the locale's classes", () => {
    expect(toPostgresRegex("\\w+\\W\\d\\D\\s\\S")).toBe(
      "[0-9A-Za-z_]+[^0-9A-Za-z_][0-9][^0-9][\\t\\n\\f\\r ][^\\t\\n\\f\\r ]",
    );
    expect(toPostgresRegex("[\\w-][^\\d\\s][[:punct:][:xdigit:]]")).toBe(
      "[0-9A-Za-z_-][^0-9\\t\\n\\f\\r ][!-/:-@\\u005b-\\u0060{-~0-9A-Fa-f]",
    );
    // an escaped backslash before a letter is the backslash, the letter stays itself; \b is ASCII's boundary
    expect(toPostgresRegex("\\\\w\\b")).toBe(`\\\\w${WORD_BOUNDARIES.b}`);
  });

  it("is the dialect's pattern binding hook", () => {
    expect(postgresDialect.bindPattern("a.[.]")).toBe("a[^\\n][.]");
  });
});
