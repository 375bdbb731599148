import { QesError } from "../errors.ts";
import { type AstNode, aliasText, locationOf } from "../parse/parse-sql.ts";
import {
  analyzeCondition,
  analyzeExpr,
  analyzeValue,
  type ExprEnv,
  fail,
  recordAsExpr,
} from "./analyze-expr.ts";
import { analyzeFrom } from "./analyze-from.ts";
import { type AnalyzedQuery, type QueryOptions, unwrapNulls } from "./analyze-query.ts";
import { checkGrouping, hasAggregate } from "./check-grouping.ts";
import { type CompileContext, type CteInfo, MAX_SELECT_COLUMNS } from "./compile-context.ts";
import { requireGroupable, requireOrderable } from "./groupable.ts";
import type { Expr, Select, SetOp } from "./ir.ts";
import { dropPresenceImpliedBy } from "./record-presence.ts";
import { type DerivedOutput, type RangeVar, Scope, type Value, valueType } from "./scope.ts";
import { completeWindowOrders } from "./window-ties.ts";

/**
 * Parts of a SELECT node the analyser does not read, by the name a user knows them by: refused,
 * never dropped (the token pass refuses them first; this guards against the parser reading more).
 */
const UNREAD_SELECT_PARTS: Record<string, string> = {
  as_struct_val: "SELECT AS STRUCT / SELECT AS VALUE",
  for_sys_time_as_of: "FOR SYSTEM_TIME AS OF (time travel)",
};

