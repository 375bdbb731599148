import { hasAggregate } from "../compile/check-grouping.ts";
import type { Expr, FromItem, OrderItem, Query, Select, SelectItem } from "../compile/ir.ts";
import { INT64 } from "../compile/sql-type.ts";
import { forEachSelect, hasWindowCall } from "../compile/walk-ir.ts";

/**
 * The leading-key cut of an ordered LIMIT (`SqlEmitter.cutsOrderAtLeadingKey`) and the two-level
 * form an engine may want it in (`SqlEmitter.ordersCutRowsOutside`).
 */

/** leading keys a threshold can cut on: never NULL, totally ordered, the same in every engine */
const CUTTABLE = new Set(["TIMESTAMP", "DATETIME", "DATE", "INT64"]);

/**
 * `key >= (SELECT min(key) FROM (SELECT key … ORDER BY key DESC LIMIT n))` (`<=`/max ascending):
 * the rows an ordered LIMIT n can keep all lie at or past the n-th value of the leading key, ties
 * included, so filtering by it first changes no row of the result. Only for a plain select (no
 * grouping, DISTINCT, QUALIFY, OFFSET or window) cut by a literal LIMIT on a non-NULL column.
 */
export function leadingKeyCut(s: Select, cteBody?: (name: string) => Select | undefined): Expr | undefined {
  const lead = s.orderBy[0];
  if (!lead || s.offset || s.limit?.k !== "lit" || s.distinct || s.groupBy.length || s.having || s.qualify)
    return undefined;
  // a window is computed over the rows the WHERE keeps: the cut would change what it sees
  if (s.items.some((i) => hasWindowCall(i.expr)) || s.orderBy.some((o) => hasWindowCall(o.expr)))
    return undefined;
  const key = lead.expr;
  if (key.k !== "col" || !key.notNull || lead.nulls || key.type.t !== "scalar" || !CUTTABLE.has(key.type.s))
    return undefined;
  const read = (cteBody && throughPlainCte(s, key, cteBody)) ?? { ...s, key };
  const nth: Select = {
    k: "select",
    distinct: false,
    items: [{ expr: read.key, name: "__cut" }],
    ...(read.from ? { from: read.from } : {}),
    joins: read.joins,
    where: read.where,
    groupBy: [],
    orderBy: [{ expr: read.key, desc: lead.desc }],
    limit: s.limit,
  };
  const bound: Select = {
    k: "select",
    distinct: false,
    items: [
      {
        expr: {
          k: "call",
          fn: lead.desc ? "MIN" : "MAX",
          args: [{ k: "col", rel: "__cut", col: "__cut", type: key.type }],
          type: key.type,
          agg: {},
        },
        name: "__cut",
      },
    ],
    from: { k: "subquery", query: { ctes: [], body: nth }, alias: "__cut" },
    joins: [],
    where: [],
    groupBy: [],
    orderBy: [],
  };
  return {
    k: "op",
    op: lead.desc ? ">=" : "<=",
    args: [key, { k: "subquery", query: { ctes: [], body: bound }, mode: "scalar", type: key.type }],
    type: { t: "scalar", s: "BOOL" },
  };
}

/**
 * The body of the CTE a select reads when that CTE is a plain filter of its FROM — no grouping,
 * DISTINCT, QUALIFY, LIMIT, OFFSET or aggregate — so that its rows are its FROM's rows that pass
 * its WHERE, and a read of it can be a read of its FROM.
 */
function plainFilterCte(
  from: FromItem | undefined,
  cteBody: (name: string) => Select | undefined,
): Select | undefined {
  if (from?.k !== "cte") return undefined;
  const body = cteBody(from.name);
  if (
    !body ||
    body.distinct ||
    body.groupBy.length ||
    body.having ||
    body.qualify ||
    body.limit ||
    body.offset
  )
    return undefined;
  return body.items.some((i) => hasAggregate(i.expr)) ? undefined : body;
}

/**
 * When `s` reads nothing but a CTE that is a plain filter of its own FROM (no grouping, DISTINCT,
 * LIMIT, aggregate, and a key that is no window), the rows of `s` are the CTE's rows: the cut can
 * read the CTE's FROM and WHERE and the key's expression there, so that an engine sees
 * `ORDER BY key LIMIT n` right on the table read (`SqlEmitter.cutsThroughPlainCte`).
 */
