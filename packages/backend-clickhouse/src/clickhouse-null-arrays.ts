import type { Expr, SqlEmitter } from "@qes/core";

/**
 * BigQuery's NULL array on ClickHouse, whose arrays cannot be NULL (`Nullable(Array)` is refused):
 * SPLIT of NULL and ARRAY_AGG over no rows give `[]`, which is what a result shows for a NULL array
 * anyway. Where the NULL
 * shows — IS NULL, ARRAY_LENGTH, ARRAY_TO_STRING of the array — the condition under which the
 * array is NULL is read from the expression that makes it; `undefined` when it never is. An array
 * that reached a CTE or subquery column has lost it (it reads as `[]` there).
 */
export function nullArrayWhen(e: SqlEmitter, array: Expr): string | undefined {
  if (array.k === "lit" && array.value === null) return "true";
  if (array.k === "call" && array.fn === "SPLIT")
    return array.args.map((arg) => `isNull(${e.expr(arg)})`).join(" OR ");
  // ARRAY_AGG over no rows (none left by IGNORE NULLS) is NULL: groupArray gives []
  if (array.k === "call" && array.fn === "ARRAY_AGG" && array.args[0]) {
    const counted = array.agg?.ignoreNulls ? `count(${e.expr(array.args[0])})` : "count()";
    return `(${counted}${e.overOf(array)} = 0)`;
  }
  // COALESCE(a, b): NULL when every argument is
  if (array.k === "call" && (array.fn === "COALESCE" || array.fn === "IFNULL")) {
    const whens = array.args.map((a) => nullArrayWhen(e, a));
    if (whens.some((w) => w === undefined)) return undefined;
    return `(${whens.join(" AND ")})`;
  }
  // IF(c, [1], NULL): the branch it takes
  if (array.k === "call" && array.fn === "IF" && array.args.length === 3) {
    const [c, a, b] = array.args as [Expr, Expr, Expr];
    const whenA = nullArrayWhen(e, a);
    const whenB = nullArrayWhen(e, b);
    if (whenA === undefined && whenB === undefined) return undefined;
    return `if(ifNull(${e.expr(c)}, false), ${whenA ?? "false"}, ${whenB ?? "false"})`;
  }
  return undefined;
}

/** `sql`, or NULL where `array` is BigQuery's NULL array. */
export function nullForNullArray(e: SqlEmitter, array: Expr, sql: string): string {
  const when = nullArrayWhen(e, array);
  return when === undefined ? sql : `if(${when}, NULL, ${sql})`;
}
