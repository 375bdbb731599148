import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import {
  analyzeCondition,
  analyzeExpr,
  analyzeValue,
  type ExprEnv,
  fail,
  fieldOf,
  recordAsExpr,
} from "./analyze-expr.ts";
import type { CompileContext, CteInfo } from "./compile-context.ts";
import type { Body, Cte, Expr, FromItem, Join, OrderItem, Query, Select, SetOp } from "./ir.ts";
import { and, elementRoot, guarded, type RecordValue, tableRoot } from "./record-value.ts";
import {
  type DerivedOutput,
  DerivedRelation,
  derivedRoot,
  type RangeVar,
  Scope,
  type Value,
  valueType,
} from "./scope.ts";
import { commonType, INT64, type SqlType, typeName } from "./sql-type.ts";

/** A query analysed: its tree, and its output columns as values in its own scope. */
export interface AnalyzedQuery {
  query: Query;
  outputs: DerivedOutput[];
  /** per branch (one for a plain SELECT) the select and its output values */
  branches: Array<{ select: Select; values: Value[] }>;
  /** ORDER BY of a plain SELECT without LIMIT (kept by a final SELECT over it) */
  order?: OrderItem[];
}

export interface QueryOptions {
  /** the statement whose rows are returned: record outputs are materialised as JSON text */
  final: boolean;
  /** CTEs visible to this query (the stored query's, for consumer SQL) */
  ctes: Map<string, CteInfo>;
  /** a branch of a set operation: the order of a CTE it reads is not kept */
  branch?: boolean;
  outer?: Scope;
}

export function analyzeQuery(ast: AstNode, ctx: CompileContext, opts: QueryOptions): AnalyzedQuery {
  ctx.enter(ast);
  try {
    const { ctes, list } = analyzeWith(ast, ctx, opts.ctes, opts.outer);
    const result = analyzeBody(ast, ctx, { ...opts, ctes });
    result.query.ctes = list;
    return result;
  } finally {
    ctx.leave();
  }
}

/** The WITH clause of a query: each CTE sees the ones before it. */
export function analyzeWith(
  ast: AstNode,
  ctx: CompileContext,
  visible: Map<string, CteInfo>,
  outer?: Scope,
): { ctes: Map<string, CteInfo>; list: Cte[] } {
  const ctes = new Map(visible);
  const list: Cte[] = [];
  const own = new Set<string>();
  for (const w of (ast.with ?? []) as AstNode[]) {
    const info = analyzeCte(w, ctx, ctes, outer);
    const key = info.name.toLowerCase();
    if (own.has(key)) fail("sql_invalid", `Duplicate WITH name ${info.name}.`, w);
    own.add(key);
    ctes.set(key, info);
    list.push(info.cte);
  }
  return { ctes, list };
}

function analyzeCte(w: AstNode, ctx: CompileContext, ctes: Map<string, CteInfo>, outer?: Scope): CteInfo {
  const name = String(w.name?.value ?? w.name);
  if (w.columns?.length) fail("sql_invalid", `Column lists on WITH ${name} are not supported.`, w);
  const stmt = (w.stmt?.ast ?? w.stmt) as AstNode;
  const analyzed = analyzeQuery(stmt, ctx, { final: false, ctes, ...(outer ? { outer } : {}) });
  const phys = ctx.alias("q");
  const derived = new DerivedRelation(analyzed.outputs, analyzed.branches, phys);
  // An ORDER BY without LIMIT has no effect inside SQL; it is dropped from the CTE and re-applied
  // by a final SELECT over it (DESIGN.md §3).
  const body = analyzed.query.body;
  if (analyzed.order) body.orderBy = [];
  return {
    name,
    cte: { name: phys, query: analyzed.query },
    derived,
    outputs: analyzed.outputs,
    values: analyzed.branches[0]!.values,
    ...(analyzed.order ? { order: analyzed.order } : {}),
  };
}

const SET_OPS: Record<string, SetOp["op"]> = {
  "UNION ALL": "union all",
  "UNION DISTINCT": "union distinct",
  "EXCEPT DISTINCT": "except distinct",
  "INTERSECT DISTINCT": "intersect distinct",
};

