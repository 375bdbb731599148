import type { Cte, Expr, FromItem, OrderItem, Query, Select, SetOp, WindowSpec } from "../compile/ir.ts";
import type { SqlType } from "../compile/sql-type.ts";
import { QesError } from "../errors.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import type { Dialect, EmittedSql } from "./dialect.ts";

export type CallExpr = Extract<Expr, { k: "call" }>;
/** Emits one catalogue function from its emitted arguments (sqlglot's TRANSFORMS, one row each). */
export type FunctionEmitter = (args: string[], call: CallExpr, emitter: SqlEmitter) => string;

/** `name(args…)` under another name: most rows of a dialect's table. */
export const rename =
  (name: string): FunctionEmitter =>
  (args) =>
    `${name}(${args.join(", ")})`;

/**
 * The default emitter: standard SQL for the typed query tree. A dialect subclasses it and
 * overrides only what differs (Kysely's query compilers), mostly through its function table.
 */
export abstract class SqlEmitter implements Dialect {
  abstract readonly name: string;
  /** how each catalogue function is written; dialects spread the default table and override rows */
  abstract readonly functions: Record<string, FunctionEmitter>;

  abstract typeName(type: ScalarType): string;
  abstract param(index: number, type: SqlType): string;
  abstract timestampLiteral(micros: bigint, type: ScalarType): string;
  /** value at `path` inside JSON text `base`: typed scalar, or JSON text when `type` is not scalar */
  abstract jsonExtract(base: string, path: string[], type: SqlType): string;
  abstract safeCast(expr: string, from: SqlType, to: ScalarType): string;
  /**
   * A FROM item expanding an array to rows with a column `value` (and `off`, its 0-based
   * position, when asked): JSON text of an array, or an engine list when the type is `native`.
   */
  abstract unnestFrom(
    array: string,
    alias: string,
    arrayType: SqlType,
    elementType: SqlType,
    withOffset: boolean,
  ): string;
  abstract interval(amount: string, unit: string): string;
  /** whether the engine reads QUALIFY; otherwise the select is wrapped in a filtering subquery */
  readonly supportsQualify: boolean = true;

  /** CTEs of the query being emitted (subqueries in expressions emit with the same set) */
  protected usedCtes: Set<string> = new Set();

  /** query-tree parameter index → emitted `$n`, in order of first appearance */
  private paramSlots: Map<number, number> = new Map();

  emit(query: Query): EmittedSql {
    const used = this.reachableCtes(query);
    this.usedCtes = used;
    this.paramSlots = new Map();
    const sql = this.query(query, used);
    return { sql, params: [...this.paramSlots.keys()] };
  }

  quoteIdent(name: string): string {
    return `"${name.replace(/"/g, '""')}"`;
  }

  stringLiteral(value: string): string {
    return `'${value.replace(/'/g, "''")}'`;
  }

  protected query(q: Query, used: Set<string>): string {
    const ctes = q.ctes.filter((c) => used.has(c.name));
    const withClause = ctes.length ? `WITH ${ctes.map((c) => this.cte(c, used)).join(",\n")}\n` : "";
    return withClause + this.body(q.body, used);
  }

  protected cte(c: Cte, used: Set<string>): string {
    return `${this.quoteIdent(c.name)} AS (\n${this.query(c.query, used)}\n)`;
  }

  protected body(b: Select | SetOp, used: Set<string>): string {
    return b.k === "select" ? this.select(b, used) : this.setOp(b, used);
  }

  protected setOp(s: SetOp, used: Set<string>): string {
    const op = s.op.toUpperCase();
    const sql = `(${this.query(s.left, used)})\n${op}\n(${this.query(s.right, used)})`;
    if (!s.orderBy.length && !s.limit && !s.offset) return sql;
    // Ordered from outside: engines accept only bare column names in a set operation's ORDER BY.
    const order = s.orderBy.length ? `\nORDER BY ${s.orderBy.map((o) => this.orderItem(o)).join(", ")}` : "";
    return `SELECT * FROM (\n${sql}\n) AS "__set"${order}${this.limitClause(s.limit, s.offset)}`;
  }

