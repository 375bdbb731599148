import type { CompileContext } from "./compile-context.ts";
import type { Cte, Expr, FromItem, Query, Select, SelectItem } from "./ir.ts";
import type { SqlType } from "./sql-type.ts";
import { forEachSelect } from "./walk-ir.ts";

/**
 * Redaction consumer SQL cannot undo (DESIGN.md §11). The consumer's query reads each stored CTE
 * through a CTE of its own that passes every column on with every address in every string — STRING
 * values, JSON text of records and arrays at any depth, lists of strings — replaced inside the
 * engine (`__REDACT_ADDRESSES`, one row per dialect). No consumer expression (SPLIT, SUBSTR,
 * arithmetic on octets…) ever sees an address. Stored CTEs keep reading each other unredacted:
 * the stored query's own logic is the operator's.
 *
 * `stored` are the stored query's CTEs; `query` is the compiled query whose body and remaining
 * CTEs are the consumer's. Call it after analysis, when every column consumer SQL reads from a
 * stored CTE (hidden ones included) is in that CTE's SELECT lists.
 */
export function redactStoredCtes(query: Query, stored: readonly Cte[], ctx: CompileContext): void {
  const storedNames = new Set(stored.map((c) => c.name));
  const wrapperOf = new Map<string, string>();
  const wrappers: Cte[] = [];
  for (const cte of stored) {
    const name = ctx.alias("q");
    wrapperOf.set(cte.name, name);
    wrappers.push({ name, query: redactingRead(cte) });
  }
  const consumerCtes = query.ctes.filter((c) => !storedNames.has(c.name));
  const consumer: Query = { ctes: consumerCtes, body: query.body };
  const reroute = (f: FromItem | undefined) => {
    if (f?.k === "cte" && wrapperOf.has(f.name)) f.name = wrapperOf.get(f.name)!;
  };
  forEachSelect(consumer, (select) => {
    reroute(select.from);
    for (const j of select.joins) reroute(j.item);
  });
  query.ctes = [...stored, ...wrappers, ...consumerCtes];
}

/** `SELECT <each column, redacted where it can hold text> FROM <cte>` */
function redactingRead(cte: Cte): Query {
  const rel = "__r";
  const items: SelectItem[] = columnsOf(cte.query).map(({ name, type }) => {
    const col: Expr = { k: "col", rel, col: name, type };
    return {
      name,
      expr: holdsText(type) ? { k: "call", fn: "__REDACT_ADDRESSES", args: [col], type } : col,
    };
  });
  const select: Select = {
    k: "select",
    distinct: false,
    items,
    from: { k: "cte", name: cte.name, alias: rel },
    joins: [],
    where: [],
    groupBy: [],
    orderBy: [],
  };
  return { ctes: [], body: select };
}

/**
 * Output columns of a query with the type that holds text when any branch's does: a branch of
 * NULLs first (`select null as ip union all select ip …`) must not hide the strings of the next.
 */
function columnsOf(query: Query): Array<{ name: string; type: SqlType }> {
  const branches: Select[] = [];
  const pending: Query[] = [query];
  while (pending.length) {
    const q = pending.pop()!;
    if (q.body.k === "setop") pending.push(q.body.right, q.body.left);
    else branches.push(q.body);
  }
  const first = branches[0]!;
  return first.items.map((item) => {
    const texty = branches
      .map((b) => b.items.find((other) => other.name === item.name)?.expr.type)
      .find((t) => t !== undefined && holdsText(t));
    return { name: item.name, type: texty ?? item.expr.type };
  });
}

/** STRING, JSON text (records, arrays read from events) and lists of strings */
function holdsText(type: SqlType): boolean {
  switch (type.t) {
    case "scalar":
      return type.s === "STRING";
    case "record":
    case "records":
      return true;
    case "array":
      return type.native ? type.element === "STRING" : true;
    default:
      return false;
  }
}
