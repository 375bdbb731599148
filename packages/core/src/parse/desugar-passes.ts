/** Passes over whole statements before the main rewrite: QUALIFY, join groups, * EXCEPT … REPLACE. */
import { QesError } from "../errors.ts";
import type { Token } from "./lex-sql.ts";
import { isDepthZero, isWord, matching, splitTopLevel, synthPunct, synthToken } from "./token-scan.ts";

/** The parser reads QUALIFY only after WHERE: add `WHERE TRUE` where a query has none. */
export function qualifyWithoutWhere(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let q = result.length - 1; q >= 0; q--) {
    if (!isWord(result[q], "QUALIFY")) continue;
    let depth = 0;
    let hasWhere = false;
    let insertAt = q;
    for (let k = q - 1; k >= 0; k--) {
      const t = result[k]!;
      if (t.type === "punct" && t.value === ")") depth++;
      else if (t.type === "punct" && t.value === "(") {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0) {
        // one QUALIFY per SELECT: stopping here also keeps a run of them linear, not quadratic
        if (isWord(t, "QUALIFY")) {
          const second = result[q]!;
          throw new QesError(
            "sql_syntax",
            `A second QUALIFY in one SELECT (line ${second.line}, column ${second.column}).`,
            { line: second.line, column: second.column },
          );
        }
        if (isWord(t, "WHERE")) hasWhere = true;
        if (isWord(t, "GROUP") || isWord(t, "HAVING") || isWord(t, "WINDOW")) insertAt = k;
        if (isWord(t, "SELECT")) break;
      }
    }
    if (!hasWhere) {
      const at = result[insertAt]!;
      const where: Token = { ...at, type: "ident", text: "WHERE", value: "WHERE" };
      const truth: Token = { ...at, type: "ident", text: "TRUE", value: "TRUE" };
      result.splice(insertAt, 0, where, truth);
    }
  }
  return result;
}

/**
 * BigQuery writes a WINDOW clause before ORDER BY and LIMIT; node-sql-parser reads it only after
 * them, and where it comes first silently dropped the ORDER BY, LIMIT and OFFSET that follow (the
 * rows came back unordered and uncut). The clause moves after them, to the end of its query: the
 * first `)`, set operator or `;` at its depth.
 */
export function windowAfterOrder(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let w = 0; w < result.length; w++) {
    if (!isWord(result[w], "WINDOW")) continue;
    let depth = 0;
    let clauseEnd = -1;
    let queryEnd = result.length;
    for (let k = w + 1; k < result.length; k++) {
      const t = result[k]!;
      if (t.type === "punct" && t.value === "(") depth++;
      else if (t.type === "punct" && t.value === ")") {
        if (depth === 0) {
          queryEnd = k;
          break;
        }
        depth--;
      } else if (depth === 0) {
        if (
          (t.type === "punct" && t.value === ";") ||
          ["UNION", "INTERSECT", "EXCEPT"].some((s) => isWord(t, s))
        ) {
          queryEnd = k;
          break;
        }
        if (clauseEnd < 0 && ["ORDER", "LIMIT", "OFFSET"].some((s) => isWord(t, s))) clauseEnd = k;
      }
    }
    if (clauseEnd < 0) continue;
    const clause = result.slice(w, clauseEnd);
    const tail = result.slice(clauseEnd, queryEnd);
    result.splice(w, queryEnd - w, ...tail, ...clause);
    // the moved clause is not read again
    w = queryEnd - 1;
  }
  return result;
}

/**
 * `A UNION ALL (B) ORDER BY k LIMIT n`: after a parenthesised last operand node-sql-parser drops
 * the ORDER BY, LIMIT and OFFSET of the whole operation silently (and the analyser, which reads
 * the operation's ORDER BY from the last operand, took that operand's own for it); after a
 * parenthesised query alone (`(SELECT …) ORDER BY k`, as a statement or a CTE's body) too. The
 * parenthesised query becomes `SELECT * FROM (B)`, after which the parser reads them.
 */
