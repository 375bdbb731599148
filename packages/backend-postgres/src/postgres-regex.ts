/**
 * RE2 patterns (the subset core's regex-subset.ts accepts) for PostgreSQL's AREs: literals when
 * compiled, parameters when bound (PostgresDialect.bindPattern), and patterns a query computes at
 * run time, token by token (PATTERN_TOKEN).
 */

const WORD = "[0-9A-Za-z_]";

/**
 * RE2's `\b` and `\B`, whose word characters are ASCII's, as lookarounds: PostgreSQL's own `\y`
 * and `\Y` take its locale's (a boundary on each side of é), and its `\b` is a backspace.
 */
export const WORD_BOUNDARIES: Record<string, string> = {
  b: `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`,
  B: `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`,
};

/**
 * RE2's Perl classes and POSIX class names are ASCII (`\w` is [0-9A-Za-z_], `\s` [\t\n\f\r ]);
 * PostgreSQL's follow the database's locale (its `\w` matched é, its `\d` other scripts' digits,
 * its `\s` a no-break space). Each is written as the ASCII set it is in RE2: the members, to go
 * inside a bracket expression (non-printable ones as \uXXXX, which AREs read inside brackets).
 */
const PERL_CLASS_MEMBERS: Record<string, string> = {
  d: "0-9",
  w: "0-9A-Za-z_",
  s: "\\t\\n\\f\\r ",
};
const POSIX_CLASS_MEMBERS: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\u0001-\\u007f",
  blank: "\\t ",
  cntrl: "\\u0001-\\u001f\\u007f",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-/:-@\\u005b-\\u0060{-~",
  space: "\\t\\n\\u000b\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

/** `\d`, `\W`, … outside a class: the bracket expression of RE2's ASCII set, or undefined */
export function perlClassOutside(letter: string): string | undefined {
  const members = PERL_CLASS_MEMBERS[letter.toLowerCase()];
  if (members === undefined) return undefined;
  return letter === letter.toLowerCase() ? `[${members}]` : `[^${members}]`;
}

/**
 * The same pattern for PostgreSQL's AREs. Their default mode already reads the subset as RE2
 * does (`^`/`$` at the ends of the text, negated classes and `\s` matching newlines) except
 * for `.`, which also matches a newline there: each `.` outside a class becomes `[^\n]`; and
 * for word boundaries (WORD_BOUNDARIES) and the classes above.
 */
export function toPostgresRegex(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      // the subset refuses \b and \B inside a class
      const next = pattern[i + 1] ?? "";
      i++;
      // \d, \w, \s inside a class are their members; \D, \W, \S there stay PostgreSQL's
      const set = inClass ? PERL_CLASS_MEMBERS[next] : (perlClassOutside(next) ?? WORD_BOUNDARIES[next]);
      out += set ?? c + next;
      continue;
    }
    if (inClass) {
      if (c === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2);
        if (end >= 0) {
          out += POSIX_CLASS_MEMBERS[pattern.slice(i + 2, end)] ?? pattern.slice(i, end + 2);
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
