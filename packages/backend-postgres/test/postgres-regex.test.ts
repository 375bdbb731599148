import { describe, expect, it } from "vitest";
import { postgresDialect } from "../src/postgres-dialect.ts";
import { toPostgresRegex } from "../src/postgres-regex.ts";

describe("RE2 patterns for PostgreSQL", () => {
  it("gives PostgreSQL RE2's newline behaviour for dots, leaving classes and escapes alone", () => {
    expect(toPostgresRegex("a.b")).toBe("a[^\\n]b");
    expect(toPostgresRegex("(?i)a.b\\.[.]")).toBe("(?i)a[^\\n]b\\.[.]");
    expect(toPostgresRegex("[[:alpha:].]x.")).toBe("[[:alpha:].]x[^\\n]");
  });

  it("is the dialect's pattern binding hook", () => {
    expect(postgresDialect.bindPattern("a.[.]")).toBe("a[^\\n][.]");
  });
});