  protected select(s: Select, used: Set<string>): string {
    if (s.qualify && !this.supportsQualify) return this.selectWithQualifyWrapped(s, used);
    const items = s.items.length
      ? s.items.map((i) => `${this.expr(i.expr)} AS ${this.quoteIdent(i.name)}`).join(", ")
      : "NULL AS _none";
    let sql = `SELECT ${s.distinct ? "DISTINCT " : ""}${items}`;
    if (s.from) sql += `\nFROM ${this.fromItem(s.from, used)}`;
    for (const j of s.joins) {
      const kw = j.kind === "cross" ? "CROSS JOIN" : `${j.kind.toUpperCase()} JOIN`;
      sql += `\n${kw} ${this.fromItem(j.item, used)}`;
      if (j.on) sql += ` ON ${this.expr(j.on)}`;
    }
    if (s.where.length) sql += `\nWHERE ${s.where.map((w) => this.wrap(w)).join(" AND ")}`;
    if (s.groupBy.length) sql += `\nGROUP BY ${s.groupBy.map((g) => this.expr(g)).join(", ")}`;
    if (s.having) sql += `\nHAVING ${this.expr(s.having)}`;
    if (s.qualify) sql += `\nQUALIFY ${this.expr(s.qualify)}`;
    if (s.orderBy.length) sql += `\nORDER BY ${s.orderBy.map((o) => this.orderItem(o)).join(", ")}`;
    sql += this.limitClause(s.limit, s.offset);
    return sql;
  }

  /** For engines without QUALIFY: filter a subquery that computes the condition as a column. */
  protected selectWithQualifyWrapped(s: Select, used: Set<string>): string {
    const inner: Select = {
      ...s,
      qualify: undefined,
      orderBy: [],
      limit: undefined,
      offset: undefined,
      items: [
        ...s.items,
        { expr: s.qualify!, name: "__qualify" },
        ...s.orderBy.map((o, i) => ({ expr: o.expr, name: `__order${i}` })),
      ],
    } as Select;
    const alias = this.quoteIdent("__q");
    const cols = s.items
      .map((i) => `${alias}.${this.quoteIdent(i.name)} AS ${this.quoteIdent(i.name)}`)
      .join(", ");
    let sql = `SELECT ${cols || "NULL AS _none"}\nFROM (\n${this.select(inner, used)}\n) AS ${alias}\nWHERE ${alias}."__qualify"`;
    if (s.orderBy.length) {
      sql += `\nORDER BY ${s.orderBy
        .map((o, i) =>
          this.orderItem({ ...o, expr: { k: "col", rel: "__q", col: `__order${i}`, type: o.expr.type } }),
        )
        .join(", ")}`;
    }
    return sql + this.limitClause(s.limit, s.offset);
  }

  protected limitClause(limit?: Expr, offset?: Expr): string {
    let sql = "";
    if (limit) sql += `\nLIMIT ${this.expr(limit)}`;
    if (offset) sql += `\nOFFSET ${this.expr(offset)}`;
    return sql;
  }

  /** BigQuery sorts NULLs first ascending and last descending; engines differ, so say it. */
  protected orderItem(o: OrderItem): string {
    const dir = o.desc ? "DESC" : "ASC";
    const key = this.ordered(this.expr(o.expr), o.expr.type);
    if (o.expr.k === "col" && o.expr.notNull && !o.nulls) return `${key} ${dir}`;
    const nulls = o.nulls ?? (o.desc ? "last" : "first");
    return `${key} ${dir} NULLS ${nulls.toUpperCase()}`;
  }

  /**
   * A value where its order matters (ORDER BY, <, MIN): BigQuery orders strings by code point.
   * Engines whose text order follows a locale override this.
   */
  ordered(sql: string, _type: SqlType): string {
    return sql;
  }

  protected fromItem(f: FromItem, used: Set<string>): string {
    switch (f.k) {
      case "table":
        return `${this.quoteIdent(f.table)} AS ${this.quoteIdent(f.alias)}`;
      case "cte":
        return `${this.quoteIdent(f.name)} AS ${this.quoteIdent(f.alias)}`;
      case "subquery":
        return `(\n${this.query(f.query, used)}\n) AS ${this.quoteIdent(f.alias)}`;
      case "unnest":
        return this.unnestFrom(this.expr(f.array), f.alias, f.array.type, f.elementType, f.withOffset);
    }
  }

  /** Errors a function's emitter raises point at the call in the SQL. */
  private located(e: CallExpr, emit: () => string): string {
    try {
      return emit();
    } catch (err) {
      if (err instanceof QesError && err.line === undefined && e.at)
        throw new QesError(err.code, err.message, { ...e.at, cause: err });
      throw err;
    }
  }

  /** An expression in a position where precedence matters. */
  wrap(e: Expr): string {
    const sql = this.expr(e);
    return e.k === "op" || e.k === "in" ? `(${sql})` : sql;
  }

