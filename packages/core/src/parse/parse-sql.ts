import { createRequire } from "node:module";
import { QesError } from "../errors.ts";
import { type DesugaredSql, desugarSql, STRING_PLACEHOLDER } from "./desugar.ts";

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
  if (sql.trim() === "") throw new QesError("sql_syntax", "SQL is empty.", { line: 1, column: 1 });
  const desugared = tooComplexOnStackOverflow(() => desugarSql(sql));
  if (desugared.text.trim() === "") throw new QesError("sql_syntax", "SQL is empty.", { line: 1, column: 1 });
  let ast: unknown;
  try {
    ast = parser.astify(desugared.text, { database: "bigquery", parseOptions: { includeLocations: true } });
  } catch (e) {
    if (e instanceof RangeError) throw tooComplex();
    const err = e as { message?: string; location?: { start?: { offset: number } }; found?: string | null };
    const offset = err.location?.start?.offset;
    if (offset === undefined) {
      // not the grammar's own error (the parser failed inside a rule, as on CREATE SCHEMA): no
      // place to point at but the statement's start
      const start = desugared.origin(0);
      throw new QesError(
        "sql_syntax",
        `Syntax error: this statement cannot be read (line ${start.line}, column ${start.column}).`,
        start,
      );
    }
    const loc = desugared.origin(offset);
    // quote what the user wrote there, never the desugared text the parser read
    const written = desugared.writtenAt(offset);
    const near =
      written === "" ? "end of input" : `"${written.length > 40 ? `${written.slice(0, 40)}…` : written}"`;
    throw new QesError(
      "sql_syntax",
      `Syntax error at ${near} (line ${loc.line}, column ${loc.column}).`,
      loc,
    );
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  if (statements.length !== 1) {
    // the parser locates only some statements: the second starts after the first one's `;`
    const firstEnd = (statements[0] as AstNode | undefined)?.loc?.end?.offset;
    const at = typeof firstEnd === "number" ? secondStatementAt(desugared.text, firstEnd) : undefined;
    const loc = at === undefined ? undefined : desugared.origin(at);
    throw new QesError(
      "statement_not_allowed",
      `Only one statement is allowed${loc ? `; another starts at line ${loc.line}, column ${loc.column}` : ""}.`,
      loc ?? {},
    );
  }
  restoreOriginal(ast, desugared);
  const stmt = statements[0] as AstNode;
  if (stmt?.type !== "select") {
    throw new QesError(
      "statement_not_allowed",
      `Only SELECT queries are allowed; got ${String(stmt?.type ?? "an unknown statement").toUpperCase()}.`,
      // the parser locates only SELECTs: a statement starts at the text's first token
      stmt?.loc ? locationOf(stmt) : desugared.origin(0),
    );
  }
  return stmt;
}

/** Offset of the first token after the `;` that ends the statement ending at `from`. */
function secondStatementAt(text: string, from: number): number | undefined {
  let i = text.indexOf(";", from);
  if (i < 0) return undefined;
  while (i < text.length && (text[i] === ";" || text[i] === " ")) i++;
  return i < text.length ? i : undefined;
}

function tooComplex(): QesError {
  return new QesError("sql_too_complex", "The query is nested too deeply to parse.");
}

/** The last guard behind the nesting limits: a stack overflow is the query's size, not a bug to answer 500. */
function tooComplexOnStackOverflow<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof RangeError) throw tooComplex();
    throw e;
  }
}

/**
 * The name a FROM item gives, its parts joined with `.` as a source's name is written:
 * `cloudflare.logs.prod`, `` `cloudflare.logs.prod` `` and `` `cloudflare`.`logs`.`prod` `` alike.
 * The parser splits an unquoted (or part-quoted) three-part name into `db`, `schema` and `table`
 * (and repeats `db` as `catalog`): read as `db.table`, `cloudflare.logs.prod` was the source
 * `cloudflare.prod`, which start-up then created, empty, for the query to read instead.
 */
