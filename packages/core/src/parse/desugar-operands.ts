import { rewrite } from "./desugar-constructs.ts";
import type { Token } from "./lex-sql.ts";
import { isWord, type Out, punct, splitTopLevel, stringOut, synth } from "./token-scan.ts";

/** Words after which `[` starts an array literal, not a subscript. */
export const NOT_A_PRIMARY = new Set([
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
export const OPERAND_BOUNDARY = new Set([
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

export function isPrimaryEnd(o: Out | undefined): boolean {
  if (!o) return false;
  if (o.kind === "quoted_ident" || o.kind === "param") return true;
  if (o.kind === "ident") return !NOT_A_PRIMARY.has(o.value);
  if (o.kind === "synthetic") return false;
  return o.value === ")";
}

/** `DATE '2024-01-01'`: a type's name before a string is one value, the literal, not a value and its alias */
const TYPED_LITERAL = ["DATE", "DATETIME", "TIMESTAMP", "TIME", "NUMERIC", "BIGNUMERIC", "JSON"];

/** Whether `out` ends in a typed literal (`TIMESTAMP '…'`), a primary isPrimaryEnd cannot tell from its string alone. */
export function endsTypedLiteral(out: Out[]): boolean {
  const k = out.length - 1;
  return out[k]?.kind === "string" && TYPED_LITERAL.some((w) => isWord(out[k - 1], w));
}

/** Start (in `out`) of the primary expression that ends at the end of `out`. */
export function primaryStart(out: Out[]): number {
  let k = out.length - 1;
  // TIMESTAMP '…' AT TIME ZONE z: the literal starts at its type's name
  if (endsTypedLiteral(out)) return k - 1;
  // CASE … END: the primary starts at its CASE (nested CASEs balance like brackets)
  if (out[k]?.kind === "ident" && out[k]!.value === "END") {
    let depth = 0;
    for (; k >= 0; k--) {
      const o = out[k]!;
      if (o.kind !== "ident") continue;
      if (o.value === "END") depth++;
      else if (o.value === "CASE" && --depth === 0) return k;
    }
    return 0;
  }
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
export function operandStart(out: Out[], end: number, boundary: Set<string>): number {
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
export function operandEnd(tokens: Token[], start: number): number {
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
      !isWord(tokens[k - 2], "INTERVAL") &&
      !(t.type === "string" && TYPED_LITERAL.some((w) => isWord(tokens[k - 1], w)))
    )
      return k;
  }
  return tokens.length;
}

export function endsValue(t: Token): boolean {
  return (
    t.type === "string" ||
    t.type === "number" ||
    t.type === "param" ||
    t.type === "quoted_ident" ||
    (t.type === "ident" && !OPERAND_BOUNDARY.has(t.value) && t.value !== "INTERVAL") ||
    (t.type === "punct" && (t.value === ")" || t.value === "]"))
  );
}

export function startsValue(t: Token): boolean {
  return (
    t.type === "ident" ||
    t.type === "quoted_ident" ||
    t.type === "string" ||
    t.type === "number" ||
    t.type === "param"
  );
}

/**
 * `ARRAY_AGG([DISTINCT] x [IGNORE|RESPECT NULLS] [ORDER BY k [ASC|DESC] [NULLS …], …] [LIMIT n])`
 * → `__qes_array_agg('<flags>', x, __qes_order(k, '<ASC|DESC>', '<FIRST|LAST|>')…, __qes_limit(n))`.
 */
export function aggregateCall(name: Token, args: Token[], strings: string[]): Out[] {
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
