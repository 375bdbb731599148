/**
 * The RE2 subset every dialect can express (DESIGN.md §3). BigQuery and DuckDB use RE2; other
 * engines translate from it. Constructs RE2 refuses (backreferences, lookaround) or that not
 * every engine has are refused here, before any backend runs. Returns a description of the first
 * problem, or undefined when the pattern is accepted.
 */
export function checkRegexPattern(pattern: string): string | undefined {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) return "it ends with a lone backslash";
      if (!inClass && /[1-9]/.test(next))
        return `backreference \\${next} at position ${i + 1} is not supported`;
      if (/[pPkgK]/.test(next) && next !== "p" && next !== "P") return `escape \\${next} is not supported`;
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
      continue;
    }
    if (c === "(") {
      if (pattern[i + 1] === "?") {
        const rest = pattern.slice(i + 2, i + 4);
        if (rest.startsWith("=") || rest.startsWith("!") || rest === "<=" || rest === "<!") {
          return `lookaround at position ${i + 1} is not supported`;
        }
        if (rest.startsWith(">")) return `atomic group at position ${i + 1} is not supported`;
      }
      depth++;
      continue;
    }
    if (c === ")") {
      depth--;
      if (depth < 0) return `unmatched ")" at position ${i + 1}`;
      continue;
    }
    if ((c === "*" || c === "+" || c === "?") && pattern[i + 1] === "+") {
      return `possessive quantifier at position ${i + 1} is not supported`;
    }
  }
  if (inClass) return 'missing "]"';
  if (depth > 0) return 'missing ")"';
  return undefined;
}
