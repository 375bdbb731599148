import { QesError } from "../errors.ts";
import { type AstNode, locationOf } from "../parse/parse-sql.ts";
import { fail } from "./analyze-expr.ts";
import { analyzeSelect, applyLimit, implicitName, notNull } from "./analyze-select.ts";
import { type CompileContext, type CteInfo, MAX_SET_OPERANDS } from "./compile-context.ts";
import { requireGroupable } from "./groupable.ts";
import type { Body, Cte, Expr, OrderItem, Query, Select, SetOp } from "./ir.ts";
import { type DerivedOutput, DerivedRelation, type Scope, type Value, valueType } from "./scope.ts";
import { commonType, type SqlType, typeName } from "./sql-type.ts";

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

export function analyzeCte(
  w: AstNode,
  ctx: CompileContext,
  ctes: Map<string, CteInfo>,
  outer?: Scope,
): CteInfo {
  const name = String(w.name?.value ?? w.name);
  if (w.columns?.length) fail("sql_invalid", `Column lists on WITH ${name} are not supported.`, w);
  const stmt = (w.stmt?.ast ?? w.stmt) as AstNode;
  const {
    result: { result: analyzed, relations },
    chain,
  } = ctx.cteChain(
    () =>
      ctx.ownJoinGraph(() => analyzeQuery(stmt, ctx, { final: false, ctes, ...(outer ? { outer } : {}) })),
    [w, w.name, stmt].find((n) => locationOf(n).line !== undefined) ?? w,
  );
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
    relations,
    chain,
  };
}

export const SET_OPS: Record<string, SetOp["op"]> = {
  "UNION ALL": "union all",
  "UNION DISTINCT": "union distinct",
  "EXCEPT DISTINCT": "except distinct",
  "INTERSECT DISTINCT": "intersect distinct",
};

export function analyzeBody(ast: AstNode, ctx: CompileContext, opts: QueryOptions): AnalyzedQuery {
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
  if (parts.length > MAX_SET_OPERANDS) {
    throw new QesError(
      "sql_too_complex",
      `A set operation joins ${parts.length} queries; the limit is ${MAX_SET_OPERANDS}.`,
      locationOf(parts[MAX_SET_OPERANDS]),
    );
  }
  const last = parts[parts.length - 1]!;
  // the parser puts the operation's ORDER BY and LIMIT on its last operand, unless that operand
  // is parenthesised: then they are the operand's own (desugar's parenthesisedLastOperand keeps
  // an operation's after such an operand)
  const ownOrder = (p: AstNode) => p !== last || last.parentheses_symbol === true;
  const orderby = ownOrder(last) ? null : last.orderby;
  const limit = ownOrder(last) ? null : last.limit;
  // each branch is a join graph of its own; the whole operation is one relation of the outer one
  ctx.joinRelations(1, ast);
  const branches = parts.map(
    (p) =>
      ctx.ownJoinGraph(() =>
        analyzeSelect(
          {
            ...p,
            _next: undefined,
            orderby: ownOrder(p) ? p.orderby : null,
            limit: ownOrder(p) ? p.limit : null,
            with: null,
          },
          ctx,
          { ...opts, branch: true },
        ),
      ).result,
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
  // a DISTINCT set operation compares whole rows: a STRUCT column cannot be compared so
  const distinctOp = ops.find((op) => op !== "union all");
  if (distinctOp) {
    for (const [c, v] of first.branches[0]!.values.entries())
      requireGroupable(valueType(v), `${distinctOp.toUpperCase()} (column ${c + 1})`, parts[0]);
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
  // a column is never NULL only if it is never NULL in every branch (outside, the first stands for all)
  first.branches[0]!.values.forEach((v, c) => {
    if (v.kind !== "expr" || !notNull(v.expr)) return;
    if (
      branches.every((b) =>
        b.branches.every((x) => {
          const w = x.values[c];
          return w?.kind === "expr" && notNull(w.expr);
        }),
      )
    )
      return;
    const { notNull: _, ...expr } = v.expr as Extract<Expr, { k: "col" }>;
    first.branches[0]!.values[c] = { kind: "expr", expr };
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
