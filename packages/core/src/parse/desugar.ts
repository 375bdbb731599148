import { QesError } from "../errors.ts";
import { lexSql, type Token } from "./lex-sql.ts";

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
}

export const INTERNAL_PREFIX = "__QES_";
export const STRING_PLACEHOLDER = "__qes_s";
export const SUBSCRIPT_MODES = ["OFFSET", "ORDINAL", "SAFE_OFFSET", "SAFE_ORDINAL"] as const;

interface Out {
  text: string;
  kind: Token["type"] | "synthetic";
  /** upper-cased word for identifiers and punctuation */
  value: string;
  origin: Token;
}

/** Words after which `[` starts an array literal, not a subscript. */
const NOT_A_PRIMARY = new Set([
  "ARRAY",
  "IN",
  "UNNEST",
  "SELECT",
  "AND",
  "OR",
  "NOT",
  "WHEN",
  "THEN",
  "ELSE",
  "CASE",
  "BY",
  "ON",
  "AS",
  "FROM",
  "WHERE",
  "HAVING",
  "QUALIFY",
  "RETURN",
  "LIKE",
  "IS",
  "BETWEEN",
  "DISTINCT",
  "ALL",
  "ANY",
  "SOME",
  "EXISTS",
  "INTERVAL",
  "LIMIT",
  "OFFSET",
]);

/** Tokens that end an operand of a comparison (scanning either way, at nesting depth 0). */
const OPERAND_BOUNDARY = new Set([
  "AND",
  "OR",
  "NOT",
  "WHEN",
  "THEN",
  "ELSE",
  "CASE",
  "END",
  "WHERE",
  "ON",
  "HAVING",
  "SELECT",
  "QUALIFY",
  "FROM",
  "GROUP",
  "ORDER",
  "LIMIT",
  "BY",
  "AS",
  "ASC",
  "DESC",
  "IS",
  "IN",
  "LIKE",
  "BETWEEN",
  "UNION",
  "EXCEPT",
  "INTERSECT",
  "JOIN",
  "CROSS",
  "LEFT",
  "RIGHT",
  "INNER",
  "FULL",
  "WINDOW",
  "NULLS",
  ",",
  ";",
  "=",
  "!=",
  "<>",
  "<",
  ">",
  "<=",
  ">=",
]);

export function desugarSql(sql: string): DesugaredSql {
  const tokens = lexSql(sql);
  for (const t of tokens) {
    if (
      (t.type === "ident" || t.type === "quoted_ident") &&
      t.value.toUpperCase().startsWith(INTERNAL_PREFIX)
    ) {
      throw new QesError("sql_invalid", `Names starting with __qes_ are reserved (${t.text}).`, {
        line: t.line,
        column: t.column,
      });
    }
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
  return {
    text,
    strings,
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

function needsSpace(a: Out, b: Out): boolean {
  if (b.value === "." || b.value === "," || b.value === ")" || b.value === "]") return false;
  if (a.value === "." || a.value === "(" || a.value === "[") return false;
  if (b.value === "(" && a.kind === "synthetic") return false;
  return true;
}

const tok = (o: Token): Out => ({
  text: o.type === "ident" ? o.text : o.text,
  kind: o.type,
  value: o.type === "ident" || o.type === "punct" ? o.value.toUpperCase() : o.value,
  origin: o,
});
const synth = (text: string, origin: Token): Out => ({
  text,
  kind: "synthetic",
  value: text.toUpperCase(),
  origin,
});
const punct = (p: string, origin: Token): Out => ({ text: p, kind: "punct", value: p, origin });

function stringOut(value: string, strings: string[], origin: Token): Out {
  strings.push(value);
  return { text: `'${STRING_PLACEHOLDER}${strings.length - 1}'`, kind: "string", value, origin };
}

function isWord(t: Token | Out | undefined, word: string): boolean {
  return (
    !!t &&
    (t as Token).type !== "string" &&
    (t as Out).kind !== "string" &&
    t.value.toUpperCase() === word &&
    ((t as Token).type === "ident" || (t as Out).kind === "ident")
  );
}

/** Index of the token closing the bracket opened at `open` (tokens[open] is `(` or `[`). */
function matching(tokens: Token[], open: number): number {
  const o = tokens[open]!.value;
  const c = o === "(" ? ")" : "]";
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type !== "punct") continue;
    if (t.value === o) depth++;
    else if (t.value === c) {
      depth--;
      if (depth === 0) return i;
    }
  }
  throw new QesError(
    "sql_syntax",
    `Unbalanced "${o}" (line ${tokens[open]!.line}, column ${tokens[open]!.column}).`,
    {
      line: tokens[open]!.line,
      column: tokens[open]!.column,
    },
  );
}

function rewrite(tokens: Token[], strings: string[]): Out[] {
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
        synth("__qes_subscript", t),
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
        out.push(synth("__qes_path", t), punct("(", t), ...sub);
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
        synth(`__qes_nulls_${next!.value.toLowerCase()}`, t),
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
          synth(not ? "__qes_is_not_distinct" : "__qes_is_distinct", t),
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
      out.push(synth("__qes_at_time_zone", t), punct("(", t), ...left, punct(",", t), ...zone, punct(")", t));
      i = zoneEnd;
      continue;
    }
    out.push(tok(t));
    i++;
  }
  return out;
}