export function analyzeSelect(ast: AstNode, ctx: CompileContext, opts: QueryOptions): AnalyzedQuery {
  for (const [key, name] of Object.entries(UNREAD_SELECT_PARTS))
    if (ast[key] !== null && ast[key] !== undefined)
      fail("sql_invalid", `${name} is not supported by qes.`, ast);
  const scope = new Scope(opts.outer);
  const select: Select = {
    k: "select",
    distinct: false,
    items: [],
    joins: [],
    where: [],
    groupBy: [],
    orderBy: [],
  };
  const fromVar: { cte?: CteInfo; alias?: string } = {};
  analyzeFrom((ast.from ?? []) as AstNode[], select, scope, ctx, opts, fromVar);
  const windows = new Map<string, AstNode>();
  for (const w of (ast.window?.expr ?? []) as AstNode[]) windows.set(String(w.name).toLowerCase(), w);
  const env = (clause: ExprEnv["clause"], alias?: ExprEnv["alias"]): ExprEnv => ({
    scope,
    ctx,
    clause,
    ctes: opts.ctes,
    windows,
    ...(alias ? { alias } : {}),
  });
  if (ast.where) {
    const where = analyzeCondition(ast.where, env("where"));
    select.where.push(where);
    dropPresenceImpliedBy(select, where);
  }
  if (ast.distinct?.type === "DISTINCT" || String(ast.distinct ?? "").toUpperCase() === "DISTINCT")
    select.distinct = true;

  // SELECT list, with BigQuery's output names.
  const outputs: DerivedOutput[] = [];
  const values: Value[] = [];
  let anonymous = 0;
  const columns = ast.columns === "*" ? [{ expr: { type: "star", value: "*" } }] : (ast.columns as AstNode[]);
  for (const item of columns) {
    const e = item.expr as AstNode;
    if (isStar(e)) {
      const modifier = String(item.type ?? "").toLowerCase();
      const listed = (item.expr_list ?? []) as AstNode[];
      const except = new Set<string>();
      const replace = new Map<string, Value>();
      if (modifier === "except") {
        for (const x of listed) except.add((implicitName(x.expr) ?? "").toLowerCase());
      } else if (modifier === "replace") {
        for (const x of listed) {
          // `* EXCEPT (…) REPLACE (…)` arrives as REPLACE entries `__qes_except AS name` (desugar.ts)
          if (x.expr?.type === "column_ref" && implicitName(x.expr)?.toLowerCase() === "__qes_except") {
            except.add(String(aliasText(x.as)).toLowerCase());
            continue;
          }
          if (!x.as) fail("sql_invalid", "SELECT * REPLACE needs `expression AS column`.", x.expr);
          replace.set(String(aliasText(x.as)).toLowerCase(), analyzeValue(x.expr, env("select")));
        }
      }
      const star = starColumns(e, scope, item);
      for (const name of [...except, ...replace.keys()]) {
        if (!star.some(([n]) => n.toLowerCase() === name)) {
          fail(
            "sql_invalid",
            `Column ${name} in SELECT * ${modifier.toUpperCase()} is not among the selected columns.`,
            item,
          );
        }
      }
      for (const [name, value] of star) {
        if (except.has(name.toLowerCase())) continue;
        outputs.push({ name, phys: "" });
        values.push(replace.get(name.toLowerCase()) ?? value);
      }
      continue;
    }
    const value = analyzeValue(e, env("select"));
    const name = aliasText(item.as) ?? trailingUnnestAlias(e) ?? implicitName(e) ?? `f${anonymous++}_`;
    outputs.push({ name, phys: "" });
    values.push(value);
  }
  const aliasOf = (name: string): Expr | undefined => {
    const lower = name.toLowerCase();
    const i = outputs.findIndex((o) => o.name.toLowerCase() === lower);
    if (i < 0) return undefined;
    const v = values[i]!;
    return v.kind === "expr" ? v.expr : undefined;
  };
  if (outputs.length > MAX_SELECT_COLUMNS) {
    throw new QesError(
      "sql_too_complex",
      `The SELECT list has ${outputs.length} columns; the limit is ${MAX_SELECT_COLUMNS}.`,
      locationOf(ast),
    );
  }
  outputs.forEach((o, i) => {
    o.phys = `c${i}`;
    const v = values[i]!;
    if (v.kind === "expr") select.items.push({ expr: v.expr, name: o.phys });
    else if (opts.final) select.items.push({ expr: recordAsExpr(v.rec), name: o.phys });
  });
  // BigQuery: SELECT DISTINCT compares rows, and an ARRAY (a repeated record too) is not comparable
  if (select.distinct) {
    outputs.forEach((o, i) => {
      const v = values[i]!;
      const t = v.kind === "expr" ? v.expr.type : undefined;
      const what =
        t?.t === "array"
          ? "an ARRAY"
          : t === undefined || t.t === "records" || (t.t === "record" && t.repeated)
            ? "an ARRAY of records"
            : t.t === "record"
              ? "a STRUCT"
              : undefined;
      if (what) fail("sql_invalid", `SELECT DISTINCT cannot compare column ${o.name}: it is ${what}.`, ast);
    });
  }
  if (opts.final) {
    // Final outputs are read by position; keep select items in output order.
    select.items.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
  }

  // GROUP BY: ordinals, SELECT aliases (which override FROM names), or expressions.
  for (const g of (ast.groupby?.columns ?? ast.groupby ?? []) as AstNode[]) {
    const key = resolveOrdinalOrAlias(g, values, outputs, env("group", aliasOf));
    requireGroupable(key.type, "Grouping", g);
    select.groupBy.push(key);
  }
  if (select.distinct) {
    for (const [i, v] of values.entries())
      requireGroupable(valueType(v), `SELECT DISTINCT (column ${outputs[i]!.name})`, ast);
  }
  if (ast.having) select.having = analyzeCondition(ast.having, env("having", aliasOf));
  if (ast.qualify) select.qualify = analyzeCondition(ast.qualify, env("qualify", aliasOf));

  // ORDER BY
  for (const o of (ast.orderby ?? []) as AstNode[]) {
    const { node: key, nulls } = unwrapNulls(o.expr);
    const e = resolveOrdinalOrAlias(key, values, outputs, env("order", aliasOf));
    requireOrderable(e.type, "ORDER BY", key);
    const desc = String(o.type ?? "ASC").toUpperCase() === "DESC";
    select.orderBy.push({ expr: e, desc, ...(nulls ? { nulls } : {}) });
  }
  applyLimit(ast.limit, select, ctx);
  completeWindowOrders(select);

  // A final SELECT without ORDER BY over a CTE that ends in ORDER BY keeps that order.
  const grouped =
    select.groupBy.length > 0 ||
    select.items.some((i) => hasAggregate(i.expr)) ||
    (select.having !== undefined && hasAggregate(select.having));
  if (grouped) checkGrouping(select, values, outputs, ast);
  if (
    opts.final &&
    select.orderBy.length === 0 &&
    !grouped &&
    !select.distinct &&
    fromVar.cte?.order &&
    select.joins.length === 0
  ) {
    const cte = fromVar.cte;
    const rel = fromVar.alias!;
    cte.order!.forEach((item, i) => {
      const name = cte.derived.demand(-1 - i, "order", () => item.expr);
      select.orderBy.push({
        expr: {
          k: "col",
          rel,
          col: name,
          type: item.expr.type,
          ...(notNull(item.expr) ? { notNull: true } : {}),
        } as Expr,
        desc: item.desc,
        ...(item.nulls ? { nulls: item.nulls } : {}),
      });
    });
  }
  const keepsOrder = select.orderBy.length > 0 && !select.limit;
  return {
    query: { ctes: [], body: select },
    outputs,
    branches: [{ select, values }],
    ...(keepsOrder ? { order: select.orderBy } : {}),
  };
}