export function parenthesisedLastOperand(tokens: Token[]): Token[] {
  // every bracket's closing index, in one pass
  const closing = new Map<number, number>();
  const open: number[] = [];
  tokens.forEach((t, i) => {
    if (t.type !== "punct") return;
    if (t.value === "(") open.push(i);
    else if (t.value === ")" && open.length) closing.set(open.pop()!, i);
  });
  const wrapAt: number[] = [];
  for (const [o, c] of closing) {
    if (!["ORDER", "LIMIT", "OFFSET"].some((w) => isWord(tokens[c + 1], w))) continue;
    if (!["SELECT", "WITH"].some((w) => isWord(tokens[o + 1], w)) && tokens[o + 1]?.value !== "(") continue;
    const before = tokens[o - 1];
    // the statement itself, a CTE's body or a subquery in FROM, or a set operation's operand:
    // `(SELECT …) ORDER BY k` lost its ORDER BY and LIMIT the same way
    const queryStart =
      o === 0 ||
      (before?.type === "punct" &&
        before.value === "(" &&
        ["AS", "FROM", "JOIN"].some((w) => isWord(tokens[o - 2], w)));
    const operand =
      (isWord(before, "ALL") || isWord(before, "DISTINCT")) &&
      ["UNION", "INTERSECT", "EXCEPT"].some((w) => isWord(tokens[o - 2], w));
    if (queryStart || operand) wrapAt.push(o);
  }
  if (!wrapAt.length) return tokens;
  const result = [...tokens];
  for (const o of wrapAt.sort((a, b) => b - a)) {
    const at = result[o]!;
    result.splice(o, 0, synthToken(at, "SELECT"), synthPunct(at, "*"), synthToken(at, "FROM"));
  }
  return result;
}

/** `FROM (a JOIN b ON …) JOIN c` reads as `FROM a JOIN b ON … JOIN c` (left-deep, same rows). */
export function parenthesisedJoins(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let k = 0; k < result.length - 1; k++) {
    if (!isWord(result[k], "FROM") || result[k + 1]?.value !== "(" || result[k + 1]?.type !== "punct")
      continue;
    const inner = result[k + 2];
    if (!inner || isWord(inner, "SELECT") || isWord(inner, "WITH") || inner.value === "(") continue;
    const close = matching(result, k + 1);
    const body = result.slice(k + 2, close);
    const hasJoin = body.some((t) => isWord(t, "JOIN"));
    if (!hasJoin) continue;
    result.splice(close, 1);
    result.splice(k + 1, 1);
  }
  return result;
}

export const JOIN_BOUNDARY = new Set([
  "JOIN",
  "CROSS",
  "LEFT",
  "RIGHT",
  "INNER",
  "FULL",
  "WHERE",
  "GROUP",
  "HAVING",
  "QUALIFY",
  "WINDOW",
  "ORDER",
  "LIMIT",
  "UNION",
  "EXCEPT",
  "INTERSECT",
]);

/** The select list that marks a subquery made of a parenthesised join group. */
export const JOIN_GROUP_MARKER = "__qes_join_group";

/**
 * `X [INNER] JOIN (Y … JOIN Z ON c1) ON c` reads as `X JOIN Y ON TRUE … JOIN Z ON (c1) AND (c)`:
 * for inner joins the grouping does not change the rows. `X LEFT|RIGHT|FULL JOIN (group) ON c`, or
 * a group with outer joins inside, becomes `JOIN (SELECT __qes_join_group FROM group) ON c`.
 */
