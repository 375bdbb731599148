/** Token helpers for the desugaring passes: brackets, words, splitting at depth 0. */
import { QesError } from "../errors.ts";
import { STRING_PLACEHOLDER } from "./desugar.ts";
import type { Token } from "./lex-sql.ts";

export interface Out {
  text: string;
  kind: Token["type"] | "synthetic";
  /** upper-cased word for identifiers and punctuation */
  value: string;
  origin: Token;
}

export const tok = (o: Token): Out => ({
  text: o.type === "quoted_ident" ? `\`${o.value}\`` : o.text,
  kind: o.type,
  value: o.type === "ident" || o.type === "punct" ? o.value.toUpperCase() : o.value,
  origin: o,
});

export const synth = (text: string, origin: Token): Out => ({
  text,
  kind: "synthetic",
  value: text.toUpperCase(),
  origin,
});

export const punct = (p: string, origin: Token): Out => ({ text: p, kind: "punct", value: p, origin });

export function stringOut(value: string, strings: string[], origin: Token): Out {
  strings.push(value);
  return { text: `'${STRING_PLACEHOLDER}${strings.length - 1}'`, kind: "string", value, origin };
}

export function isWord(t: Token | Out | undefined, word: string): boolean {
  return (
    !!t &&
    (t as Token).type !== "string" &&
    (t as Out).kind !== "string" &&
    t.value.toUpperCase() === word &&
    ((t as Token).type === "ident" || (t as Out).kind === "ident")
  );
}

/** Index of the token closing the bracket opened at `open` (tokens[open] is `(` or `[`). */
export function matching(tokens: Token[], open: number): number {
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

/** Splits tokens at depth-0 commas. */
export function splitTopLevel(tokens: Token[], sep = ","): Token[][] {
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

export const synthToken = (at: Token, text: string): Token => ({
  ...at,
  type: "ident",
  text,
  value: text.toUpperCase(),
});

export const synthPunct = (at: Token, text: string): Token => ({ ...at, type: "punct", text, value: text });

export function isDepthZero(tokens: Token[], index: number): boolean {
  let depth = 0;
  for (let i = 0; i < index; i++) {
    const t = tokens[i]!;
    if (t.type === "punct" && (t.value === "(" || t.value === "[")) depth++;
    if (t.type === "punct" && (t.value === ")" || t.value === "]")) depth--;
  }
  return depth === 0;
}
