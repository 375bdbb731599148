import { QesError } from "../errors.ts";
import {
  aggregateCall,
  isPrimaryEnd,
  OPERAND_BOUNDARY,
  operandEnd,
  operandStart,
  primaryStart,
} from "./desugar-operands.ts";
import { joinGroups, parenthesisedJoins, qualifyWithoutWhere, starExceptReplace } from "./desugar-passes.ts";
import { lexSql, type Token } from "./lex-sql.ts";
import { isWord, matching, type Out, punct, splitTopLevel, stringOut, synth, tok } from "./token-scan.ts";

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

function tooDeep(t: Token): never {
  throw new QesError(
    "sql_too_complex",
    `The query nests deeper than ${MAX_SQL_NESTING} levels (line ${t.line}, column ${t.column}).`,
    { line: t.line, column: t.column },
  );
}

/** More tokens than this cost the parser seconds on pathological input: refused up front. */
export const MAX_SQL_TOKENS = 20_000;

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
  const strings: string[] = [];
  const pre = starExceptReplace(joinGroups(parenthesisedJoins(qualifyWithoutWhere(tokens.slice(0, -1)))));
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
  return {
    text,
    strings,
    paramAt,
    origin(offset) {
      let lo = 0;
      let hi = starts.length - 1;
      if (hi < 0 || offset >= text.length) return { line: eof.line, column: eof.column };
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      const t = origins[lo]!;
      return { line: t.line, column: t.column };
    },
  };
}

export function needsSpace(a: Out, b: Out): boolean {
  if (b.value === "." || b.value === "," || b.value === ")" || b.value === "]") return false;
  if (a.value === "." || a.value === "(" || a.value === "[") return false;
  if (b.value === "(" && a.kind === "synthetic") return false;
  return true;
}

/** how many wraps deep the expression starting with a synthetic token is */
const wrapDepth = new WeakMap<Out, number>();

/** `head` wraps `inner` (the tokens of the expression it wraps): one level deeper than `inner`. */
function wrapping(head: Out, inner: readonly Out[]): Out {
  const first = inner[0];
  const depth = (first ? (wrapDepth.get(first) ?? 0) : 0) + 1;
  if (depth > MAX_SQL_NESTING) tooDeep(head.origin);
  wrapDepth.set(head, depth);
  return head;
}

