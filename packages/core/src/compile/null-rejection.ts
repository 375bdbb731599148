import type { Expr } from "./ir.ts";

/**
 * Whether a condition can only be TRUE on rows where at least one of `columns` is not NULL: on a
 * row where all of them are NULL it is FALSE or NULL, and WHERE keeps only TRUE. The analysis is
 * the textbook null-rejection over the IR's BigQuery semantics — every emitter implements these
 * semantics, so it holds on every engine:
 *
 * - an expression is *strict* in a column when it is NULL whenever that column is: columns, casts,
 *   JSON reads, comparisons, arithmetic, LIKE, NOT, IN's tested value and the functions in
 *   `STRICT_FUNCTIONS` pass strictness up from their arguments; anything else (IS NULL, COALESCE,
 *   IFNULL, IF, CASE, subqueries, aggregates, literals, parameters) is strict in nothing;
 * - a condition rejects the rows where it is strict in one of the columns (a NULL condition is
 *   not TRUE), and also: `a AND b` those either rejects, `a OR b` those both reject, and
 *   `x IS NOT NULL`, `x IS TRUE`, `x IS FALSE` those where x is strict in one of the columns
 *   (they are FALSE, not NULL, for a NULL x).
 *
 * Only what is certain counts: an expression the analysis does not know rejects nothing.
 */
export function rejectsRowsWhereNull(condition: Expr, columns: ReadonlySet<string>): boolean {
  if (condition.k === "op") {
    switch (condition.op) {
      case "AND":
        return condition.args.some((a) => rejectsRowsWhereNull(a, columns));
      case "OR":
        return condition.args.every((a) => rejectsRowsWhereNull(a, columns));
      case "IS NOT NULL":
      case "IS TRUE":
      case "IS FALSE":
        return meets(strict(condition.args[0]!), columns);
      case "BETWEEN":
        // NULL in x, lo or hi: one of x >= lo, x <= hi is NULL, so the conjunction is not TRUE
        return condition.args.some((a) => meets(strict(a), columns));
    }
  }
  return meets(strict(condition), columns);
}

/** the key of a physical column in the sets `rejectsRowsWhereNull` reads */
export function columnKey(rel: string, col: string): string {
  return `${rel}\u0000${col}`;
}

/**
 * Operators whose result is NULL when any operand is. BETWEEN is not here: `x BETWEEN lo AND hi`
 * with a NULL `lo` is FALSE when x > hi, so it is strict in x only (below).
 */
const STRICT_OPERATORS = new Set([
  "=",
  "!=",
  "<",
  ">",
  "<=",
  ">=",
  "+",
  "-",
  "*",
  "/",
  "NEG",
  "NOT",
  "LIKE",
  "NOT LIKE",
]);

/**
 * Scalar functions whose result is NULL when any argument is NULL (BigQuery's definitions, and
 * each dialect's row is checked against them by the SQL case table). Kept to the functions log
 * filters use; a function missing here only means a presence test is not dropped.
 */
const STRICT_FUNCTIONS = new Set([
  "REGEXP_CONTAINS",
  "STARTS_WITH",
  "ENDS_WITH",
  "LOWER",
  "UPPER",
  "LENGTH",
  "STRPOS",
  "TIMESTAMP_TRUNC",
]);

function strict(e: Expr): Set<string> {
  switch (e.k) {
    case "col":
      return new Set([columnKey(e.rel, e.col)]);
    case "cast":
      return strict(e.expr);
    case "json":
      return strict(e.base);
    case "in":
      return strict(e.expr);
    case "op":
      if (STRICT_OPERATORS.has(e.op)) return union(e.args.map(strict));
      if (e.op === "BETWEEN" || e.op === "NOT BETWEEN") return strict(e.args[0]!);
      return new Set();
    case "call":
      if (e.agg || e.over || !STRICT_FUNCTIONS.has(e.fn)) return new Set();
      return union(e.args.map(strict));
    default:
      return new Set();
  }
}

function meets(a: Set<string>, b: ReadonlySet<string>): boolean {
  for (const k of a) if (b.has(k)) return true;
  return false;
}

function union(sets: Set<string>[]): Set<string> {
  const out = new Set<string>();
  for (const s of sets) for (const k of s) out.add(k);
  return out;
}