function throughPlainCte(
  s: Select,
  key: Extract<Expr, { k: "col" }>,
  cteBody: (name: string) => Select | undefined,
): (Pick<Select, "from" | "joins" | "where"> & { key: Expr }) | undefined {
  if (key.rel !== s.from?.alias || s.joins.length || s.where.length) return undefined;
  const body = plainFilterCte(s.from, cteBody);
  if (!body) return undefined;
  const item = body.items.find((i) => i.name === key.col);
  if (!item || hasWindowCall(item.expr)) return undefined;
  return { ...(body.from ? { from: body.from } : {}), joins: body.joins, where: body.where, key: item.expr };
}

/** The alias of the subquery holding the rows at or past a cut (`cutRowsOrderedOutside`). */
export const CUT_ROWS = "__cut_rows";

/** a LIMIT that keeps every row: it only makes the engine see an ordered LIMIT */
const EVERY_ROW: Expr = { k: "lit", value: 9223372036854775807n, type: INT64 };

/**
 * A cut select (`s`: its order completed for ties and its WHERE holding the cut) in two levels:
 * `inner` selects the rows at or past the cut, ordered by the leading key alone under a LIMIT
 * that keeps them all, with every other order key as a hidden column `__k<i>`; `order` is the
 * completed order over `CUT_ROWS`' columns, for the outer query that applies it and the LIMIT.
 * The rows and their order are those of `s`: the inner LIMIT drops nothing, and the outer order
 * reads the same values.
 */
export function cutRowsOrderedOutside(
  s: Select,
  keyOf: (e: Expr) => string,
): { inner: Select; order: OrderItem[] } {
  const names = new Map(s.items.map((i) => [keyOf(i.expr), i.name] as const));
  const hidden: SelectItem[] = [];
  const order = s.orderBy.map((o, i): OrderItem => {
    const key = keyOf(o.expr);
    let name = names.get(key);
    if (name === undefined) {
      name = `__k${i}`;
      names.set(key, name);
      hidden.push({ expr: o.expr, name });
    }
    const notNull = o.expr.k === "col" && o.expr.notNull === true;
    return {
      ...o,
      expr: { k: "col", rel: CUT_ROWS, col: name, type: o.expr.type, ...(notNull ? { notNull } : {}) },
    };
  });
  const inner: Select = {
    ...s,
    items: [...s.items, ...hidden],
    orderBy: [s.orderBy[0]!],
    limit: EVERY_ROW,
  };
  return { inner, order };
}

/** The alias of the read-ahead's rows (`readAheadRows`), and its flag column. */
export const AHEAD_ROWS = "__ahead";
export const RETRY_COLUMN = "__retry";

/**
 * The rows of a cut select `s` (order completed, cut in its WHERE; `given` the select before)
 * read ahead instead of cut: its n+1 first rows by the leading key alone (an ordered LIMIT an
 * engine runs as a top-K read, with the wide columns read for those rows only), whose completed
 * order outside picks the same n rows as the cut — unless rows n and n+1 tie on the leading key,
 * when rows further on may tie too and belong in the result. The caller then runs the cut form.
 * `inner` reads the table of a plain CTE when the select only names that CTE's columns.
 */
export function readAheadRows(
  s: Select,
  given: Select,
  keyOf: (e: Expr) => string,
  cteBody?: (name: string) => Select | undefined,
): { inner: Select; order: OrderItem[]; limit: number } | undefined {
  if (given.limit?.k !== "lit") return undefined;
  const limit = Number(given.limit.value);
  if (!Number.isSafeInteger(limit) || limit < 1) return undefined;
  const { inner, order } = cutRowsOrderedOutside({ ...s, where: given.where }, keyOf);
  const ahead: Select = { ...inner, limit: { k: "lit", value: limit + 1, type: INT64 } };
  return { inner: (cteBody && readThroughPlainCte(ahead, cteBody)) ?? ahead, order, limit };
}

/**
 * `s` reading the table of the plain CTE it selects from, each of its columns replaced by the
 * CTE's expression for it; undefined unless every item and order key is a column of that CTE.
 */
function readThroughPlainCte(s: Select, cteBody: (name: string) => Select | undefined): Select | undefined {
  const from = s.from;
  if (!from || s.joins.length || s.where.length) return undefined;
  const body = plainFilterCte(from, cteBody);
  if (!body || body.items.some((i) => hasWindowCall(i.expr))) return undefined;
  const through = (e: Expr): Expr | undefined =>
    e.k === "col" && e.rel === from.alias ? body.items.find((i) => i.name === e.col)?.expr : undefined;
  const items: SelectItem[] = [];
  for (const i of s.items) {
    const expr = through(i.expr);
    if (!expr) return undefined;
    items.push({ name: i.name, expr });
  }
  const orderBy: OrderItem[] = [];
  for (const o of s.orderBy) {
    const expr = through(o.expr);
    if (!expr) return undefined;
    orderBy.push({ ...o, expr });
  }
  const { from: _cte, ...rest } = s;
  return {
    ...rest,
    items,
    orderBy,
    ...(body.from ? { from: body.from } : {}),
    joins: body.joins,
    where: body.where,
  };
}