function analyzeBody(ast: AstNode, ctx: CompileContext, opts: QueryOptions): AnalyzedQuery {
  if (ast.type !== "select") fail("sql_invalid", "Only SELECT queries are allowed.", ast);
  if (!ast._next) return analyzeSelect(ast, ctx, opts);
  // BigQuery applies a trailing ORDER BY / LIMIT to the whole set operation; the parser hangs it
  // on the last branch.
  const parts: AstNode[] = [];
  const ops: SetOp["op"][] = [];
  for (let n: AstNode | undefined = ast; n; n = n._next) {
    parts.push(n);
    if (n._next) {
      const op = SET_OPS[String(n.set_op ?? "").toUpperCase()];
      if (!op) {
        fail(
          "sql_invalid",
          `Set operation ${String(n.set_op ?? "").toUpperCase() || "UNION"} needs ALL or DISTINCT (UNION ALL, UNION DISTINCT, EXCEPT DISTINCT, INTERSECT DISTINCT).`,
          n._next,
        );
      }
      ops.push(op);
    }
  }
  const last = parts[parts.length - 1]!;
  const orderby = last.orderby;
  const limit = last.limit;
  const branches = parts.map((p) =>
    analyzeSelect(
      {
        ...p,
        _next: undefined,
        orderby: p === last ? null : p.orderby,
        limit: p === last ? null : p.limit,
        with: null,
      },
      ctx,
      { ...opts, branch: true },
    ),
  );
  const first = branches[0]!;
  for (const [i, b] of branches.entries()) {
    if (b.outputs.length !== first.outputs.length) {
      fail(
        "sql_invalid",
        `Queries in a set operation have different numbers of columns: ${first.outputs.length} and ${b.outputs.length}.`,
        parts[i],
      );
    }
    b.branches[0]!.values.forEach((v, c) => {
      const t0 = valueType(first.branches[0]!.values[c]!);
      const t = valueType(v);
      if (!commonType(t0, t) && !(t0.t === "record" && t.t === "record")) {
        fail(
          "sql_invalid",
          `Column ${c + 1} of a set operation has incompatible types ${typeName(t0)} and ${typeName(t)}.`,
          parts[i],
        );
      }
    });
  }
  // Columns take their common supertype in every branch (INT64 with FLOAT64 is FLOAT64).
  first.outputs.forEach((o, c) => {
    let common: SqlType = { t: "null" };
    for (const b of branches) common = commonType(common, valueType(b.branches[0]!.values[c]!)) ?? common;
    if (common.t !== "scalar") return;
    for (const b of branches) {
      const item = b.branches[0]!.select.items.find((it) => it.name === o.phys);
      if (item && item.expr.type.t === "scalar" && item.expr.type.s !== common.s) {
        item.expr = { k: "cast", expr: item.expr, to: common.s, safe: false, type: common };
      }
      const v = b.branches[0]!.values[c]!;
      if (v.kind === "expr" && item) b.branches[0]!.values[c] = { kind: "expr", expr: item.expr };
    }
  });
  let body: Body = first.query.body;
  branches.slice(1).forEach((b, i) => {
    body = { k: "setop", op: ops[i]!, left: { ctes: [], body }, right: b.query, orderBy: [] };
  });
  const setop = body as SetOp;
  const outputs = first.outputs;
  // ORDER BY of a set operation names output columns (or ordinals).
  for (const o of (orderby ?? []) as AstNode[]) {
    const { node, nulls } = unwrapNulls(o.expr);
    let index = -1;
    if (node.type === "number") index = Number(node.value) - 1;
    else if (node.type === "column_ref") {
      const name = implicitName(node)?.toLowerCase();
      index = outputs.findIndex((x) => x.name.toLowerCase() === name);
    }
    const out = outputs[index];
    if (!out) fail("sql_invalid", "ORDER BY of a set operation must name an output column.", node);
    const type = valueType(first.branches[0]!.values[index]!);
    const desc = String(o.type ?? "ASC").toUpperCase() === "DESC";
    setop.orderBy.push({
      expr: { k: "col", rel: "", col: out.phys, type },
      desc,
      ...(nulls ? { nulls } : {}),
    });
  }
  applyLimit(limit, setop, ctx);
  return {
    query: { ctes: [], body: setop },
    outputs,
    branches: branches.flatMap((b) => b.branches),
  };
}

