import { QesError } from "../errors.ts";

/**
 * A BigQuery lexer: strings (all quote styles, raw, escapes), comments, identifiers, numbers,
 * parameters and punctuation, each with its position. The desugaring pass works on these tokens,
 * so no rewrite ever looks inside a string or a comment.
 */
export type TokenType = "ident" | "quoted_ident" | "string" | "number" | "param" | "punct" | "eof";

export interface Token {
  type: TokenType;
  /** source text (for strings: the decoded value is in `value`) */
  text: string;
  /** decoded string value; upper-cased word for identifiers */
  value: string;
  offset: number;
  line: number;
  column: number;
}

const PUNCT3 = new Set([">>=", "<<="]);
const PUNCT2 = new Set(["<=", ">=", "<>", "!=", "||", "<<", ">>", "=>", "::"]);
const PUNCT1 = new Set([..."(),.;[]{}+-*/%<>=!~&|^:?"]);

export function lexSql(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const err = (message: string, at: number): never => {
    const { l, c } = position(at);
    throw new QesError("sql_syntax", `${message} (line ${l}, column ${c}).`, { line: l, column: c });
  };
  const position = (at: number) => {
    // positions are computed from the running line counter for the token start
    return { l: line, c: at - lineStart + 1 };
  };
  const advanceLines = (from: number, to: number) => {
    for (let k = from; k < to; k++) {
      if (sql.charCodeAt(k) === 10) {
        line++;
        lineStart = k + 1;
      }
    }
  };
  const push = (
    type: TokenType,
    start: number,
    end: number,
    value: string,
    startLine: number,
    startCol: number,
  ) => {
    tokens.push({
      type,
      text: sql.slice(start, end),
      value,
      offset: start,
      line: startLine,
      column: startCol,
    });
  };

  while (i < sql.length) {
    const ch = sql[i]!;
    const startLine = line;
    const startCol = i - lineStart + 1;
    // whitespace
    if (/\s/.test(ch)) {
      advanceLines(i, i + 1);
      i++;
      continue;
    }
    // comments
    if ((ch === "-" && sql[i + 1] === "-") || ch === "#") {
      while (i < sql.length && sql[i] !== "\n") i++;
      continue;
    }
    if (ch === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) err("Unterminated comment", i);
      advanceLines(i, end + 2);
      i = end + 2;
      continue;
    }
    // string literals, with optional r/b prefixes
    const prefix = /^(?:[rR][bB]?|[bB][rR]?)(?=['"])/.exec(sql.slice(i, i + 3))?.[0] ?? "";
    if (ch === "'" || ch === '"' || prefix) {
      const start = i;
      const raw = prefix.toLowerCase().includes("r");
      if (prefix.toLowerCase().includes("b")) err("BYTES literals are not supported", i);
      i += prefix.length;
      const q = sql[i]!;
      const triple = sql.slice(i, i + 3) === q.repeat(3);
      const delim = triple ? q.repeat(3) : q;
      i += delim.length;
      let value = "";
      for (;;) {
        if (i >= sql.length) err("Unterminated string literal", start);
        const c = sql[i]!;
        // A doubled quote inside a one-quote string is that quote (`'it''s'`): how Supabase Studio
        // escapes a searched text (its analyticsLiteral), read so by the reference platform's
        // parser; BigQuery refuses it. A departure, docs/compiler.md.
        if (!triple && c === q && sql[i + 1] === q) {
          value += q;
          i += 2;
          continue;
        }
        if (sql.startsWith(delim, i)) {
          i += delim.length;
          break;
        }
        if (c === "\n" && !triple) err("Unterminated string literal", start);
        if (c === "\\") {
          const next = sql[i + 1];
          if (next === undefined) err("Unterminated string literal", start);
          if (raw) {
            value += c + next;
            i += 2;
            continue;
          }
          // An escape BigQuery does not know (`\s`, `\d`) is the backslash and the character: the
          // regex its author meant (a departure, docs/compiler.md); a malformed known one
          // (`\x4`, `\u12`) is still an error.
          if (!KNOWN_ESCAPE_START.test(next!)) {
            value += c + next;
            i += 2;
            continue;
          }
          const decoded = decodeEscape(sql, i);
          if (!decoded) err(`Invalid escape sequence \\${next}`, i);
          // No engine takes a NUL (PostgreSQL's protocol cannot carry one): refused here, like a
          // NUL byte in a parameter, so both engines answer the same 4xx.
          if (decoded!.text === "\0") {
            const { l, c } = position(i);
            throw new QesError(
              "sql_invalid",
              `The escape \\${next}… spells a NUL character, which no string may hold (line ${l}, column ${c}).`,
              { line: l, column: c },
            );
          }
          value += decoded!.text;
          i = decoded!.end;
          continue;
        }
        value += c;
        i++;
      }
      push("string", start, i, value, startLine, startCol);
      advanceLines(start, i);
      continue;
    }
    if (ch === "`") {
      const start = i;
      i++;
      let value = "";
      while (sql[i] !== "`") {
        if (i >= sql.length || sql[i] === "\n") err("Unterminated quoted identifier", start);
        if (sql[i] === "\\" && sql[i + 1] !== undefined) {
          value += sql[i + 1];
          i += 2;
          continue;
        }
        value += sql[i];
        i++;
      }
      i++;
      push("quoted_ident", start, i, value, startLine, startCol);
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const start = i;
      while (i < sql.length && /[A-Za-z0-9_]/.test(sql[i]!)) i++;
      const text = sql.slice(start, i);
      push("ident", start, i, text.toUpperCase(), startLine, startCol);
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      const start = i;
      if (ch === "0" && /[xX]/.test(sql[i + 1] ?? "")) {
        i += 2;
        while (/[0-9A-Fa-f]/.test(sql[i] ?? "")) i++;
      } else {
        while (/[0-9]/.test(sql[i] ?? "")) i++;
        if (sql[i] === "." && /[0-9eE]/.test(sql[i + 1] ?? "") === true) i++;
        else if (sql[i] === "." && !/[A-Za-z_]/.test(sql[i + 1] ?? "")) i++;
        while (/[0-9]/.test(sql[i] ?? "")) i++;
        if (/[eE]/.test(sql[i] ?? "") && /[-+0-9]/.test(sql[i + 1] ?? "")) {
          i += 2;
          while (/[0-9]/.test(sql[i] ?? "")) i++;
        }
      }
      push("number", start, i, sql.slice(start, i), startLine, startCol);
      continue;
    }
    if (ch === "@") {
      const start = i;
      if (sql[i + 1] === "@") err("System variables (@@name) are not allowed", i);
      i++;
      if (sql[i] === "`") {
        const end = sql.indexOf("`", i + 1);
        if (end < 0) err("Unterminated quoted parameter name", start);
        i = end + 1;
        push("param", start, i, sql.slice(start + 2, end), startLine, startCol);
        continue;
      }
      while (i < sql.length && /[A-Za-z0-9_]/.test(sql[i]!)) i++;
      if (i === start + 1) err("Expected a parameter name after @", start);
      push("param", start, i, sql.slice(start + 1, i), startLine, startCol);
      continue;
    }
    const three = sql.slice(i, i + 3);
    const two = sql.slice(i, i + 2);
    if (PUNCT3.has(three)) {
      push("punct", i, i + 3, three, startLine, startCol);
      i += 3;
      continue;
    }
    if (PUNCT2.has(two)) {
      push("punct", i, i + 2, two, startLine, startCol);
      i += 2;
      continue;
    }
    if (PUNCT1.has(ch)) {
      push("punct", i, i + 1, ch, startLine, startCol);
      i++;
      continue;
    }
    err(`Unexpected character '${ch}'`, i);
  }
  tokens.push({
    type: "eof",
    text: "",
    value: "",
    offset: sql.length,
    line,
    column: sql.length - lineStart + 1,
  });
  return tokens;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\u0007",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "?": "?",
  '"': '"',
  "'": "'",
  "`": "`",
};

/** Characters that start one of BigQuery's escape sequences after a backslash. */
const KNOWN_ESCAPE_START = /^[abfnrtv\\?"'`xXuU0-7]$/;

/** BigQuery's escape sequences in (non-raw) string literals. */
function decodeEscape(sql: string, at: number): { text: string; end: number } | undefined {
  const c = sql[at + 1]!;
  if (c in SIMPLE_ESCAPES) return { text: SIMPLE_ESCAPES[c]!, end: at + 2 };
  const hex = (len: number, from: number) => {
    const digits = sql.slice(from, from + len);
    if (digits.length !== len || !/^[0-9A-Fa-f]+$/.test(digits)) return undefined;
    const code = Number.parseInt(digits, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
    return { text: String.fromCodePoint(code), end: from + len };
  };
  if (c === "x" || c === "X") return hex(2, at + 2);
  if (c === "u") return hex(4, at + 2);
  if (c === "U") return hex(8, at + 2);
  if (/[0-7]/.test(c)) {
    const digits = sql.slice(at + 1, at + 4);
    if (!/^[0-7]{3}$/.test(digits)) return undefined;
    return { text: String.fromCharCode(Number.parseInt(digits, 8)), end: at + 4 };
  }
  return undefined;
}