function isPrimaryEnd(o: Out | undefined): boolean {
  if (!o) return false;
  if (o.kind === "quoted_ident" || o.kind === "param") return true;
  if (o.kind === "ident") return !NOT_A_PRIMARY.has(o.value);
  if (o.kind === "synthetic") return false;
  return o.value === ")";
}

/** Start (in `out`) of the primary expression that ends at the end of `out`. */
function primaryStart(out: Out[]): number {
  let k = out.length - 1;
  if (out[k]?.value === ")") {
    let depth = 0;
    for (; k >= 0; k--) {
      const v = out[k]!.kind === "punct" || out[k]!.kind === "synthetic" ? out[k]!.value : "";
      if (v === ")") depth++;
      else if (v === "(") {
        depth--;
        if (depth === 0) break;
      }
    }
    const before = out[k - 1];
    if (
      before &&
      (before.kind === "synthetic" || (before.kind === "ident" && !NOT_A_PRIMARY.has(before.value)))
    )
      k--;
    else return k;
  }
  while (
    k >= 2 &&
    out[k - 1]?.value === "." &&
    (out[k - 2]?.kind === "ident" || out[k - 2]?.kind === "quoted_ident")
  )
    k -= 2;
  return k;
}

/** Start of the operand that ends at `end`, scanning back to a boundary at depth 0. */
function operandStart(out: Out[], end: number, boundary: Set<string>): number {
  let depth = 0;
  for (let k = end - 1; k >= 0; k--) {
    const o = out[k]!;
    const v = o.kind === "string" ? "" : o.value;
    if (v === ")" || v === "]") depth++;
    else if (v === "(" || v === "[") {
      if (depth === 0) return k + 1;
      depth--;
    } else if (depth === 0 && o.kind !== "quoted_ident" && boundary.has(v)) return k + 1;
  }
  return 0;
}

/** End (exclusive) of the operand that starts at `start`. */
function operandEnd(tokens: Token[], start: number): number {
  let depth = 0;
  for (let k = start; k < tokens.length; k++) {
    const t = tokens[k]!;
    const v = t.type === "ident" || t.type === "punct" ? t.value : "";
    if (v === "(" || v === "[") depth++;
    else if (v === ")" || v === "]") {
      if (depth === 0) return k;
      depth--;
    } else if (depth === 0 && k > start && OPERAND_BOUNDARY.has(v)) return k;
    // Two values side by side: the second is an alias (`a IS DISTINCT FROM b alias`).
    else if (
      depth === 0 &&
      k > start &&
      endsValue(tokens[k - 1]!) &&
      startsValue(t) &&
      !isWord(tokens[k - 2], "INTERVAL")
    )
      return k;
  }
  return tokens.length;
}

function endsValue(t: Token): boolean {
  return (
    t.type === "string" ||
    t.type === "number" ||
    t.type === "param" ||
    t.type === "quoted_ident" ||
    (t.type === "ident" && !OPERAND_BOUNDARY.has(t.value) && t.value !== "INTERVAL") ||
    (t.type === "punct" && (t.value === ")" || t.value === "]"))
  );
}