/** `__qes_nulls_first(e)` / `__qes_nulls_last(e)` from desugaring: the key and its NULLS order. */
export function unwrapNulls(node: AstNode): { node: AstNode; nulls?: "first" | "last" } {
  if (node?.type === "function") {
    const name = String(node.name?.name?.[0]?.value ?? node.name?.schema?.value ?? "").toLowerCase();
    if (name === "__qes_nulls_first" || name === "__qes_nulls_last") {
      return { node: node.args.value[0], nulls: name.endsWith("first") ? "first" : "last" };
    }
  }
  return { node };
}

// ---------------------------------------------------------------------------------------------

function analyzeSelect(ast: AstNode, ctx: CompileContext, opts: QueryOptions): AnalyzedQuery {
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
  if (ast.where) select.where.push(analyzeCondition(ast.where, env("where")));
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
            except.add(String(x.as).toLowerCase());
            continue;
          }
          if (!x.as) fail("sql_invalid", "SELECT * REPLACE needs `expression AS column`.", x.expr);
          replace.set(String(x.as).toLowerCase(), analyzeValue(x.expr, env("select")));
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
    const name = item.as ? String(item.as) : (implicitName(e) ?? `f${anonymous++}_`);
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
  outputs.forEach((o, i) => {
    o.phys = `c${i}`;
    const v = values[i]!;
    if (v.kind === "expr") select.items.push({ expr: v.expr, name: o.phys });
    else if (opts.final) select.items.push({ expr: recordAsExpr(v.rec), name: o.phys });
  });
  if (opts.final) {
    // Final outputs are read by position; keep select items in output order.
    select.items.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
  }

  // GROUP BY: ordinals, SELECT aliases (which override FROM names), or expressions.
  for (const g of (ast.groupby?.columns ?? ast.groupby ?? []) as AstNode[]) {
    select.groupBy.push(resolveOrdinalOrAlias(g, values, outputs, env("group", aliasOf)));
  }
  if (ast.having) select.having = analyzeCondition(ast.having, env("having", aliasOf));
  if (ast.qualify) select.qualify = analyzeCondition(ast.qualify, env("qualify", aliasOf));

  // ORDER BY
  for (const o of (ast.orderby ?? []) as AstNode[]) {
    const { node: key, nulls } = unwrapNulls(o.expr);
    const e = resolveOrdinalOrAlias(key, values, outputs, env("order", aliasOf));
    const desc = String(o.type ?? "ASC").toUpperCase() === "DESC";
    select.orderBy.push({ expr: e, desc, ...(nulls ? { nulls } : {}) });
  }
  applyLimit(ast.limit, select, ctx);

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

function notNull(e: Expr): boolean {
  return e.k === "col" && (e as { notNull?: boolean }).notNull === true;
}

function isStar(e: AstNode): boolean {
  if (e.type === "star") return true;
  if (e.type === "column_ref") {
    const col = typeof e.column === "string" ? e.column : e.column?.expr?.value;
    return col === "*";
  }
  return false;
}

function starColumns(e: AstNode, scope: Scope, item: AstNode): Array<[string, Value]> {
  const table = e.type === "column_ref" ? e.table : null;
  const vars = table ? [scope.findVar(String(table))].filter((v): v is RangeVar => !!v) : scope.vars;
  if (table && vars.length === 0) fail("sql_invalid", `Unrecognized name: ${table}.`, item);
  const out: Array<[string, Value]> = [];
  for (const v of vars) {
    for (const name of v.columnNames()) {
      if (!v.starExclude?.has(name.toLowerCase())) out.push([name, v.column(name)!]);
    }
  }
  return out;
}