  expr(e: Expr): string {
    switch (e.k) {
      case "lit":
        return this.literal(e.value, e.type);
      case "param": {
        let slot = this.paramSlots.get(e.index);
        if (slot === undefined) {
          slot = this.paramSlots.size + 1;
          this.paramSlots.set(e.index, slot);
        }
        return this.param(slot, e.type);
      }
      case "col":
        return e.rel ? `${this.quoteIdent(e.rel)}.${this.quoteIdent(e.col)}` : this.quoteIdent(e.col);
      case "json":
        return this.jsonExtract(this.expr(e.base), e.path, e.type);
      case "call": {
        const emit = this.functions[e.fn];
        if (!emit)
          throw new QesError("function_not_allowed", `Function ${e.fn} is not available on ${this.name}.`);
        this.overPlaced = false;
        const args = e.args.map((a) => this.expr(a));
        this.overPlaced = false;
        const sql = this.located(e, () => emit(args, e, this));
        // Emitters that wrap an aggregate (CAST(sum(x) AS …)) place OVER themselves via overOf.
        return e.over && !this.overPlaced ? `${sql}${this.overOf(e)}` : sql;
      }
      case "op":
        return this.operator(e.op, e.args);
      case "case": {
        const operand = e.operand ? ` ${this.wrap(e.operand)}` : "";
        const whens = e.whens.map(([w, t]) => ` WHEN ${this.expr(w)} THEN ${this.expr(t)}`).join("");
        const otherwise = e.else ? ` ELSE ${this.expr(e.else)}` : "";
        return `CASE${operand}${whens}${otherwise} END`;
      }
      case "cast":
        return e.safe
          ? this.safeCast(this.expr(e.expr), e.expr.type, e.to)
          : this.cast(this.expr(e.expr), e.expr.type, e.to);
      case "interval":
        return this.interval(this.expr(e.value), e.unit);
      case "datepart":
        return this.stringLiteral(e.part.toLowerCase());
      case "star":
        return "*";
      case "in":
        return `${this.wrap(e.expr)} ${e.not ? "NOT IN" : "IN"} (${e.list.map((x) => this.expr(x)).join(", ")})`;
      case "subquery": {
        const sub = this.query(e.query, this.usedCtes);
        if (e.mode === "exists") return `EXISTS (${sub})`;
        if (e.mode === "in") return `${this.wrap(e.expr!)} ${e.not ? "NOT IN" : "IN"} (${sub})`;
        if (e.mode === "array") return `ARRAY(${sub})`;
        return `(${sub})`;
      }
    }
  }

  private overPlaced = false;

  /** ` OVER (…)` of a windowed call, for emitters that must place it inside a wrapper. */
  overOf(call: CallExpr): string {
    if (!call.over) return "";
    this.overPlaced = true;
    return ` OVER (${this.windowSpec(call.over)})`;
  }

  protected windowSpec(w: WindowSpec): string {
    const parts: string[] = [];
    if (w.partitionBy.length) parts.push(`PARTITION BY ${w.partitionBy.map((p) => this.expr(p)).join(", ")}`);
    if (w.orderBy.length) parts.push(`ORDER BY ${w.orderBy.map((o) => this.orderItem(o)).join(", ")}`);
    if (w.frame) parts.push(w.frame);
    return parts.join(" ");
  }

  /** ORDER BY inside an aggregate (`ARRAY_AGG(x ORDER BY …)`). */
  aggregateOrder(call: CallExpr): string {
    const order = call.agg?.orderBy ?? [];
    return order.length ? ` ORDER BY ${order.map((o) => this.orderItem(o)).join(", ")}` : "";
  }

  cast(expr: string, _from: SqlType, to: ScalarType): string {
    return `CAST(${expr} AS ${this.typeName(to)})`;
  }

  literal(value: string | number | bigint | boolean | null, type: SqlType): string {
    if (value === null) return "NULL";
    if (
      type.t === "scalar" &&
      (type.s === "TIMESTAMP" || type.s === "DATETIME" || type.s === "DATE") &&
      typeof value === "bigint"
    ) {
      return this.timestampLiteral(value, type.s);
    }
    if (typeof value === "string") return this.stringLiteral(value);
    // BigQuery integers are INT64; engines type small literals as 32-bit and overflow on them.
    if (
      type.t === "scalar" &&
      type.s === "INT64" &&
      (typeof value === "number" || typeof value === "bigint")
    ) {
      return `CAST(${value} AS ${this.typeName("INT64")})`;
    }
    if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
    if (typeof value === "bigint") return value.toString();
    if (!Number.isFinite(value)) throw new QesError("sql_invalid", `Number ${value} is out of range.`);
    const text = String(value);
    return type.t === "scalar" && type.s === "FLOAT64" && !/[.eE]/.test(text) ? `${text}.0` : text;
  }