/** The query-tree index of the cut's value in a cut-first main query (tree indexes start at 1). */
export const CUT_VALUE_PARAM = 0;

/**
 * The most table rows at or past the cut a cut-first main query materialises (`CutFirstSql.window`):
 * DuckDB fetches rows by its index only up to 2,048 (`index_scan_max_count`), and past that the
 * CTE would hold every column of a scan's rows — a selective filter whose n-th row is old (a rare
 * project) held ~700 MB for 400,000 rows and ran 3× slower than the one-statement cut.
 */
export const CUT_FIRST_MAX_WINDOW = 2048;

/** The CTE of a cut-first main query holding the table's rows at or past the cut. */
export const RECENT_ROWS = "__recent";

/**
 * A cut select `s` (order completed, cut in its WHERE; `given` the select before) in two steps
 * (`SqlEmitter.cutsFirst`): `bound`, the cut's scalar subquery, run first; then `main`, the select
 * with the cut compared to that value (`CUT_VALUE_PARAM`), and `table`, the table read whose
 * column `column` the leading key is, to be read only at or past the cut (`op`) — a constant
 * range of one column, which an engine can answer from an index. Undefined unless the key is a
 * column of a table the select (or the plain CTE it reads) reads alone, without joins.
 */
export function cutFirstPlan(
  s: Select,
  given: Select,
  cteBody?: (name: string) => Select | undefined,
): { bound: Expr; main: Select; table: FromItem; column: string; op: ">=" | "<="; cte?: string } | undefined {
  const cut = s.where[s.where.length - 1];
  const lead = s.orderBy[0];
  if (cut?.k !== "op" || (cut.op !== ">=" && cut.op !== "<=") || !lead) return undefined;
  const [key, bound] = cut.args as [Expr, Expr];
  if (key.k !== "col" || bound.k !== "subquery") return undefined;
  const read = tableColumnOf(s, key, cteBody);
  if (!read) return undefined;
  const param: Expr = { k: "param", index: CUT_VALUE_PARAM, type: key.type };
  const main: Select = {
    ...s,
    where: [...given.where, { k: "op", op: cut.op, args: [key, param], type: { t: "scalar", s: "BOOL" } }],
  };
  return {
    bound,
    main,
    table: read.table,
    column: read.column,
    op: cut.op,
    ...(s.from?.k === "cte" ? { cte: s.from.name } : {}),
  };
}

/**
 * Whether a cut-first plan's reads are read nowhere else in `query`: the table read it narrows to
 * the rows past the cut, and the CTE holding it, must be the select's alone — a subquery that
 * reads the same CTE (`WHERE timestamp > (SELECT min(timestamp) FROM e)`) would see only those rows.
 */
export function readOnlyByCutSelect(query: Query, plan: { table: FromItem; cte?: string }): boolean {
  let tableReads = 0;
  let cteReads = 0;
  forEachSelect(query, (select) => {
    for (const item of [select.from, ...select.joins.map((j) => j.item)]) {
      if (item === plan.table) tableReads++;
      if (plan.cte !== undefined && item?.k === "cte" && item.name === plan.cte) cteReads++;
    }
  });
  return tableReads === 1 && (plan.cte === undefined || cteReads === 1);
}

/** the table read (and its column) a select's key column comes from, directly or through a plain CTE */
function tableColumnOf(
  s: Select,
  key: Extract<Expr, { k: "col" }>,
  cteBody?: (name: string) => Select | undefined,
): { table: FromItem; column: string } | undefined {
  const from = s.from;
  if (!from || s.joins.length || key.rel !== from.alias) return undefined;
  if (from.k === "table") return { table: from, column: key.col };
  const body = cteBody && plainFilterCte(from, cteBody);
  if (body?.from?.k !== "table" || body.joins.length || body.items.some((i) => hasWindowCall(i.expr)))
    return undefined;
  const item = body.items.find((i) => i.name === key.col)?.expr;
  if (item?.k !== "col" || item.rel !== body.from.alias) return undefined;
  return { table: body.from, column: item.col };
}
