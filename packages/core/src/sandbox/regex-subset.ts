import { re2Problem } from "./re2-check.ts";

/**
 * The RE2 subset every dialect can express (DESIGN.md §3). BigQuery and DuckDB run RE2;
 * PostgreSQL runs POSIX AREs, which share this subset once told to treat newlines as RE2 does
 * (each dialect binds patterns for its engine: `Dialect.bindPattern`). Everything else is refused here, before any backend runs: a pattern
 * that one engine would accept and another reject, or read differently, never reaches either.
 *
 * Accepted: literals, `.`, classes `[...]` (with POSIX `[:alpha:]` names), groups `(...)` and
 * `(?:...)`, alternation, quantifiers `* + ? {n} {n,} {n,m}` and their lazy forms, anchors
 * `^ $`, escapes `\d \D \s \S \w \W \b \B`, `\n \t \r \f \v`, `\xhh`, escaped punctuation, and
 * one leading case-insensitive flag `(?i)`. Not accepted though RE2 reads them, since PostgreSQL
 * refuses them: a `-` after a range or a class inside a class (`[\d-z]`, `[a-c-e]`) unless it is
 * last, and negated class names (`[[:^alpha:]]`). What passes is then compiled by RE2 itself
 * (`re2Problem`): class ranges, POSIX class names and the like are RE2's to judge.
 */
const PUNCTUATION_ESCAPES = new Set([..."\\.^$|?*+()[]{}/-!\"#%&',:;<=>@_`~ "]);
const CLASS_ESCAPES = new Set([..."dDsSwWbB"]);
const CONTROL_ESCAPES = new Set([..."ntrfv"]);

/** PostgreSQL's limit on one count (RE_DUP_MAX; RE2 allows 1000). */
const MAX_COUNT = 255;
/** RE2's limit on the product of nested counts (`(a{100}){100}` is refused). */
const MAX_REPEAT = 1000;

export function checkRegexPattern(pattern: string): string | undefined {
  return subsetProblem(pattern) ?? re2Problem(pattern);
}