function startsValue(t: Token): boolean {
  return (
    t.type === "ident" ||
    t.type === "quoted_ident" ||
    t.type === "string" ||
    t.type === "number" ||
    t.type === "param"
  );
}

/** Splits tokens at depth-0 commas. */
function splitTopLevel(tokens: Token[], sep = ","): Token[][] {
  const parts: Token[][] = [];
  let cur: Token[] = [];
  let depth = 0;
  for (const t of tokens) {
    if (t.type === "punct" && (t.value === "(" || t.value === "[")) depth++;
    if (t.type === "punct" && (t.value === ")" || t.value === "]")) depth--;
    if (depth === 0 && t.type === "punct" && t.value === sep) {
      parts.push(cur);
      cur = [];
    } else cur.push(t);
  }
  if (cur.length || parts.length) parts.push(cur);
  return parts;
}

/**
 * `ARRAY_AGG([DISTINCT] x [IGNORE|RESPECT NULLS] [ORDER BY k [ASC|DESC] [NULLS …], …] [LIMIT n])`
 * → `__qes_array_agg('<flags>', x, __qes_order(k, '<ASC|DESC>', '<FIRST|LAST|>')…, __qes_limit(n))`.
 */
function aggregateCall(name: Token, args: Token[], strings: string[]): Out[] {
  const flags: string[] = [];
  let body = args;
  if (isWord(body[0], "DISTINCT")) {
    flags.push("DISTINCT");
    body = body.slice(1);
  }
  const at = (word: string, second?: string) => {
    let depth = 0;
    for (let k = 0; k < body.length; k++) {
      const t = body[k]!;
      if (t.type === "punct" && (t.value === "(" || t.value === "[")) depth++;
      if (t.type === "punct" && (t.value === ")" || t.value === "]")) depth--;
      if (depth === 0 && isWord(t, word) && (!second || isWord(body[k + 1], second))) return k;
    }
    return -1;
  };
  let limit: Token[] | undefined;
  const limitAt = at("LIMIT");
  if (limitAt >= 0) {
    limit = body.slice(limitAt + 1);
    body = body.slice(0, limitAt);
  }
  let order: Token[] | undefined;
  const orderAt = at("ORDER", "BY");
  if (orderAt >= 0) {
    order = body.slice(orderAt + 2);
    body = body.slice(0, orderAt);
  }
  for (const word of ["IGNORE", "RESPECT"]) {
    const k = at(word, "NULLS");
    if (k >= 0) {
      if (word === "IGNORE") flags.push("IGNORE_NULLS");
      body = [...body.slice(0, k), ...body.slice(k + 2)];
    }
  }
  const fn = name.value === "ARRAY_AGG" ? "__qes_array_agg" : "__qes_string_agg";
  const out: Out[] = [synth(fn, name), punct("(", name), stringOut(flags.join(","), strings, name)];
  for (const arg of splitTopLevel(body)) {
    if (arg.length === 0) continue;
    out.push(punct(",", name), ...rewrite(arg, strings));
  }
  for (const key of order ? splitTopLevel(order) : []) {
    let k = key;
    let nulls = "";
    if (
      isWord(k[k.length - 2], "NULLS") &&
      (isWord(k[k.length - 1], "FIRST") || isWord(k[k.length - 1], "LAST"))
    ) {
      nulls = k[k.length - 1]!.value;
      k = k.slice(0, -2);
    }
    let dir = "ASC";
    if (isWord(k[k.length - 1], "ASC") || isWord(k[k.length - 1], "DESC")) {
      dir = k[k.length - 1]!.value;
      k = k.slice(0, -1);
    }
    out.push(punct(",", name), synth("__qes_order", name), punct("(", name), ...rewrite(k, strings));
    out.push(
      punct(",", name),
      stringOut(dir, strings, name),
      punct(",", name),
      stringOut(nulls, strings, name),
      punct(")", name),
    );
  }
  if (limit)
    out.push(
      punct(",", name),
      synth("__qes_limit", name),
      punct("(", name),
      ...rewrite(limit, strings),
      punct(")", name),
    );
  return out;
}