  protected operator(op: string, args: Expr[]): string {
    const [a, b, c] = args;
    switch (op) {
      case "AND":
      case "OR":
        return `${this.wrap(a!)} ${op} ${this.wrap(b!)}`;
      case "NOT":
        return `NOT ${this.wrap(a!)}`;
      case "NEG":
        return `-${this.wrap(a!)}`;
      case "IS NULL":
      case "IS NOT NULL":
      case "IS TRUE":
      case "IS NOT TRUE":
      case "IS FALSE":
      case "IS NOT FALSE":
        return `${this.wrap(a!)} ${op}`;
      case "BETWEEN":
      case "NOT BETWEEN":
        return `${this.ordered(this.wrap(a!), a!.type)} ${op} ${this.wrap(b!)} AND ${this.wrap(c!)}`;
      case "<":
      case ">":
      case "<=":
      case ">=":
        return `${this.ordered(this.wrap(a!), a!.type)} ${op} ${this.wrap(b!)}`;
      case "/":
        return `${this.cast(this.wrap(a!), a!.type, "FLOAT64")} / ${this.wrap(b!)}`;
      default:
        return `${this.wrap(a!)} ${op} ${this.wrap(b!)}`;
    }
  }

  /** CTEs the final query reads, directly or through other CTEs; the rest are not emitted. */
  protected reachableCtes(query: Query): Set<string> {
    const byName = new Map<string, Cte>();
    const collectDefs = (q: Query) => {
      for (const c of q.ctes) {
        byName.set(c.name, c);
        collectDefs(c.query);
      }
      visitBody(q.body, (sub) => collectDefs(sub));
    };
    collectDefs(query);
    const used = new Set<string>();
    const visit = (q: Query) => {
      visitBody(q.body, visit, (name) => {
        if (used.has(name)) return;
        used.add(name);
        const c = byName.get(name);
        if (c) visit(c.query);
      });
    };
    visit(query);
    return used;
  }
}

function visitBody(b: Select | SetOp, onQuery: (q: Query) => void, onCte?: (name: string) => void): void {
  if (b.k === "setop") {
    onQuery(b.left);
    onQuery(b.right);
    return;
  }
  const items = [b.from, ...b.joins.map((j) => j.item)];
  for (const f of items) {
    if (!f) continue;
    if (f.k === "cte") onCte?.(f.name);
    if (f.k === "subquery") onQuery(f.query);
    if (f.k === "unnest") visitExpr(f.array, onQuery);
  }
  const exprs: Expr[] = [
    ...b.items.map((i) => i.expr),
    ...b.where,
    ...b.groupBy,
    ...b.orderBy.map((o) => o.expr),
    ...b.joins.flatMap((j) => (j.on ? [j.on] : [])),
  ];
  if (b.having) exprs.push(b.having);
  if (b.qualify) exprs.push(b.qualify);
  for (const e of exprs) visitExpr(e, onQuery);
}

/** Calls `onQuery` for every subquery inside an expression. */
function visitExpr(e: Expr, onQuery: (q: Query) => void): void {
  switch (e.k) {
    case "subquery":
      onQuery(e.query);
      if (e.expr) visitExpr(e.expr, onQuery);
      return;
    case "call":
      for (const a of e.args) visitExpr(a, onQuery);
      for (const o of e.agg?.orderBy ?? []) visitExpr(o.expr, onQuery);
      for (const p of e.over?.partitionBy ?? []) visitExpr(p, onQuery);
      for (const o of e.over?.orderBy ?? []) visitExpr(o.expr, onQuery);
      return;
    case "op":
      for (const a of e.args) visitExpr(a, onQuery);
      return;
    case "case":
      if (e.operand) visitExpr(e.operand, onQuery);
      for (const [w, t] of e.whens) {
        visitExpr(w, onQuery);
        visitExpr(t, onQuery);
      }
      if (e.else) visitExpr(e.else, onQuery);
      return;
    case "cast":
      visitExpr(e.expr, onQuery);
      return;
    case "in":
      visitExpr(e.expr, onQuery);
      for (const x of e.list) visitExpr(x, onQuery);
      return;
    case "json":
      visitExpr(e.base, onQuery);
      return;
    case "interval":
      visitExpr(e.value, onQuery);
      return;
    default:
      return;
  }
}
