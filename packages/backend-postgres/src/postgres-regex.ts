/**
 * RE2 patterns (the subset core's regex-subset.ts accepts) for PostgreSQL's AREs: literals when
 * compiled, parameters when bound (PostgresDialect.bindPattern), and patterns a query computes at
 * run time, token by token (PATTERN_TOKEN).
 */

const WORD_BOUNDARIES: Record<string, string> = { b: "y", B: "Y" };

/**
 * The same pattern for PostgreSQL's AREs. Their default mode already reads the subset as RE2
 * does (`^`/`$` at the ends of the text, negated classes and `\s` matching newlines) except
 * for `.`, which also matches a newline there: each `.` outside a class becomes `[^\n]`; and
 * for word boundaries, `\b` and `\B` in RE2, `\y` and `\Y` there.
 */
export function toPostgresRegex(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      // PostgreSQL writes word boundaries \y and \Y: its \b is a backspace, its \B a backslash
      // (the subset refuses both inside a class)
      const next = pattern[i + 1] ?? "";
      out += c + (WORD_BOUNDARIES[next] ?? next);
      i++;
      continue;
    }
    if (inClass) {
      if (c === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2);
        if (end >= 0) {
          out += pattern.slice(i, end + 2);
          i = end + 1;
          continue;
        }
      }
      if (c === "]") inClass = false;
      out += c;
      continue;
    }
    if (c === "[") {
      inClass = true;
      out += c;
      if (pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "]") out += pattern[++i];
      continue;
    }
    out += c === "." ? "[^\\n]" : c;
  }
  return out;
}

/** one token of an RE2 pattern as `toPostgresRegex` reads it: an escape pair, a bracket class, a character */
export const PATTERN_TOKEN = String.raw`(\\.|\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^]\\])*\]|.)`;