/** The parser reads QUALIFY only after WHERE: add `WHERE TRUE` where a query has none. */
function qualifyWithoutWhere(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let q = result.length - 1; q >= 0; q--) {
    if (!isWord(result[q], "QUALIFY")) continue;
    let depth = 0;
    let hasWhere = false;
    let insertAt = q;
    for (let k = q - 1; k >= 0; k--) {
      const t = result[k]!;
      if (t.type === "punct" && t.value === ")") depth++;
      else if (t.type === "punct" && t.value === "(") {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0) {
        if (isWord(t, "WHERE")) hasWhere = true;
        if (isWord(t, "GROUP") || isWord(t, "HAVING") || isWord(t, "WINDOW")) insertAt = k;
        if (isWord(t, "SELECT")) break;
      }
    }
    if (!hasWhere) {
      const at = result[insertAt]!;
      const where: Token = { ...at, type: "ident", text: "WHERE", value: "WHERE" };
      const truth: Token = { ...at, type: "ident", text: "TRUE", value: "TRUE" };
      result.splice(insertAt, 0, where, truth);
    }
  }
  return result;
}

/** `FROM (a JOIN b ON …) JOIN c` reads as `FROM a JOIN b ON … JOIN c` (left-deep, same rows). */
function parenthesisedJoins(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let k = 0; k < result.length - 1; k++) {
    if (!isWord(result[k], "FROM") || result[k + 1]?.value !== "(" || result[k + 1]?.type !== "punct")
      continue;
    const inner = result[k + 2];
    if (!inner || isWord(inner, "SELECT") || isWord(inner, "WITH") || inner.value === "(") continue;
    const close = matching(result, k + 1);
    const body = result.slice(k + 2, close);
    const hasJoin = body.some((t) => isWord(t, "JOIN"));
    if (!hasJoin) continue;
    result.splice(close, 1);
    result.splice(k + 1, 1);
  }
  return result;
}

const JOIN_BOUNDARY = new Set([
  "JOIN",
  "CROSS",
  "LEFT",
  "RIGHT",
  "INNER",
  "FULL",
  "WHERE",
  "GROUP",
  "HAVING",
  "QUALIFY",
  "WINDOW",
  "ORDER",
  "LIMIT",
  "UNION",
  "EXCEPT",
  "INTERSECT",
]);

const synthToken = (at: Token, text: string): Token => ({
  ...at,
  type: "ident",
  text,
  value: text.toUpperCase(),
});
const synthPunct = (at: Token, text: string): Token => ({ ...at, type: "punct", text, value: text });

/**
 * `X [INNER] JOIN (Y … JOIN Z ON c1) ON c` reads as `X JOIN Y ON TRUE … JOIN Z ON (c1) AND (c)`:
 * for inner joins the grouping does not change the rows. Outer joins of a group are refused.
 */