function implicitName(e: AstNode): string | undefined {
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

function resolveOrdinalOrAlias(node: AstNode, values: Value[], outputs: DerivedOutput[], env: ExprEnv): Expr {
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

function applyLimit(limit: AstNode | undefined, target: Select | SetOp, ctx: CompileContext): void {
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

/**
 * In an aggregating SELECT every output, HAVING, QUALIFY and ORDER BY expression must be built
 * from grouped expressions and aggregates (BigQuery refuses the rest; so do we, before any engine).
 */
function checkGrouping(select: Select, values: Value[], outputs: DerivedOutput[], ast: AstNode): void {
  const groups = new Set(select.groupBy.map(exprKey));
  values.forEach((v, i) => {
    if (v.kind === "record") {
      fail(
        "sql_invalid",
        `Column ${outputs[i]!.name} is a record; it can be neither grouped nor aggregated.`,
        ast,
      );
    }
  });
  const check = (e: Expr, where: string) => {
    const bad = ungrouped(e, groups);
    if (bad) {
      const name = bad.k === "col" ? bad.col : "an expression";
      fail(
        "sql_invalid",
        `${where} references ${describeColumn(bad, outputs) ?? name}, which is neither grouped nor aggregated.`,
        ast,
      );
    }
  };
  for (const [i, item] of select.items.entries()) check(item.expr, `SELECT list item ${i + 1}`);
  if (select.having) check(select.having, "HAVING");
  if (select.qualify) check(select.qualify, "QUALIFY");
  for (const o of select.orderBy) check(o.expr, "ORDER BY");
}

function describeColumn(e: Expr, _outputs: DerivedOutput[]): string | undefined {
  return e.k === "col" ? `column ${e.col}` : undefined;
}

function exprKey(e: Expr): string {
  return JSON.stringify(e, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
}

/** The first column reference of `e` outside aggregates and grouped expressions, if any. */
function ungrouped(e: Expr, groups: Set<string>): Expr | undefined {
  if (groups.has(exprKey(e))) return undefined;
  switch (e.k) {
    case "col":
      return e;
    case "json":
      return ungrouped(e.base, groups);
    case "call":
      if (e.agg && !e.over) return undefined;
      for (const a of e.args) {
        const bad = ungrouped(a, groups);
        if (bad) return bad;
      }
      for (const p of [...(e.over?.partitionBy ?? []), ...(e.over?.orderBy ?? []).map((o) => o.expr)]) {
        const bad = ungrouped(p, groups);
        if (bad) return bad;
      }
      return undefined;
    case "op":
      for (const a of e.args) {
        const bad = ungrouped(a, groups);
        if (bad) return bad;
      }
      return undefined;
    case "case":
      for (const x of [e.operand, ...e.whens.flat(), e.else]) {
        const bad = x ? ungrouped(x, groups) : undefined;
        if (bad) return bad;
      }
      return undefined;
    case "cast":
      return ungrouped(e.expr, groups);
    case "in":
      for (const x of [e.expr, ...e.list]) {
        const bad = ungrouped(x, groups);
        if (bad) return bad;
      }
      return undefined;
    case "interval":
      return ungrouped(e.value, groups);
    case "subquery":
      return e.expr ? ungrouped(e.expr, groups) : undefined;
    default:
      return undefined;
  }
}

export function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case "call":
      return (!!e.agg && !e.over) || e.args.some(hasAggregate);
    case "op":
      return e.args.some(hasAggregate);
    case "case":
      return (
        (!!e.operand && hasAggregate(e.operand)) ||
        e.whens.some(([a, b]) => hasAggregate(a) || hasAggregate(b)) ||
        (!!e.else && hasAggregate(e.else))
      );
    case "cast":
      return hasAggregate(e.expr);
    case "in":
      return hasAggregate(e.expr) || e.list.some(hasAggregate);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// FROM

function analyzeFrom(
  items: AstNode[],
  select: Select,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
  fromVar: { cte?: CteInfo; alias?: string },
): void {
  items.forEach((item, i) => {
    const joinText = String(item.join ?? (i === 0 ? "" : "CROSS JOIN")).toUpperCase();
    const kind: Join["kind"] = joinText.startsWith("LEFT")
      ? "left"
      : joinText.startsWith("RIGHT")
        ? "right"
        : joinText.startsWith("FULL")
          ? "full"
          : joinText.startsWith("CROSS") || joinText === ""
            ? "cross"
            : "inner";
    if (item.type === "unnest") {
      const from = analyzeUnnest(item, kind, select, scope, ctx, opts);
      if (i === 0) {
        if (!from) fail("sql_invalid", "UNNEST of a record cannot be the first FROM item.", item);
        select.from = from!;
      } else if (from) {
        select.joins.push({
          kind: kind === "left" ? "left" : "cross",
          item: from,
          ...(kind === "left"
            ? { on: { k: "lit", value: true, type: { t: "scalar", s: "BOOL" } } as Expr }
            : {}),
        });
      }
      return;
    }
    // FROM t, t.arr AS x: an implicit UNNEST of a path that starts at an earlier FROM item.
    if (i > 0 && item.db && !item.expr && scope.findVar(String(item.db))) {
      const path: AstNode = {
        type: "column_ref",
        table: item.db,
        column: item.table,
        subFields: [],
        loc: item.loc,
      };
      const from = analyzeUnnest(
        { type: "unnest", expr: path, as: item.as ?? item.table, on: item.on, loc: item.loc },
        kind,
        select,
        scope,
        ctx,
        opts,
      );
      if (from)
        select.joins.push({
          kind: kind === "left" ? "left" : "cross",
          item: from,
          ...(kind === "left"
            ? { on: { k: "lit", value: true, type: { t: "scalar", s: "BOOL" } } as Expr }
            : {}),
        });
      return;
    }
    const using = ((item.using ?? []) as AstNode[]).map((u) => String(u.value ?? u));
    const leftValues = using.map((name) => {
      const v = scope.findColumn(name);
      if (!v || "ambiguous" in v || v.kind !== "expr")
        fail("sql_invalid", `USING column ${name} must name one column of the left side.`, item);
      return (v as Extract<Value, { kind: "expr" }>).expr;
    });
    const bound = bindTableItem(item, scope, ctx, opts);
    if (i === 0) {
      select.from = bound.from;
      if (bound.cte) {
        fromVar.cte = bound.cte;
        fromVar.alias = bound.from.alias;
      }
    } else {
      let on = item.on ? analyzeCondition(item.on, { scope, ctx, clause: "on", ctes: opts.ctes }) : undefined;
      if (using.length) {
        // JOIN … USING (c): equal columns, merged into one name (the left side's).
        const right = scope.vars[scope.vars.length - 1]!;
        right.starExclude = new Set(using.map((u) => u.toLowerCase()));
        using.forEach((name, k) => {
          const r = right.column(name);
          if (!r || r.kind !== "expr")
            fail("sql_invalid", `USING column ${name} is not a column of the joined table.`, item);
          const eq: Expr = {
            k: "op",
            op: "=",
            args: [leftValues[k]!, (r as Extract<Value, { kind: "expr" }>).expr],
            type: { t: "scalar", s: "BOOL" },
          };
          on = on ? { k: "op", op: "AND", args: [on, eq], type: { t: "scalar", s: "BOOL" } } : eq;
          scope.merged.set(name.toLowerCase(), { kind: "expr", expr: leftValues[k]! });
        });
      }
      if ((kind === "inner" || kind === "left" || kind === "right" || kind === "full") && !on) {
        fail("sql_invalid", `${kind.toUpperCase()} JOIN needs an ON condition.`, item);
      }
      select.joins.push({ kind, item: bound.from, ...(on ? { on } : {}) });
      fromVar.cte = undefined;
    }
  });
}

function bindTableItem(
  item: AstNode,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
): { from: FromItem; cte?: CteInfo } {
  if (item.expr?.ast) {
    const analyzed = analyzeQuery(item.expr.ast, ctx, {
      final: false,
      ctes: opts.ctes,
      ...(opts.outer ? { outer: opts.outer } : {}),
    });
    const alias = ctx.alias("s");
    const derived = new DerivedRelation(analyzed.outputs, analyzed.branches, alias);
    if (analyzed.order && !analyzed.query.body.limit) analyzed.query.body.orderBy = [];
    const info: CteInfo = {
      name: alias,
      cte: { name: alias, query: analyzed.query },
      derived,
      outputs: analyzed.outputs,
      values: analyzed.branches[0]!.values,
      ...(analyzed.order ? { order: analyzed.order } : {}),
    };
    bindDerived(scope, String(item.as ?? alias), alias, info);
    return { from: { k: "subquery", query: analyzed.query, alias }, cte: info };
  }
  const name = [item.db, item.table].filter(Boolean).map(String).join(".");
  const aliasName = String(item.as ?? item.table);
  const cte = !item.db ? opts.ctes.get(name.toLowerCase()) : undefined;
  if (cte) {
    const alias = ctx.alias("r");
    ctx.referenced.add(cte.cte.name);
    bindDerived(scope, aliasName, alias, cte);
    return { from: { k: "cte", name: cte.cte.name, alias }, cte };
  }
  if (ctx.mode === "consumer") {
    throw new QesError(
      "relation_not_allowed",
      `Table ${name} is not allowed: consumer SQL may read only the stored query's CTEs (${[...opts.ctes.values()].map((c) => c.name).join(", ")}).`,
      locationOf(item),
    );
  }
  const source = ctx.schema.sources[name];
  if (!source) {
    throw new QesError("relation_not_allowed", `Table ${name} is not a known log source.`, locationOf(item));
  }
  const alias = ctx.alias("t");
  const root = tableRoot(alias, source);
  const rec: RecordValue = {
    root,
    path: [],
    node: { name, kind: "record", fields: source.fields },
    repeated: false,
  };
  scope.vars.push({ ...recordVar(aliasName.toLowerCase(), rec, true), self: undefined });
  return { from: { k: "table", table: source.table, alias } };
}

/** Makes a CTE's or subquery's outputs visible under `aliasName`; records resolve on demand. */
function bindDerived(scope: Scope, aliasName: string, alias: string, info: CteInfo): void {
  const columnValue = (i: number): Value => {
    const v = info.values[i]!;
    const o = info.outputs[i]!;
    if (v.kind === "record") {
      return {
        kind: "record",
        rec: {
          root: derivedRoot(alias, info.derived, i),
          path: [],
          node: v.rec.node,
          repeated: v.rec.repeated,
        },
      };
    }
    const col: Expr = { k: "col", rel: alias, col: o.phys, type: v.expr.type };
    if (isFromJson(v.expr)) col.fromJson = true;
    if (notNull(v.expr)) col.notNull = true;
    return { kind: "expr", expr: col };
  };
  const names = info.outputs.map((o) => o.name);
  scope.vars.push({
    name: aliasName.toLowerCase(),
    column: (n) => {
      const i = names.findIndex((x) => x.toLowerCase() === n.toLowerCase());
      return i < 0 ? undefined : columnValue(i);
    },
    columnNames: () => names.filter(Boolean),
    schemaless: false,
  });
}

function isFromJson(e: Expr): boolean {
  return "fromJson" in e && e.fromJson === true;
}

/**
 * UNNEST of a record (a JSON object, REPEATED RECORD of ≤1) needs no join: its element is the
 * object itself, present or not. CROSS JOIN keeps rows where it is present; LEFT JOIN … ON keeps
 * every row and guards the element's fields. Only real arrays become engine-level unnests.
 */
function analyzeUnnest(
  item: AstNode,
  kind: Join["kind"],
  select: Select,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
): FromItem | undefined {
  const env: ExprEnv = { scope, ctx, clause: "from", ctes: opts.ctes };
  const value = analyzeValue(item.expr, env);
  const name = String(item.as ?? "").toLowerCase();
  const offsetName = item.with_offset ? String(item.with_offset.as ?? "offset").toLowerCase() : undefined;
  if (value.kind === "record" && !offsetName) {
    const rec = value.rec;
    const presence = and(rec.guard, rec.root.presence(rec.path))!;
    let element: RecordValue;
    if (kind === "left") {
      const on = item.on ? analyzeOnForElement(item, rec, name, scope, ctx) : undefined;
      element = { ...rec, repeated: false, guard: on ? and(presence, on) : presence };
    } else {
      select.where.push(presence);
      element = { ...rec, repeated: false };
      if (item.on) {
        const on = analyzeOnForElement(item, rec, name, scope, ctx);
        if (on) select.where.push(on);
      }
    }
    scope.vars.push(elementVar(name, element));
    return undefined;
  }
  let array: Expr;
  let t: SqlType;
  if (value.kind === "record") {
    // WITH OFFSET over a one-element record: expand its JSON text as an array of one.
    array = {
      k: "call",
      fn: "__JSON_WRAP_ARRAY",
      args: [recordAsExpr({ ...value.rec, repeated: false })],
      type: { t: "records", node: value.rec.node },
    };
    t = array.type;
  } else {
    array = value.expr;
    t = array.type;
  }
  if (t.t === "null") {
    // UNNEST of a field the schema does not know: no rows (CROSS) or a NULL element (LEFT).
    if (kind !== "left") select.where.push({ k: "lit", value: false, type: { t: "scalar", s: "BOOL" } });
    scope.vars.push({
      name,
      column: () => undefined,
      columnNames: () => [],
      self: { kind: "expr", expr: array },
      schemaless: true,
    });
    if (offsetName)
      scope.vars.push({
        name: offsetName,
        column: () => undefined,
        columnNames: () => [],
        self: { kind: "expr", expr: { k: "lit", value: null, type: INT64 } },
        schemaless: false,
      });
    return undefined;
  }
  if (t.t !== "records" && t.t !== "array") {
    return fail("sql_invalid", `UNNEST needs an array, got ${typeName(t)}.`, item);
  }
  const alias = ctx.alias("u");
  const elementType: SqlType =
    t.t === "array" ? { t: "scalar", s: t.element } : { t: "record", node: t.node, repeated: false };
  const elementExpr: Expr = {
    k: "col",
    rel: alias,
    col: "value",
    type: t.t === "array" ? elementType : { t: "scalar", s: "STRING" },
    ...(t.t === "array" && !t.native ? { fromJson: true } : {}),
  };
  if (t.t === "array") {
    scope.vars.push({
      name,
      column: () => undefined,
      columnNames: () => [],
      self: { kind: "expr", expr: elementExpr },
      schemaless: false,
    });
  } else {
    scope.vars.push(
      elementVar(name, { root: elementRoot(elementExpr), path: [], node: t.node, repeated: false }),
    );
  }
  if (offsetName) {
    const off: Expr = { k: "col", rel: alias, col: "off", type: INT64 };
    scope.vars.push({
      name: offsetName,
      column: () => undefined,
      columnNames: () => [],
      self: { kind: "expr", expr: off },
      schemaless: false,
    });
  }
  if (item.on) {
    const on = analyzeCondition(item.on, { scope, ctx, clause: "on", ctes: opts.ctes });
    if (!(on.k === "lit" && on.value === true))
      fail("sql_invalid", "JOIN UNNEST(array) … ON supports only ON TRUE.", item.on);
  }
  return { k: "unnest", array, alias, elementType, withOffset: !!offsetName };
}

function analyzeOnForElement(
  item: AstNode,
  rec: RecordValue,
  name: string,
  scope: Scope,
  ctx: CompileContext,
): Expr | undefined {
  if (!item.on) return undefined;
  const inner = new Scope(scope);
  inner.vars.push(elementVar(name, { ...rec, repeated: false }));
  const on = analyzeCondition(item.on, { scope: inner, ctx, clause: "on" });
  return on.k === "lit" && on.value === true ? undefined : on;
}

function elementVar(name: string, element: RecordValue): RangeVar {
  return recordVar(name, element);
}

/** Fixed columns of every source: typed by the service, not inferred from JSON, never NULL for id/timestamp. */
const TYPED_BY_SERVICE = new Set(["id", "timestamp", "event_message", "project"]);
const NEVER_NULL = new Set(["id", "timestamp"]);

/** A range variable whose columns are the fields of a record (a table row or an UNNEST element). */
function recordVar(name: string, rec: RecordValue, isTableRow = false): RangeVar {
  return {
    name,
    column: (n) => {
      const v = fieldOf(rec, n);
      if (v.kind === "expr" && v.expr.k === "lit" && v.expr.value === null && !hasField(rec, n))
        return undefined;
      if (isTableRow && v.kind === "expr" && v.expr.k === "col") {
        const field = n.toLowerCase();
        if (TYPED_BY_SERVICE.has(field) && rec.node.fields?.[field]) {
          const { fromJson: _, ...rest } = v.expr;
          return { kind: "expr", expr: { ...rest, ...(NEVER_NULL.has(field) ? { notNull: true } : {}) } };
        }
      }
      return v;
    },
    columnNames: () => Object.keys(rec.node.fields ?? {}),
    self: { kind: "record", rec },
    schemaless: true,
  };
}

function hasField(rec: RecordValue, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(rec.node.fields ?? {}).some((k) => k.toLowerCase() === lower);
}

export type { Body };
export { guarded, INT64, valueType };
