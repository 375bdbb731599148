import { RE2JS } from "re2js";
import { patternParens } from "./regex-subset.ts";

/**
 * Whether a pattern of the subset can match the empty string somewhere (`a*`, `x?`, `a|`, `\b`,
 * `^`). REGEXP_REPLACE differs between engines only for such patterns: BigQuery replaces as RE2's
 * GlobalReplace does, which skips an empty match right where the previous match ended
 * (`('aaa', 'a*', 'x')` is `x`), where PostgreSQL and ClickHouse replace it too (`xx`).
 *
 * An empty match depends on its place only through assertions (`^ $ \b \B`): whether it is at the
 * start or the end of the text, and whether a word character is before and after it. Each of the
 * nine places is tried with RE2's own engine (re2js), the pattern between two fixed characters.
 */
export function canMatchEmpty(pattern: string): boolean {
  const sides = ["", "a", " "];
  try {
    return sides.some((before) =>
      sides.some((after) => RE2JS.compile(`^${before}(?:${pattern})${after}$`).matches(`${before}${after}`)),
    );
  } catch {
    // not RE2 (core refuses such a pattern before it reaches a dialect): assume it can
    return true;
  }
}

/**
 * Marks a dialect puts around each replacement to undo the replacements BigQuery skips
 * (canMatchEmpty): `START` match `MATCH_END` replacement `END`, and `KEPT` for an empty match kept.
 * Unicode noncharacters, which text meant for interchange does not hold; a text (or computed
 * replacement) that holds one is replaced without the marks, as the engine replaces.
 */
export const REPLACE_MARKS = {
  START: "\uFDD0",
  MATCH_END: "\uFDD1",
  END: "\uFDD2",
  KEPT: "\uFDD3",
} as const;

/**
 * Whether the first capturing group of a pattern of the subset cannot capture the empty string
 * (`(\d+)`, not `(\d*)`): its text is then '' only when the group took no part in the match. BigQuery's
 * REGEXP_EXTRACT is NULL there (`('ab', 'a(x)?b')`), where DuckDB and ClickHouse write '' for such a group; with
 * this, '' from them means NULL. False without a group, or when the group may capture ''.
 */
export function groupCannotBeEmpty(pattern: string): boolean {
  const body = firstGroupBody(pattern);
  if (body === undefined) return false;
  const flags = pattern.startsWith("(?i)") ? "(?i)" : "";
  return !canMatchEmpty(`${flags}${body}`);
}

/** the text inside the first capturing group's parentheses (as capturingGroups counts them) */
function firstGroupBody(pattern: string): string | undefined {
  const parens = patternParens(pattern);
  const first = parens.findIndex((p) => p.capturing);
  if (first < 0) return undefined;
  let depth = 0;
  for (const p of parens.slice(first + 1)) {
    if (p.open) depth++;
    else if (depth === 0) return pattern.slice(parens[first]!.at + 1, p.at);
    else depth--;
  }
  return undefined;
}