function joinGroups(tokens: Token[]): Token[] {
  let result = [...tokens];
  for (let k = 0; k < result.length - 1; k++) {
    if (!isWord(result[k], "JOIN") || result[k + 1]?.value !== "(" || result[k + 1]?.type !== "punct")
      continue;
    const first = result[k + 2];
    if (!first || isWord(first, "SELECT") || isWord(first, "WITH") || first.value === "(") continue;
    const close = matching(result, k + 1);
    if (!isWord(result[close + 1], "ON")) continue;
    const before = result[k - 1];
    if (
      isWord(before, "LEFT") ||
      isWord(before, "RIGHT") ||
      isWord(before, "FULL") ||
      isWord(before, "OUTER")
    ) {
      throw new QesError("sql_invalid", "A parenthesised join group may follow only an inner JOIN.", {
        line: result[k]!.line,
        column: result[k]!.column,
      });
    }
    // the outer ON condition: up to the next join or clause at depth 0
    let end = close + 2;
    let depth = 0;
    for (; end < result.length; end++) {
      const t = result[end]!;
      if (t.type === "punct" && t.value === "(") depth++;
      else if (t.type === "punct" && t.value === ")") {
        if (depth === 0) break;
        depth--;
      } else if (
        depth === 0 &&
        ((t.type === "punct" && (t.value === "," || t.value === ";")) ||
          (t.type === "ident" && JOIN_BOUNDARY.has(t.value)))
      )
        break;
    }
    const outerOn = result.slice(close + 2, end);
    const inner = result.slice(k + 2, close);
    if (
      inner.some(
        (t, i) => (isWord(t, "LEFT") || isWord(t, "RIGHT") || isWord(t, "FULL")) && isDepthZero(inner, i),
      )
    ) {
      throw new QesError("sql_invalid", "Outer joins inside a parenthesised join group are not supported.", {
        line: result[k]!.line,
        column: result[k]!.column,
      });
    }
    const at = result[k]!;
    // find the last depth-0 join of the group, to attach the outer condition to it
    let lastJoin = -1;
    for (let i = 0; i < inner.length; i++)
      if (isDepthZero(inner, i) && (isWord(inner[i], "JOIN") || inner[i]!.value === ",")) lastJoin = i;
    let rewritten: Token[];
    const cond = [synthPunct(at, "("), ...outerOn, synthPunct(at, ")")];
    if (lastJoin < 0) {
      rewritten = [...inner, synthToken(at, "ON"), ...cond];
    } else {
      // the first item joins ON TRUE; the last join gets the outer condition
      let firstEnd = 0;
      for (let i = 0; i < inner.length; i++) {
        const t = inner[i]!;
        if (
          isDepthZero(inner, i) &&
          (isWord(t, "JOIN") || isWord(t, "CROSS") || isWord(t, "INNER") || t.value === ",")
        ) {
          firstEnd = i;
          break;
        }
      }
      const head = [...inner.slice(0, firstEnd), synthToken(at, "ON"), synthToken(at, "TRUE")];
      const tail = inner.slice(firstEnd);
      const lastInTail = lastJoin - firstEnd;
      const lastHasOn = tail.some((t, i) => i > lastInTail && isWord(t, "ON") && isDepthZero(tail, i));
      let tailTokens: Token[];
      if (lastHasOn) tailTokens = [...tail, synthToken(at, "AND"), ...cond];
      else {
        // a CROSS JOIN / comma item becomes an inner JOIN … ON condition
        const prefix = tail
          .slice(0, lastInTail)
          .filter((_, i) => !(i === lastInTail - 1 && isWord(tail[i], "CROSS")));
        tailTokens = [
          ...prefix,
          synthToken(at, "JOIN"),
          ...tail.slice(lastInTail + 1),
          synthToken(at, "ON"),
          ...cond,
        ];
      }
      rewritten = [...head, ...tailTokens];
    }
    result = [...result.slice(0, k + 1), ...rewritten, ...result.slice(end)];
  }
  return result;
}

function isDepthZero(tokens: Token[], index: number): boolean {
  let depth = 0;
  for (let i = 0; i < index; i++) {
    const t = tokens[i]!;
    if (t.type === "punct" && (t.value === "(" || t.value === "[")) depth++;
    if (t.type === "punct" && (t.value === ")" || t.value === "]")) depth--;
  }
  return depth === 0;
}

/** `* EXCEPT (a) REPLACE (e AS b)` → `* REPLACE (e AS b, __qes_except AS a)`: one modifier for the parser. */
function starExceptReplace(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let k = 0; k < result.length - 2; k++) {
    if (result[k]!.value !== "*" || !isWord(result[k + 1], "EXCEPT") || result[k + 2]?.value !== "(")
      continue;
    const exceptClose = matching(result, k + 2);
    if (!isWord(result[exceptClose + 1], "REPLACE") || result[exceptClose + 2]?.value !== "(") continue;
    const replaceClose = matching(result, exceptClose + 2);
    const names = splitTopLevel(result.slice(k + 3, exceptClose));
    const replaced = result.slice(exceptClose + 3, replaceClose);
    const at = result[k + 1]!;
    const extra: Token[] = [];
    for (const n of names)
      extra.push(synthPunct(at, ","), synthToken(at, "__qes_except"), synthToken(at, "AS"), ...n);
    result.splice(
      k + 1,
      replaceClose - k,
      synthToken(at, "REPLACE"),
      synthPunct(at, "("),
      ...replaced,
      ...extra,
      synthPunct(at, ")"),
    );
  }
  return result;
}
