import { QesError } from "../errors.ts";
import { checkBacktrackingNesting } from "./backtracking-nesting.ts";
import { rewrite } from "./desugar-constructs.ts";
import {
  frameStartAlone,
  joinGroups,
  parenthesisedJoins,
  parenthesisedLastOperand,
  qualifyWithoutWhere,
  starExceptReplace,
  windowAfterOrder,
} from "./desugar-passes.ts";
import { lexSql, type Token } from "./lex-sql.ts";
import type { Out } from "./token-scan.ts";
import { refuseSafeAggregateForms, refuseUnsupportedSyntax } from "./unsupported-syntax.ts";

/**
 * Closes node-sql-parser's gaps on real log queries (NOTES.md) without touching strings or
 * comments: a pass over the token stream rewrites constructs the parser cannot read into calls
 * of internal functions (`__qes_*`) that the analyser reads back as the original construct.
 * User SQL may not name `__qes_*` itself.
 *
 * - every string literal becomes a placeholder `'__qes_s<N>'` whose decoded value is kept aside
 *   (the parser neither decodes escapes nor reads triple-quoted or double-quoted strings reliably);
 * - subscripts `x[OFFSET(n)]`, `x[n]`, chained with `.field` → `__qes_subscript(x, mode, n)`,
 *   `__qes_path(e, 'field', …)`;
 * - `e [ASC|DESC] NULLS FIRST|LAST` → `__qes_nulls_first(e) [ASC|DESC]`;
 * - `a IS [NOT] DISTINCT FROM b` → `__qes_is_[not_]distinct(a, b)`;
 * - `e AT TIME ZONE z` → `__qes_at_time_zone(e, z)`;
 * - `ARRAY_AGG` / `STRING_AGG` with DISTINCT, IGNORE NULLS, ORDER BY, LIMIT → `__qes_array_agg(…)`;
 * - `QUALIFY` without `WHERE` gets `WHERE TRUE`; `FROM (a JOIN b …)` loses its parentheses;
 * - a `WINDOW` clause before ORDER BY / LIMIT moves after them (where the parser reads it);
 * - `A UNION ALL (B) ORDER BY …` → `A UNION ALL SELECT * FROM (B) ORDER BY …`;
 * - `.25`, `1.5e3` → `__qes_float('…')`; array literals `[a, b]`, `ARRAY<T>[…]` →
 *   `__qes_array(…)`, `__qes_array_typed('T', …)`; `ARRAY(SELECT …)` → `__qes_array_subquery(…)`;
 * - `INTERVAL n UNIT` → `__qes_interval(n, 'UNIT')`; `EXTRACT(part FROM e)` → `__qes_extract('part', e)`.
 */
export interface DesugaredSql {
  /** SQL for the parser: one line */
  text: string;
  /** decoded string literal values by placeholder number */
  strings: string[];
  /** original line and column of a position in `text` */
  origin(offset: number): { line: number; column: number };
  /** the text the user wrote at the token a position in `text` came from ("" at the end) */
  writtenAt(offset: number): string;
  /** where each `@name` parameter first appears (the parser gives parameters no location) */
  paramAt: Map<string, { line: number; column: number }>;
}

export const INTERNAL_PREFIX = "__QES_";

export const STRING_PLACEHOLDER = "__qes_s";

export const SUBSCRIPT_MODES = ["OFFSET", "ORDINAL", "SAFE_OFFSET", "SAFE_ORDINAL"] as const;

/**
 * Deepest nesting of brackets, and of constructs the rewrite wraps around the expression before
 * them (chained subscripts, IS DISTINCT FROM, AT TIME ZONE, NULLS FIRST). Beyond it a query is
 * `sql_too_complex`: the rewrite and the parser recurse per level, and each wrap copies what it
 * wraps, so deeper input would cost quadratic time or overflow the stack.
 */
export const MAX_SQL_NESTING = 128;

export function tooDeep(t: Token): never {
  throw new QesError(
    "sql_too_complex",
    `The query nests deeper than ${MAX_SQL_NESTING} levels (line ${t.line}, column ${t.column}).`,
    { line: t.line, column: t.column },
  );
}

