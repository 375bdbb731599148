import { createRequire } from "node:module";
import { QesError } from "../errors.ts";

// Only the BigQuery build: 8 ms to load instead of 46 ms for all dialects (NOTES.md).
const require = createRequire(import.meta.url);
const { Parser } = require("node-sql-parser/build/bigquery") as {
  Parser: new () => { astify(sql: string, opts: object): unknown };
};
const parser = new Parser();

/** node-sql-parser's AST is untyped; the analyser checks every node it accepts. */
export type AstNode = Record<string, any>;

export interface Location {
  line: number;
  column: number;
}

export const MAX_SQL_LENGTH = 100_000;

/**
 * Parses one BigQuery SELECT statement. Several statements, or anything but a query, are refused
 * with `statement_not_allowed`; a syntax error names its line and column.
 */
export function parseSelect(sql: string): AstNode {
  if (sql.length > MAX_SQL_LENGTH) {
    throw new QesError(
      "sql_too_complex",
      `SQL is ${sql.length} characters long; the limit is ${MAX_SQL_LENGTH}.`,
    );
  }
  const text = sql;
  if (text.trim() === "") throw new QesError("sql_syntax", "SQL is empty.", { line: 1, column: 1 });
  let ast: unknown;
  try {
    ast = parser.astify(text, { database: "bigquery", parseOptions: { includeLocations: true } });
  } catch (e) {
    const err = e as { message?: string; location?: { start?: Location }; found?: string | null };
    const loc = err.location?.start;
    const near = err.found == null ? "end of input" : `"${err.found}"`;
    throw new QesError(
      "sql_syntax",
      `Syntax error at ${near}${loc ? ` (line ${loc.line}, column ${loc.column})` : ""}.`,
      {
        ...(loc ? { line: loc.line, column: loc.column } : {}),
      },
    );
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  if (statements.length !== 1) {
    const second = statements[1] as AstNode | undefined;
    throw new QesError("statement_not_allowed", "Only one statement is allowed.", locationOf(second));
  }
  const stmt = statements[0] as AstNode;
  if (stmt?.type !== "select") {
    throw new QesError(
      "statement_not_allowed",
      `Only SELECT queries are allowed; got ${String(stmt?.type ?? "an unknown statement").toUpperCase()}.`,
      locationOf(stmt),
    );
  }
  return stmt;
}

export function locationOf(node: AstNode | undefined | null): { line?: number; column?: number } {
  const start = node?.loc?.start as Location | undefined;
  return start ? { line: start.line, column: start.column } : {};
}