export function tableNameOf(item: AstNode): string {
  return [item.db, item.schema, item.table].filter(Boolean).map(String).join(".");
}

/**
 * The text of an alias: the parser gives a plain alias as a string and a backtick-quoted one
 * (`AS \`my col\``) as a node holding it.
 */
export function aliasText(as: unknown): string | undefined {
  if (as === null || as === undefined) return undefined;
  if (typeof as === "object") {
    const value = (as as { value?: unknown }).value;
    return value === null || value === undefined ? undefined : String(value);
  }
  return String(as);
}

export function locationOf(node: AstNode | undefined | null): { line?: number; column?: number } {
  const start = node?.loc?.start as Location | undefined;
  return start ? { line: start.line, column: start.column } : {};
}

/**
 * Puts back what desugaring replaced: string placeholders become their decoded values and every
 * location points into the SQL the user wrote.
 */
function restoreOriginal(node: unknown, d: DesugaredSql): void {
  const stack: unknown[] = [node];
  const seen = new Set<object>();
  while (stack.length) {
    const n = stack.pop();
    if (!n || typeof n !== "object" || seen.has(n)) continue;
    seen.add(n);
    if (Array.isArray(n)) {
      for (const x of n) stack.push(x);
      continue;
    }
    const obj = n as AstNode;
    if (obj.type === "expr_list") regroupListOr(obj);
    if (obj.loc?.start && typeof obj.loc.start.offset === "number") {
      const o = d.origin(obj.loc.start.offset);
      obj.loc = { start: { line: o.line, column: o.column } };
    } else if (obj.type === "param" && !obj.loc) {
      const at = d.paramAt.get(String(obj.value));
      if (at) obj.loc = { start: at };
    }
    if (typeof obj.value === "string" && obj.value.startsWith(STRING_PLACEHOLDER)) {
      const value = d.strings[Number(obj.value.slice(STRING_PLACEHOLDER.length))];
      if (value !== undefined) {
        // typed literals (TIMESTAMP '…') keep their type; plain strings become `string`
        if (obj.type === "single_quote_string" || obj.type === "double_quote_string") obj.type = "string";
        obj.value = value;
      }
    }
    // a string literal where a name belongs (`FROM "x"`): messages show the text written
    for (const k of ["table", "db", "as"]) {
      const v = obj[k];
      if (typeof v === "string" && v.startsWith(STRING_PLACEHOLDER)) {
        const text = d.strings[Number(v.slice(STRING_PLACEHOLDER.length))];
        if (text !== undefined) obj[k] = `'${text}'`;
      }
    }
    for (const k of Object.keys(obj)) if (k !== "loc") stack.push(obj[k]);
  }
}

/**
 * node-sql-parser reads an OR inside a list (`concat('a', x or y)`, `coalesce(a, x or y, b)`,
 * `[x, y or z]`) as the OR of the list's items so far and the operand after it: `('a', x) OR y`.
 * This gives the OR back its own operands, in place: the list's last item so far becomes the OR's
 * left operand and the OR takes that item's place.
 */
function regroupListOr(list: AstNode): void {
  const items: unknown[] = Array.isArray(list.value) ? list.value : [list.value];
  const out: unknown[] = [];
  let changed = false;
  for (const item of items) {
    const split = splitListOr(item);
    if (split) changed = true;
    out.push(...(split ?? [item]));
  }
  if (changed) list.value = out;
}

/** `(a, b) OR c` as the parser gives it → [a, b OR c]; undefined when the item is not one */
function splitListOr(item: unknown): unknown[] | undefined {
  let parent: AstNode | undefined;
  let node = item as AstNode | undefined;
  while (node && typeof node === "object" && !Array.isArray(node) && node.type === "binary_expr") {
    parent = node;
    node = node.left as AstNode | undefined;
  }
  if (!parent || !Array.isArray(node) || node.length === 0) return undefined;
  const list = node as unknown[];
  parent.left = list[list.length - 1];
  const before = list.slice(0, -1).flatMap((x) => splitListOr(x) ?? [x]);
  return [...before, item];
}