export function notNull(e: Expr): boolean {
  return e.k === "col" && (e as { notNull?: boolean }).notNull === true;
}

export function isStar(e: AstNode): boolean {
  if (e.type === "star") return true;
  if (e.type === "column_ref") {
    const col = typeof e.column === "string" ? e.column : e.column?.expr?.value;
    return col === "*";
  }
  return false;
}

export function starColumns(e: AstNode, scope: Scope, item: AstNode): Array<[string, Value]> {
  const table = e.type === "column_ref" ? e.table : null;
  const vars = table ? [scope.findVar(String(table))].filter((v): v is RangeVar => !!v) : scope.vars;
  if (table && vars.length === 0) fail("sql_invalid", `Unrecognized name: ${table}.`, item);
  const out: Array<[string, Value]> = [];
  for (const v of vars) {
    for (const name of v.columnNames()) {
      if (!v.starExclude?.has(name.toLowerCase())) out.push([name, (v.column(name) ?? v.star?.(name))!]);
    }
  }
  return out;
}

/**
 * The column alias node-sql-parser took for an UNNEST's: in `x IN UNNEST(tags) AS has` the alias
 * follows the UNNEST that ends the item, and was read as the UNNEST's own (the column was `f0_`).
 * The UNNEST ends the item's rightmost operand chain.
 */
function trailingUnnestAlias(e: AstNode): string | undefined {
  let node: AstNode | undefined = e;
  while (node?.type === "binary_expr" || node?.type === "unary_expr")
    node = node.type === "binary_expr" ? node.right : node.expr;
  return node?.type === "unnest" && node.as ? aliasText(node.as) : undefined;
}

export function implicitName(e: AstNode): string | undefined {
  if (e.type !== "column_ref") return undefined;
  let last: string | undefined;
  if (typeof e.column === "string") last = e.column;
  else if (e.column?.expr) {
    if (e.column.suffix) last = String(e.column.suffix).split(".").filter(Boolean).pop();
    else if (!e.column.offset?.length)
      last = e.column.expr.type === "column_ref" ? implicitName(e.column.expr) : String(e.column.expr.value);
  }
  if (e.subFields?.length) last = String(e.subFields[e.subFields.length - 1]);
  return last;
}

export function resolveOrdinalOrAlias(
  node: AstNode,
  values: Value[],
  outputs: DerivedOutput[],
  env: ExprEnv,
): Expr {
  if (node.type === "number") {
    const i = Number(node.value) - 1;
    const v = values[i];
    if (!v)
      fail(
        "sql_invalid",
        `Ordinal ${node.value} is out of range: the SELECT list has ${values.length} columns.`,
        node,
      );
    if (v.kind !== "expr")
      fail("sql_invalid", `Cannot group or order by a record (column ${outputs[i]!.name}).`, node);
    return v.expr;
  }
  return analyzeExpr(node, env);
}

export function applyLimit(limit: AstNode | undefined, target: Select | SetOp, ctx: CompileContext): void {
  const values = (limit?.value ?? []) as AstNode[];
  if (values.length === 0) return;
  const toExpr = (n: AstNode): Expr => {
    const e = analyzeExpr(n, { scope: new Scope(), ctx, clause: "limit" });
    if (!(e.type.t === "scalar" && e.type.s === "INT64"))
      fail("sql_invalid", "LIMIT and OFFSET take INT64 values.", n);
    if (e.k === "lit" && Number(e.value) < 0)
      fail("sql_invalid", "LIMIT and OFFSET must not be negative.", n);
    return e;
  };
  const sep = String(limit?.seperator ?? "").toLowerCase();
  if (values.length === 2 && sep === ",") {
    target.offset = toExpr(values[0]!);
    target.limit = toExpr(values[1]!);
  } else {
    target.limit = toExpr(values[0]!);
    if (values[1]) target.offset = toExpr(values[1]);
  }
}