export function rewrite(tokens: Token[], strings: string[]): Out[] {
  const out: Out[] = [];
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (t.type === "string") {
      out.push(stringOut(t.value, strings, t));
      i++;
      continue;
    }
    // numbers the parser cannot read: `.25`, `1.5e3`
    if (t.type === "number" && (t.text.startsWith(".") || /[eE]/.test(t.text)) && !/^0[xX]/.test(t.text)) {
      out.push(synth("__qes_float", t), punct("(", t), stringOut(t.text, strings, t), punct(")", t));
      i++;
      continue;
    }
    // INTERVAL n UNIT (the parser knows only some units)
    if (isWord(t, "INTERVAL")) {
      let end = i + 1;
      if (tokens[end]?.value === "-" || tokens[end]?.value === "+") end++;
      if (tokens[end]?.value === "(") end = matching(tokens, end) + 1;
      else end++;
      const unit = tokens[end];
      if (unit?.type === "ident") {
        out.push(synth("__qes_interval", t), punct("(", t), ...rewrite(tokens.slice(i + 1, end), strings));
        out.push(punct(",", unit), stringOut(unit.value, strings, unit), punct(")", unit));
        i = end + 1;
        continue;
      }
    }
    // EXTRACT(part FROM e)
    if (
      isWord(t, "EXTRACT") &&
      next?.value === "(" &&
      tokens[i + 2]?.type === "ident" &&
      isWord(tokens[i + 3], "FROM")
    ) {
      const close = matching(tokens, i + 1);
      out.push(
        synth("__qes_extract", t),
        punct("(", t),
        stringOut(tokens[i + 2]!.value, strings, tokens[i + 2]!),
        punct(",", t),
      );
      out.push(...rewrite(tokens.slice(i + 4, close), strings), punct(")", tokens[close]!));
      i = close + 1;
      continue;
    }
    // ARRAY(SELECT …), ARRAY<T>[…], and array literals […]
    if (
      (isWord(t, "ARRAY") && next?.value === "(" && isWord(tokens[i + 2], "SELECT")) ||
      (isWord(t, "ARRAY") && next?.value === "(" && isWord(tokens[i + 2], "WITH"))
    ) {
      const close = matching(tokens, i + 1);
      out.push(
        synth("__qes_array_subquery", t),
        punct("(", t),
        punct("(", t),
        ...rewrite(tokens.slice(i + 2, close), strings),
        punct(")", t),
        punct(")", tokens[close]!),
      );
      i = close + 1;
      continue;
    }
    if (isWord(t, "ARRAY") && next?.value === "<") {
      let k = i + 2;
      let depth = 1;
      for (; k < tokens.length && depth > 0; k++) {
        if (tokens[k]!.value === "<") depth++;
        if (tokens[k]!.value === ">") depth--;
        if (tokens[k]!.value === ">>") depth -= 2;
      }
      const typeText = tokens
        .slice(i + 2, k - 1)
        .map((x) => x.text)
        .join(" ");
      if (tokens[k]?.value === "[") {
        const close = matching(tokens, k);
        out.push(synth("__qes_array_typed", t), punct("(", t), stringOut(typeText, strings, t));
        for (const part of splitTopLevel(tokens.slice(k + 1, close)))
          if (part.length) out.push(punct(",", t), ...rewrite(part, strings));
        out.push(punct(")", tokens[close]!));
        i = close + 1;
        continue;
      }
    }
    if (t.type === "punct" && t.value === "[" && !isPrimaryEnd(out[out.length - 1])) {
      const close = matching(tokens, i);
      out.push(synth("__qes_array", t), punct("(", t));
      splitTopLevel(tokens.slice(i + 1, close)).forEach((part, n) => {
        if (part.length === 0) return;
        if (n > 0) out.push(punct(",", t));
        out.push(...rewrite(part, strings));
      });
      out.push(punct(")", tokens[close]!));
      i = close + 1;
      continue;
    }
    // ARRAY_AGG / STRING_AGG with modifiers
    if (t.type === "ident" && (t.value === "ARRAY_AGG" || t.value === "STRING_AGG") && next?.value === "(") {
      const close = matching(tokens, i + 1);
      out.push(...aggregateCall(t, tokens.slice(i + 2, close), strings));
      out.push(punct(")", tokens[close]!));
      i = close + 1;
      continue;
    }
    // subscripts
    if (t.type === "punct" && t.value === "[" && isPrimaryEnd(out[out.length - 1])) {
      const close = matching(tokens, i);
      const inner = tokens.slice(i + 1, close);
      let mode = "OFFSET";
      let index = inner;
      const first = inner[0];
      if (
        first?.type === "ident" &&
        (SUBSCRIPT_MODES as readonly string[]).includes(first.value) &&
        inner[1]?.value === "(" &&
        matching(inner, 1) === inner.length - 1
      ) {
        mode = first.value;
        index = inner.slice(2, -1);
      }
      const start = primaryStart(out);
      const primary = out.splice(start);
      const sub: Out[] = [
        wrapping(synth("__qes_subscript", t), primary),
        punct("(", t),
        ...primary,
        punct(",", t),
        synth(String(SUBSCRIPT_MODES.indexOf(mode as (typeof SUBSCRIPT_MODES)[number])), t),
        punct(",", t),
        ...rewrite(index, strings),
        punct(")", tokens[close]!),
      ];
      i = close + 1;
      const fields: Token[] = [];
      while (
        tokens[i]?.value === "." &&
        (tokens[i + 1]?.type === "ident" || tokens[i + 1]?.type === "quoted_ident")
      ) {
        fields.push(tokens[i + 1]!);
        i += 2;
      }
      if (fields.length) {
        out.push(wrapping(synth("__qes_path", t), sub), punct("(", t), ...sub);
        for (const f of fields)
          out.push(punct(",", f), stringOut(f.type === "ident" ? f.text : f.value, strings, f));
        out.push(punct(")", t));
      } else {
        out.push(...sub);
      }
      continue;
    }
    // NULLS FIRST | NULLS LAST
    if (isWord(t, "NULLS") && (isWord(next, "FIRST") || isWord(next, "LAST"))) {
      let end = out.length;
      const dir = out[end - 1];
      const hasDir = isWord(dir, "ASC") || isWord(dir, "DESC");
      if (hasDir) end--;
      const start = operandStart(out, end, new Set([",", "BY"]));
      const item = out.slice(start, end);
      const tail = hasDir ? [dir!] : [];
      out.splice(
        start,
        out.length - start,
        wrapping(synth(`__qes_nulls_${next!.value.toLowerCase()}`, t), item),
        punct("(", t),
        ...item,
        punct(")", t),
        ...tail,
      );
      i += 2;
      continue;
    }
    // IS [NOT] DISTINCT FROM
    if (isWord(t, "IS")) {
      const not = isWord(next, "NOT");
      const d = tokens[i + (not ? 2 : 1)];
      const f = tokens[i + (not ? 3 : 2)];
      if (isWord(d, "DISTINCT") && isWord(f, "FROM")) {
        const start = operandStart(out, out.length, OPERAND_BOUNDARY);
        const left = out.splice(start);
        const rightStart = i + (not ? 4 : 3);
        const rightEnd = operandEnd(tokens, rightStart);
        const right = rewrite(tokens.slice(rightStart, rightEnd), strings);
        out.push(
          wrapping(synth(not ? "__qes_is_not_distinct" : "__qes_is_distinct", t), left),
          punct("(", t),
          ...left,
          punct(",", t),
          ...right,
          punct(")", t),
        );
        i = rightEnd;
        continue;
      }
    }
    // e AT TIME ZONE z
    if (
      isWord(t, "AT") &&
      isWord(next, "TIME") &&
      isWord(tokens[i + 2], "ZONE") &&
      isPrimaryEnd(out[out.length - 1])
    ) {
      const start = primaryStart(out);
      const left = out.splice(start);
      const zoneEnd = operandEnd(tokens, i + 3);
      const zone = rewrite(tokens.slice(i + 3, zoneEnd), strings);
      out.push(
        wrapping(synth("__qes_at_time_zone", t), left),
        punct("(", t),
        ...left,
        punct(",", t),
        ...zone,
        punct(")", t),
      );
      i = zoneEnd;
      continue;
    }
    out.push(tok(t));
    i++;
  }
  return out;
}
