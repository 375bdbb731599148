import { QesError } from "../errors.ts";
import type { Token } from "./lex-sql.ts";

/**
 * The parser (node-sql-parser's grammar) backtracks at each level of some constructs, so its time
 * doubles, about, per level: twelve nested CASTs took 0.3 s, eighteen nested STRUCTs 11 s, sixty
 * never ended — on the event loop, so one request of 300 characters stopped the whole server.
 * Their nesting is limited up front, well inside what log queries write.
 */
export const MAX_BACKTRACKING_NESTING = 8;

/** a `(` after these opens a level the parser tries more than one way */
const BACKTRACKING_OPENERS = new Set(["STRUCT", "CAST", "SAFE_CAST", "ARRAY", "EXISTS", "CASE"]);

export function checkBacktrackingNesting(tokens: readonly Token[]): void {
  const open: boolean[] = [];
  let deep = 0;
  let prev: Token | undefined;
  for (const t of tokens) {
    if (t.type === "punct" && (t.value === "(" || t.value === "[")) {
      const backtracks =
        t.value === "(" && prev?.type === "ident" && BACKTRACKING_OPENERS.has(prev.value.toUpperCase());
      open.push(backtracks);
      if (backtracks && ++deep > MAX_BACKTRACKING_NESTING) {
        throw new QesError(
          "sql_too_complex",
          `The query nests STRUCT, CAST, SAFE_CAST, ARRAY, EXISTS or CASE (…) deeper than ${MAX_BACKTRACKING_NESTING} levels (line ${t.line}, column ${t.column}).`,
          { line: t.line, column: t.column },
        );
      }
    } else if (t.type === "punct" && (t.value === ")" || t.value === "]")) {
      if (open.pop()) deep--;
    }
    prev = t;
  }
}
