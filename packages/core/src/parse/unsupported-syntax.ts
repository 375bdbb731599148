/**
 * BigQuery constructs qes does not implement, refused by name before parsing: node-sql-parser
 * reads some of them and the analyser would otherwise have to notice each one (PIVOT and
 * FOR SYSTEM_TIME AS OF parse and were once silently dropped), and reads others as a syntax error
 * that names a token the user did not see as the problem. SQL is never silently ignored.
 */
import { QesError } from "../errors.ts";
import type { Token } from "./lex-sql.ts";
import { isWord } from "./token-scan.ts";

interface Refusal {
  /** the construct's name in the message */
  name: string;
  /** whether the construct starts at tokens[i] */
  at(tokens: Token[], i: number): boolean;
}

const next = (tokens: Token[], i: number, k: number) => tokens[i + k];
const opens = (t: Token | undefined) => t?.type === "punct" && t.value === "(";

const REFUSALS: Refusal[] = [
  { name: "PIVOT", at: (t, i) => isWord(t[i], "PIVOT") && opens(next(t, i, 1)) && !afterDot(t, i) },
  {
    name: "UNPIVOT",
    at: (t, i) =>
      isWord(t[i], "UNPIVOT") &&
      !afterDot(t, i) &&
      (opens(next(t, i, 1)) || isWord(next(t, i, 1), "INCLUDE") || isWord(next(t, i, 1), "EXCLUDE")),
  },
  {
    name: "FOR SYSTEM_TIME AS OF (time travel)",
    at: (t, i) => isWord(t[i], "FOR") && isWord(next(t, i, 1), "SYSTEM_TIME"),
  },
  { name: "TABLESAMPLE", at: (t, i) => isWord(t[i], "TABLESAMPLE") && !afterDot(t, i) },
  {
    name: "SELECT AS STRUCT / SELECT AS VALUE",
    at: (t, i) =>
      isWord(t[i], "SELECT") &&
      isWord(next(t, i, 1), "AS") &&
      (isWord(next(t, i, 2), "STRUCT") || isWord(next(t, i, 2), "VALUE")),
  },
  { name: "WITH RECURSIVE", at: (t, i) => isWord(t[i], "WITH") && isWord(next(t, i, 1), "RECURSIVE") },
  { name: "MATCH_RECOGNIZE", at: (t, i) => isWord(t[i], "MATCH_RECOGNIZE") && opens(next(t, i, 1)) },
];

function afterDot(tokens: Token[], i: number): boolean {
  const before = tokens[i - 1];
  return before?.type === "punct" && before.value === ".";
}

/** Throws `sql_invalid` naming the first construct of REFUSALS found in the token stream. */
export function refuseUnsupportedSyntax(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    for (const r of REFUSALS) {
      if (!r.at(tokens, i)) continue;
      const t = tokens[i]!;
      throw new QesError(
        "sql_invalid",
        `${r.name} is not supported by qes (line ${t.line}, column ${t.column}).`,
        { line: t.line, column: t.column },
      );
    }
  }
}

/**
 * `SAFE.COUNT(*)`, `SAFE.COUNT(DISTINCT x)`: the SAFE. prefix on an aggregate's own argument forms,
 * which node-sql-parser reads as a syntax error at a token that is not the problem. BigQuery
 * refuses SAFE. on aggregates; so does the analyser (analyzeSafeCall) for the forms that parse.
 */
export function refuseSafeAggregateForms(tokens: Token[]): void {
  for (let i = 0; i + 4 < tokens.length; i++) {
    const dot = tokens[i + 1];
    const name = tokens[i + 2];
    const arg = tokens[i + 4];
    if (
      isWord(tokens[i], "SAFE") &&
      !afterDot(tokens, i) &&
      dot?.type === "punct" &&
      dot.value === "." &&
      name?.type === "ident" &&
      opens(tokens[i + 3]) &&
      ((arg?.type === "punct" && arg.value === "*") || isWord(arg, "DISTINCT"))
    ) {
      const t = tokens[i]!;
      throw new QesError(
        "function_not_allowed",
        `Function SAFE.${name.value} is not allowed: SAFE. prefixes scalar functions only, not aggregates (line ${t.line}, column ${t.column}).`,
        { line: t.line, column: t.column },
      );
    }
  }
}