/** More tokens than this cost the parser seconds on pathological input: refused up front. */
export const MAX_SQL_TOKENS = 20_000;

/**
 * Passes over the whole statement, in this order, before the construct rules (desugar-constructs.ts)
 * rewrite expressions. Each has its own input→output tests (packages/core/test/desugar-passes.test.ts).
 */
export const STATEMENT_PASSES: ReadonlyArray<{ name: string; run: (tokens: Token[]) => Token[] }> = [
  { name: "qualify-without-where", run: qualifyWithoutWhere },
  { name: "parenthesised-joins", run: parenthesisedJoins },
  { name: "join-groups", run: joinGroups },
  { name: "star-except-replace", run: starExceptReplace },
  { name: "window-after-order", run: windowAfterOrder },
  { name: "frame-start-alone", run: frameStartAlone },
  { name: "parenthesised-last-operand", run: parenthesisedLastOperand },
];

export function desugarSql(sql: string): DesugaredSql {
  const tokens = lexSql(sql);
  if (tokens.length > MAX_SQL_TOKENS) {
    throw new QesError(
      "sql_too_complex",
      `The query has ${tokens.length} tokens; the limit is ${MAX_SQL_TOKENS}.`,
      {
        line: 1,
        column: 1,
      },
    );
  }
  let depth = 0;
  for (const t of tokens) {
    if (t.type === "quoted_ident" && /[`\\]/.test(t.value)) {
      // The lexer reads escapes in quoted names and the parser does not: refuse what they could
      // read differently rather than let them disagree about where a name ends.
      throw new QesError("sql_invalid", "Quoted names may not contain a backtick or a backslash.", {
        line: t.line,
        column: t.column,
      });
    }
    if (
      (t.type === "ident" || t.type === "quoted_ident") &&
      t.value.toUpperCase().startsWith(INTERNAL_PREFIX)
    ) {
      throw new QesError("sql_invalid", `Names starting with __qes_ are reserved (${t.text}).`, {
        line: t.line,
        column: t.column,
      });
    }
    if (t.type === "punct" && (t.value === "(" || t.value === "[") && ++depth > MAX_SQL_NESTING) tooDeep(t);
    if (t.type === "punct" && (t.value === ")" || t.value === "]")) depth--;
  }
  checkBacktrackingNesting(tokens);
  refuseUnsupportedSyntax(tokens);
  refuseSafeAggregateForms(tokens);
  const strings: string[] = [];
  const pre = STATEMENT_PASSES.reduce((ts, pass) => pass.run(ts), tokens.slice(0, -1));
  const out = rewrite(pre, strings);
  // Render on one line, remembering where each token came from.
  let text = "";
  const starts: number[] = [];
  const origins: Token[] = [];
  let prev: Out | undefined;
  for (const o of out) {
    if (prev && needsSpace(prev, o)) text += " ";
    starts.push(text.length);
    origins.push(o.origin);
    text += o.text;
    prev = o;
  }
  const eof = tokens[tokens.length - 1]!;
  const paramAt = new Map<string, { line: number; column: number }>();
  for (const t of tokens)
    if (t.type === "param" && !paramAt.has(t.value)) paramAt.set(t.value, { line: t.line, column: t.column });
  const tokenAt = (offset: number): Token => {
    let lo = 0;
    let hi = starts.length - 1;
    if (hi < 0 || offset >= text.length) return eof;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return origins[lo]!;
  };
  return {
    text,
    strings,
    paramAt,
    origin(offset) {
      const t = tokenAt(offset);
      return { line: t.line, column: t.column };
    },
    writtenAt(offset) {
      return tokenAt(offset).text;
    },
  };
}

export function needsSpace(a: Out, b: Out): boolean {
  if (b.value === "." || b.value === "," || b.value === ")" || b.value === "]") return false;
  if (a.value === "." || a.value === "(" || a.value === "[") return false;
  if (b.value === "(" && a.kind === "synthetic") return false;
  return true;
}