export function joinGroups(tokens: Token[]): Token[] {
  let result = [...tokens];
  for (let k = 0; k < result.length - 1; k++) {
    if (!isWord(result[k], "JOIN") || result[k + 1]?.value !== "(" || result[k + 1]?.type !== "punct")
      continue;
    const first = result[k + 2];
    if (!first || isWord(first, "SELECT") || isWord(first, "WITH") || first.value === "(") continue;
    const close = matching(result, k + 1);
    if (!isWord(result[close + 1], "ON")) continue;
    const before = result[k - 1];
    const group = result.slice(k + 2, close);
    if (
      isWord(before, "LEFT") ||
      isWord(before, "RIGHT") ||
      isWord(before, "FULL") ||
      isWord(before, "OUTER") ||
      group.some(
        (t, i) => (isWord(t, "LEFT") || isWord(t, "RIGHT") || isWord(t, "FULL")) && isDepthZero(group, i),
      )
    ) {
      // An outer join of a group, or outer joins inside one, change the rows if flattened: the
      // group becomes a subquery whose range variables the analyser keeps visible by name
      // (analyze-join-group.ts).
      const at = result[k + 1]!;
      result.splice(
        k + 2,
        0,
        synthToken(at, "SELECT"),
        synthToken(at, JOIN_GROUP_MARKER),
        synthToken(at, "FROM"),
      );
      continue;
    }
    // the outer ON condition: up to the next join or clause at depth 0
    let end = close + 2;
    let depth = 0;
    for (; end < result.length; end++) {
      const t = result[end]!;
      if (t.type === "punct" && t.value === "(") depth++;
      else if (t.type === "punct" && t.value === ")") {
        if (depth === 0) break;
        depth--;
      } else if (
        depth === 0 &&
        ((t.type === "punct" && (t.value === "," || t.value === ";")) ||
          (t.type === "ident" && JOIN_BOUNDARY.has(t.value)))
      )
        break;
    }
    const outerOn = result.slice(close + 2, end);
    const inner = group;
    const at = result[k]!;
    // find the last depth-0 join of the group, to attach the outer condition to it
    let lastJoin = -1;
    for (let i = 0; i < inner.length; i++)
      if (isDepthZero(inner, i) && (isWord(inner[i], "JOIN") || inner[i]!.value === ",")) lastJoin = i;
    let rewritten: Token[];
    const cond = [synthPunct(at, "("), ...outerOn, synthPunct(at, ")")];
    if (lastJoin < 0) {
      rewritten = [...inner, synthToken(at, "ON"), ...cond];
    } else {
      // the first item joins ON TRUE; the last join gets the outer condition
      let firstEnd = 0;
      for (let i = 0; i < inner.length; i++) {
        const t = inner[i]!;
        if (
          isDepthZero(inner, i) &&
          (isWord(t, "JOIN") || isWord(t, "CROSS") || isWord(t, "INNER") || t.value === ",")
        ) {
          firstEnd = i;
          break;
        }
      }
      const head = [...inner.slice(0, firstEnd), synthToken(at, "ON"), synthToken(at, "TRUE")];
      const tail = inner.slice(firstEnd);
      const lastInTail = lastJoin - firstEnd;
      const lastHasOn = tail.some((t, i) => i > lastInTail && isWord(t, "ON") && isDepthZero(tail, i));
      let tailTokens: Token[];
      if (lastHasOn) tailTokens = [...tail, synthToken(at, "AND"), ...cond];
      else {
        // a CROSS JOIN / comma item becomes an inner JOIN … ON condition
        const prefix = tail
          .slice(0, lastInTail)
          .filter((_, i) => !(i === lastInTail - 1 && isWord(tail[i], "CROSS")));
        tailTokens = [
          ...prefix,
          synthToken(at, "JOIN"),
          ...tail.slice(lastInTail + 1),
          synthToken(at, "ON"),
          ...cond,
        ];
      }
      rewritten = [...head, ...tailTokens];
    }
    result = [...result.slice(0, k + 1), ...rewritten, ...result.slice(end)];
  }
  return result;
}

/** `* EXCEPT (a) REPLACE (e AS b)` → `* REPLACE (e AS b, __qes_except AS a)`: one modifier for the parser. */
export function starExceptReplace(tokens: Token[]): Token[] {
  const result = [...tokens];
  for (let k = 0; k < result.length - 2; k++) {
    if (result[k]!.value !== "*" || !isWord(result[k + 1], "EXCEPT") || result[k + 2]?.value !== "(")
      continue;
    const exceptClose = matching(result, k + 2);
    if (!isWord(result[exceptClose + 1], "REPLACE") || result[exceptClose + 2]?.value !== "(") continue;
    const replaceClose = matching(result, exceptClose + 2);
    const names = splitTopLevel(result.slice(k + 3, exceptClose));
    const replaced = result.slice(exceptClose + 3, replaceClose);
    const at = result[k + 1]!;
    const extra: Token[] = [];
    for (const n of names)
      extra.push(synthPunct(at, ","), synthToken(at, "__qes_except"), synthToken(at, "AS"), ...n);
    result.splice(
      k + 1,
      replaceClose - k,
      synthToken(at, "REPLACE"),
      synthPunct(at, "("),
      ...replaced,
      ...extra,
      synthPunct(at, ")"),
    );
  }
  return result;
}

/**
 * A window frame written as its frame_start alone (`ROWS CURRENT ROW`, `RANGE 1 PRECEDING`,
 * `RANGE UNBOUNDED PRECEDING`) is BigQuery's `BETWEEN frame_start AND CURRENT ROW`. The parser read
 * only `ROWS <n or UNBOUNDED> PRECEDING` alone and refused RANGE ones as a syntax error: the frame
 * is written out in full.
 */
export function frameStartAlone(tokens: Token[]): Token[] {
  const result: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    result.push(t);
    if (!isWord(t, "ROWS") && !isWord(t, "RANGE")) continue;
    const a = tokens[i + 1];
    const b = tokens[i + 2];
    const start =
      (isWord(a, "CURRENT") && isWord(b, "ROW")) ||
      ((isWord(a, "UNBOUNDED") || (a?.type === "number" && /^\d+$/.test(a.text))) && isWord(b, "PRECEDING"));
    if (!start) continue;
    result.push(synthToken(a!, "BETWEEN"), a!, b!, synthToken(b!, "AND"));
    result.push(synthToken(b!, "CURRENT"), synthToken(b!, "ROW"));
    i += 2;
  }
  return result;
}
