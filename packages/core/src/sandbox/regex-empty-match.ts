import { RE2JS } from "re2js";

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