/** what leaves the portable subset, read character by character */
function subsetProblem(pattern: string): string | undefined {
  let i = pattern.startsWith("(?i)") ? 4 : 0;
  let depth = 0;
  let inClass = false;
  // inside a class, what came last: nothing yet, a character (may start a range), the start of a
  // range (`a-`), or a set (a range, `\d`, `[:alpha:]`: a `-` after it is no range in RE2, and
  // an invalid one in PostgreSQL unless it is last)
  let classLast = "none" as "none" | "char" | "range" | "set";
  const classItem = (kind: "char" | "set") => {
    classLast = classLast === "range" ? "set" : kind;
  };
  let canRepeat = false;
  // per open group, the largest product of nested counted repetitions inside it; `atom` is that
  // product for the last atom (what a following quantifier repeats)
  const nested: number[] = [1];
  let atom = 1;
  const isAtom = (product: number) => {
    atom = product;
    nested[nested.length - 1] = Math.max(nested[nested.length - 1]!, product);
  };
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) return "it ends with a lone backslash";
      if (/[1-9]/.test(next)) return `backreference \\${next} at position ${i + 1} is not supported`;
      if (next === "x") {
        if (!/^[0-9A-Fa-f]{2}$/.test(pattern.slice(i + 2, i + 4)))
          return `escape \\x at position ${i + 1} needs two hex digits`;
        if (inClass) classItem("char");
        i += 3;
        canRepeat = true;
        isAtom(1);
        continue;
      }
      if (inClass && (next === "b" || next === "B"))
        return `\\${next} inside a class at position ${i + 1} is not supported`;
      if (!PUNCTUATION_ESCAPES.has(next) && !CLASS_ESCAPES.has(next) && !CONTROL_ESCAPES.has(next)) {
        return `escape \\${next} at position ${i + 1} is not supported`;
      }
      if (inClass) classItem(CLASS_ESCAPES.has(next) ? "set" : "char");
      canRepeat = next !== "b" && next !== "B";
      if (!inClass && canRepeat) isAtom(1);
      i++;
      continue;
    }
    if (inClass) {
      if (c === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2);
        if (end < 0) return `unterminated character class name at position ${i + 1}`;
        if (pattern[i + 2] === "^")
          return `negated class name [:^…:] at position ${i + 1} is not supported (PostgreSQL cannot read it): write [^[:name:]]`;
        classItem("set");
        i = end + 1;
        continue;
      }
      if (c === "]") {
        inClass = false;
        canRepeat = true;
        isAtom(1);
        continue;
      }
      if (c === "-" && classLast !== "none" && classLast !== "range" && pattern[i + 1] !== "]") {
        if (classLast === "set")
          return `"-" at position ${i + 1} follows a range or a class (PostgreSQL cannot read it): put it first or last in the class, or write \\-`;
        classLast = "range";
        continue;
      }
      classItem("char");
      continue;
    }
    switch (c) {
      case "[":
        inClass = true;
        classLast = "none";
        if (pattern[i + 1] === "^") i++;
        if (pattern[i + 1] === "]") {
          i++;
          classLast = "char";
        }
        continue;
      case "(":
        if (pattern[i + 1] === "?") {
          if (pattern[i + 2] !== ":")
            return `group syntax (?${pattern[i + 2] ?? ""} at position ${i + 1} is not supported`;
          i += 2;
        }
        depth++;
        nested.push(1);
        canRepeat = false;
        continue;
      case ")":
        depth--;
        if (depth < 0) return `unmatched ")" at position ${i + 1}`;
        canRepeat = true;
        isAtom(nested.pop()!);
        continue;
      case "*":
      case "+":
      case "?":
      case "{": {
        if (!canRepeat) return `nothing to repeat at position ${i + 1}`;
        if (c === "{") {
          const m = /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(pattern.slice(i));
          if (!m) return `invalid repetition at position ${i + 1}`;
          if (m[3] !== undefined && Number(m[3]) < Number(m[1]))
            return `invalid repetition range at position ${i + 1}`;
          if (Number(m[3] ?? m[1]) > MAX_COUNT || Number(m[1]) > MAX_COUNT)
            return `repetition over ${MAX_COUNT} at position ${i + 1}`;
          // RE2 counts {n,m} by m ({n,} by n) and refuses nested counts whose product is over 1000
          const count = Number(m[3] ?? m[1]);
          if (count > 0) {
            if (atom * count > MAX_REPEAT)
              return `nested repetitions over ${MAX_REPEAT} in all at position ${i + 1}`;
            isAtom(atom * count);
          }
          i += m[0].length - 1;
        }
        if (pattern[i + 1] === "+") return `possessive quantifier at position ${i + 1} is not supported`;
        if (pattern[i + 1] === "?") i++;
        canRepeat = false;
        continue;
      }
      case "|":
      case "^":
        canRepeat = false;
        continue;
      case "$":
        canRepeat = false;
        continue;
      default:
        canRepeat = true;
        isAtom(1);
    }
  }
  if (inClass) return 'missing "]"';
  if (depth > 0) return 'missing ")"';
  return undefined;
}

/** A parenthesis of a pattern that is structure (patternParens). */
export interface PatternParen {
  at: number;
  open: boolean;
  /** an opening one that captures: not `(?:`, `(?i)` and the like */
  capturing: boolean;
}

/**
 * The parentheses of a pattern of the subset that are structure, in order: not escaped and not
 * inside a class (`[(]` is the character; `[:alpha:]` and a `]` first in a class are members).
 */
export function patternParens(pattern: string): PatternParen[] {
  const parens: PatternParen[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") i++;
    else if (inClass) {
      if (c === "[" && pattern[i + 1] === ":") i = Math.max(i, pattern.indexOf(":]", i + 2) + 1);
      else if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      // a `]` first in the class (after an optional `^`) is a member, not its end
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
    } else if (c === "(") parens.push({ at: i, open: true, capturing: pattern[i + 1] !== "?" });
    else if (c === ")") parens.push({ at: i, open: false, capturing: false });
  }
  return parens;
}

/** The number of capturing groups of a pattern of the subset (patternParens). */
export function capturingGroups(pattern: string): number {
  return patternParens(pattern).filter((p) => p.capturing).length;
}

/** RE2's metacharacters: a pattern without any matches exactly where it occurs as a substring. */
const PLAIN_PATTERN = /^[^\\^$.|?*+()[\]{}]+$/;

/**
 * A non-empty pattern of plain characters: dialects test it as a substring (strpos, position),
 * which costs far less per row than a regular-expression engine.
 */
export function isPlainPattern(pattern: string): boolean {
  return PLAIN_PATTERN.test(pattern);
}
