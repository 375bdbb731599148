import { lookupFunction } from "../catalogue/functions.ts";
import { signaturesOf } from "../catalogue/signatures.ts";
import type {
  Cte,
  Expr,
  FromItem,
  Join,
  OrderItem,
  Query,
  Select,
  SetOp,
  WindowSpec,
} from "../compile/ir.ts";
import { setOpOperands } from "../compile/set-op-chain.ts";
import { INT64, type SqlType } from "../compile/sql-type.ts";
import { QesError } from "../errors.ts";
import type { ScalarType } from "../schema/schema-model.ts";
import type { CutFirstSql, Dialect, EmittedSql } from "./dialect.ts";
import { type CallExpr, type FunctionEmitter, type FunctionTable, isUnsupported } from "./function-table.ts";
import {
  CUT_FIRST_MAX_WINDOW,
  CUT_ROWS,
  CUT_VALUE_PARAM,
  cutFirstPlan,
  cutRowsOrderedOutside,
  leadingKeyCut,
  RECENT_ROWS,
  RETRY_COLUMN,
  readAheadRows,
  readOnlyByCutSelect,
} from "./leading-key-cut.ts";
import { fixedZoneOffset, zoneRules } from "./time-zones.ts";

/** What starts a message SqlEmitter.raiseWhen's default raises (an executor strips it). */
export const RAISED_MESSAGE_MARK = "qes-error: ";

export { type CallExpr, type FunctionEmitter, rename } from "./function-table.ts";

/**
 * The default emitter: standard SQL for the typed query tree. A dialect subclasses it and
 * overrides only what differs (Kysely's query compilers), mostly through its function table.
 */
export abstract class SqlEmitter implements Dialect {
  abstract readonly name: string;
  /** how each catalogue function is written; dialects spread the default table and override rows */
  abstract readonly functions: FunctionTable;
  /** the engine's name in messages ("PostgreSQL"); the dialect's name unless overridden */
  get engineName(): string {
    return this.name;
  }

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
  /**
   * Whether an ordered LIMIT whose order was completed for ties (withTiesBroken) first keeps only
   * the rows at or past the LIMIT-th value of its leading key (a scalar subquery): for engines
   * that read the newest rows in key order only while the ORDER BY is the table's sorting key
   * (ClickHouse), so the tie-break keys sort a few rows instead of the whole filtered table.
   */
  readonly cutsOrderAtLeadingKey: boolean = false;
  /**
   * With `cutsOrderAtLeadingKey`: whether the rows at or past the cut are selected in a subquery
   * ordered by the leading key alone (under a LIMIT that keeps them all) and the completed order is
   * applied outside it. An engine that reads the columns an ordered LIMIT does not sort by only for
   * the rows it keeps (ClickHouse's lazy materialization) then reads a wide tie-break column — the
   * JSON text of a record — for those rows, not for every row of the blocks that hold them.
   */
  readonly ordersCutRowsOutside: boolean = false;
  /**
   * With `cutsOrderAtLeadingKey`: whether the cut's subquery reads the table and WHERE of a CTE
   * that is a plain filter of it, when the select reads nothing but that CTE. ClickHouse applies
   * its top-K filter to an ORDER BY … LIMIT only right over a table read, not through a CTE.
   */
  readonly cutsThroughPlainCte: boolean = false;
  /**
   * With `cutsOrderAtLeadingKey`: whether a cut top-level select is also emitted read ahead
   * (`EmittedSql.readAhead`, `readAheadRows`): its n+1 first rows by the leading key alone, one
   * top-K read of the table, flagged for a retry in the rare case rows n and n+1 tie on that key.
   * The cut form reads the table twice (the cut, then the rows past it); an engine whose top-K read
   * is cheap (ClickHouse: in sorting-key order, wide columns read lazily) answers once.
   */
  readonly readsAheadAtLeadingKey: boolean = false;
  /**
   * With `cutsOrderAtLeadingKey`: whether a cut top-level select is also emitted in two steps
   * (`EmittedSql.cutFirst`, `cutFirstPlan`): the cut's value first, then the select with that
   * value bound, its table read only at or past it through a materialised CTE — a scan whose only
   * filter is a constant range of the leading key, which an engine with an index on it (DuckDB's
   * ART) answers by fetching those rows instead of scanning every row's filter columns again.
   */
  readonly cutsFirst: boolean = false;
  /** while a cut-first main query is emitted: the table read that reads `RECENT_ROWS` instead */
  private recentFrom: FromItem | undefined;
  /** and the `$n` its cut value is bound to */
  private cutSlot = 0;
  /** CTE definitions of the query being emitted, by name (`cutsThroughPlainCte`) */
  private cteDefs: Map<string, Query> = new Map();

  /** CTEs of the query being emitted (subqueries in expressions emit with the same set) */
  protected usedCtes: Set<string> = new Set();
  /** CTEs a leading-key cut reads a second time (cutsOrderAtLeadingKey), for `cteAs` */
  protected cutCtes: Set<string> = new Set();

  /** query-tree parameter index → emitted `$n`, in order of first appearance */
  private paramSlots: Map<number, number> = new Map();

  emit(query: Query): EmittedSql {
    const used = this.reachableCtes(query);
    this.usedCtes = used;
    this.cutCtes = new Set();
    this.cteDefs = new Map();
    if (this.cutsThroughPlainCte || this.cutsFirst) this.collectCteDefs(query);
    if (this.cutsOrderAtLeadingKey) this.collectCutCtes(query);
    this.paramSlots = new Map();
    const sql = this.query(query, used);
    const readAhead = this.readsAheadAtLeadingKey ? this.readAheadSql(query, used) : undefined;
    const cutFirst = this.cutsFirst ? this.cutFirstSql(query, used) : undefined;
    return {
      sql,
      params: [...this.paramSlots.keys()],
      ...(readAhead !== undefined ? { readAhead } : {}),
      ...(cutFirst !== undefined ? { cutFirst } : {}),
    };
  }

  /** the top-level select, before and after `withTiesBroken`, when that gave it a leading-key cut */
  private cutTopSelect(q: Query): { given: Select; s: Select } | undefined {
    const given = q.body;
    if (given.k !== "select" || given.distinct || given.qualify) return undefined;
    const s = this.withTiesBroken(given);
    return s.where.length > given.where.length ? { given, s } : undefined;
  }

  /**
   * The two steps of a top-level select that gets a leading-key cut (`cutFirstPlan`): `cut`, one
   * row and column, the cut's value as text; `sql`, the select reading its table at or past the
   * value bound as parameter `$n+1` (after the query's own n).
   */
  private cutFirstSql(q: Query, used: Set<string>): CutFirstSql | undefined {
    const top = this.cutTopSelect(q);
    if (!top) return undefined;
    const { given, s } = top;
    const plan = cutFirstPlan(s, given, this.plainCteBody);
    if (!plan || !readOnlyByCutSelect(q, plan) || given.limit?.k !== "lit") return undefined;
    const limit = Number(given.limit.value);
    // the engine's own text of the value (not BigQuery's), which its cast back reads exactly;
    // numbered by slots of its own: it may read only some of the query's parameters (those of a
    // select list are not the cut's), and an engine counts a statement's parameters exactly
    const slots = this.paramSlots;
    this.paramSlots = new Map();
    let cut: string;
    let cutValues: number[];
    try {
      cut =
        this.withClause(q, used) +
        `SELECT CAST(${this.expr(plan.bound)} AS ${this.typeName("STRING")}) AS ${this.quoteIdent("__cut")}`;
      cutValues = [...this.paramSlots.keys()].map((index) => slots.get(index)! - 1);
    } finally {
      this.paramSlots = slots;
    }
    // every parameter of the query has its slot by now: the cut's value takes the next one
    this.cutSlot = this.paramSlots.size + 1;
    const table = plan.table as Extract<FromItem, { k: "table" }>;
    const pastCut = (slot: number) =>
      `FROM ${this.quoteIdent(table.table)} WHERE ${this.quoteIdent(plan.column)} ${plan.op} ` +
      this.param(slot, plan.bound.type);
    const recent = `${this.quoteIdent(RECENT_ROWS)} AS MATERIALIZED (SELECT * ${pastCut(this.cutSlot)})`;
    const window = `SELECT count(*) FROM (SELECT 1 ${pastCut(1)} LIMIT ${CUT_FIRST_MAX_WINDOW + 1})`;
    this.recentFrom = plan.table;
    try {
      return {
        cut,
        cutValues,
        sql: this.withClause(q, used, [recent]) + this.selectClauses(plan.main, used),
        window,
        table: table.table,
        limit,
      };
    } finally {
      this.recentFrom = undefined;
    }
  }

  /**
   * The read-ahead form of a top-level select that gets a leading-key cut: the n+1 first rows by
   * the leading key (`readAheadRows`), counted and their last key taken by window functions, the
   * completed order and LIMIT n outside, and `__retry` = 1 when more than one of them holds that
   * last key (then rows n and n+1 tie, and rows beyond the read may tie with them).
   */
  private readAheadSql(q: Query, used: Set<string>): string | undefined {
    const top = this.cutTopSelect(q);
    if (!top) return undefined;
    const { given, s } = top;
    const cteBody = this.cutsThroughPlainCte ? this.plainCteBody : undefined;
    const ahead = readAheadRows(s, given, (e) => this.key(e), cteBody);
    if (!ahead) return undefined;
    const { inner, order, limit } = ahead;
    const id = (name: string) => this.quoteIdent(name);
    const [rows, read] = [id(CUT_ROWS), id("__read")];
    const lead = order[0]!;
    const leadName = id((lead.expr as Extract<Expr, { k: "col" }>).col);
    const retry =
      `CASE WHEN ${rows}.${id("__n")} = ${limit + 1} AND SUM(CASE WHEN ${rows}.${leadName} = ` +
      `${rows}.${id("__last")} THEN 1 ELSE 0 END) OVER () > 1 THEN 1 ELSE 0 END`;
    const cols = [
      ...s.items.map((i) => `${rows}.${id(i.name)} AS ${id(i.name)}`),
      `${retry} AS ${id(RETRY_COLUMN)}`,
    ];
    const last = `${lead.desc ? "MIN" : "MAX"}(${read}.${leadName}) OVER () AS ${id("__last")}`;
    const limitN: Expr = { k: "lit", value: limit, type: INT64 };
    return (
      this.withClause(q, used) +
      `SELECT ${cols.join(", ")}\nFROM (\nSELECT ${read}.*, COUNT(*) OVER () AS ${id("__n")}, ${last}` +
      `\nFROM (\n${this.selectClauses(inner, used)}\n) AS ${read}\n) AS ${rows}` +
      `\nORDER BY ${order.map((o) => this.orderItem(o)).join(", ")}${this.limitClause(limitN)}`
    );
  }

  quoteIdent(name: string): string {
    return `"${name.replace(/"/g, '""')}"`;
  }

  stringLiteral(value: string): string {
    return `'${value.replace(/'/g, "''")}'`;
  }

  protected query(q: Query, used: Set<string>): string {
    return this.withClause(q, used) + this.body(q.body, used);
  }

  private withClause(q: Query, used: Set<string>, first: string[] = []): string {
    const ctes = [...first, ...q.ctes.filter((c) => used.has(c.name)).map((c) => this.cte(c, used))];
    return ctes.length ? `WITH ${ctes.join(",\n")}\n` : "";
  }

  protected cte(c: Cte, used: Set<string>): string {
    return `${this.quoteIdent(c.name)} ${this.cteAs(c.name)} (\n${this.query(c.query, used)}\n)`;
  }

  /** `AS` of a CTE; an engine may say how it evaluates one (DuckDB: `AS NOT MATERIALIZED`) */
  protected cteAs(_name: string): string {
    return "AS";
  }

  private collectCteDefs(q: Query): void {
    for (const c of q.ctes) {
      this.cteDefs.set(c.name, c.query);
      this.collectCteDefs(c.query);
    }
    visitBody(q.body, (sub) => this.collectCteDefs(sub));
  }

  /** the body of a CTE without CTEs of its own, when it is a select */
  private plainCteBody = (name: string): Select | undefined => {
    const q = this.cteDefs.get(name);
    return q && !q.ctes.length && q.body.k === "select" ? q.body : undefined;
  };

  /** the CTEs read directly by a select whose ordered LIMIT gets a leading-key cut */
  private collectCutCtes(q: Query): void {
    for (const c of q.ctes) this.collectCutCtes(c.query);
    if (q.body.k === "setop") {
      for (const operand of setOpOperands(q.body)) this.collectCutCtes(operand);
      return;
    }
    const s = q.body;
    const items = [s.from, ...s.joins.map((j) => j.item)];
    for (const f of items) if (f?.k === "subquery") this.collectCutCtes(f.query);
    if (this.withTiesBroken(s).where.length > s.where.length)
      for (const f of items) if (f?.k === "cte") this.cutCtes.add(f.name);
  }

  protected body(b: Select | SetOp, used: Set<string>): string {
    return b.k === "select" ? this.select(b, used) : this.setOp(b, used);
  }

  protected setOp(given: SetOp, used: Set<string>): string {
    const s = this.setOpWithTiesBroken(given);
    // one flat chain: engines read `(A) op (B) op (C)` left to right, as the tree says
    const sql = setOpOperands(s)
      .map((q) => `(${this.query(q, used)})`)
      .join(`\n${s.op.toUpperCase()}\n`);
    if (!s.orderBy.length && !s.limit && !s.offset) return sql;
    // Ordered from outside: engines accept only bare column names in a set operation's ORDER BY.
    const order = s.orderBy.length ? `\nORDER BY ${s.orderBy.map((o) => this.orderItem(o)).join(", ")}` : "";
    return `SELECT * FROM (\n${sql}\n) AS "__set"${order}${this.limitClause(s.limit, s.offset)}`;
  }

  protected select(given: Select, used: Set<string>): string {
    const distinct = this.distinctOrderedOutside(given);
    if (distinct) return this.select(distinct, used);
    const s = this.withTiesBroken(given);
    if (s.qualify && !this.supportsQualify) return this.selectWithQualifyWrapped(s, used);
    if (this.ordersCutRowsOutside && s.where.length > given.where.length)
      return this.cutRowsOrderedOutside(s, used);
    return this.selectClauses(s, used);
  }

  /** A select as written, its order already completed (`withTiesBroken`). */
  protected selectClauses(s: Select, used: Set<string>): string {
    const items = s.items.length
      ? s.items.map((i) => `${this.expr(i.expr)} AS ${this.quoteIdent(i.name)}`).join(", ")
      : "NULL AS _none";
    let sql = `SELECT ${s.distinct ? "DISTINCT " : ""}${items}`;
    if (s.from) sql += `\nFROM ${this.fromItem(s.from, used)}`;
    for (const j of s.joins) sql += `\n${this.joinClause(j, used)}`;
    if (s.where.length) sql += `\nWHERE ${s.where.map((w) => this.wrap(w)).join(" AND ")}`;
    if (s.groupBy.length) sql += `\nGROUP BY ${s.groupBy.map((g) => this.key(g)).join(", ")}`;
    if (s.having) sql += `\nHAVING ${this.expr(s.having)}`;
    if (s.qualify) sql += `\nQUALIFY ${this.expr(s.qualify)}`;
    if (s.orderBy.length) sql += `\nORDER BY ${s.orderBy.map((o) => this.orderItem(o)).join(", ")}`;
    sql += this.limitClause(s.limit, s.offset);
    return sql;
  }

  /** `ordersCutRowsOutside`: the cut rows in a subquery, their completed order and LIMIT outside. */
  private cutRowsOrderedOutside(s: Select, used: Set<string>): string {
    const { inner, order } = cutRowsOrderedOutside(s, (e) => this.key(e));
    const alias = this.quoteIdent(CUT_ROWS);
    const cols = s.items
      .map((i) => `${alias}.${this.quoteIdent(i.name)} AS ${this.quoteIdent(i.name)}`)
      .join(", ");
    return (
      `SELECT ${cols || "NULL AS _none"}\nFROM (\n${this.selectClauses(inner, used)}\n) AS ${alias}` +
      `\nORDER BY ${order.map((o) => this.orderItem(o)).join(", ")}${this.limitClause(s.limit, s.offset)}`
    );
  }

  /** One join of a FROM clause; engines with their own lateral form (ARRAY JOIN) override it. */
  protected joinClause(j: Join, used: Set<string>): string {
    const kw = j.kind === "cross" ? "CROSS JOIN" : `${j.kind.toUpperCase()} JOIN`;
    return `${kw} ${this.fromItem(j.item, used)}${j.on ? ` ON ${this.expr(j.on)}` : ""}`;
  }

  /**
   * SELECT DISTINCT … ORDER BY: the keys are selected columns (BigQuery requires it), but an engine
   * may not recognise one once it is written for ordering (PostgreSQL: `x COLLATE "C"` "must
   * appear in select list"). The distinct rows are computed inside and ordered outside, by the
   * columns the keys name. Undefined when the select is not of that shape.
   */
  protected distinctOrderedOutside(s: Select): Select | undefined {
    if (!s.distinct || !s.orderBy.length) return undefined;
    const byKey = new Map(s.items.map((i) => [this.key(i.expr), i]));
    const outer = "__d";
    const col = (i: Select["items"][number]): Expr => ({
      k: "col",
      rel: outer,
      col: i.name,
      type: i.expr.type,
    });
    const orderBy: OrderItem[] = [];
    for (const o of s.orderBy) {
      const item = byKey.get(this.key(o.expr));
      if (!item) return undefined;
      orderBy.push({ ...o, expr: col(item) });
    }
    const inner: Select = { ...s, orderBy: [], limit: undefined, offset: undefined } as Select;
    return {
      k: "select",
      distinct: false,
      items: s.items.map((i) => ({ expr: col(i), name: i.name })),
      from: { k: "subquery", query: { ctes: [], body: inner }, alias: outer },
      joins: [],
      where: [],
      groupBy: [],
      orderBy,
      ...(s.limit ? { limit: s.limit } : {}),
      ...(s.offset ? { offset: s.offset } : {}),
    };
  }

  /**
   * Where LIMIT or OFFSET cuts an ordered result, rows that tie on the ORDER BY keys would be
   * chosen differently by each engine (BigQuery leaves it unspecified; DESIGN.md §3 says every
   * backend agrees): the order is completed by every selected column, hidden ones included, so
   * the rows kept are the same everywhere. Rows equal in all of them are interchangeable.
   */
  protected withTiesBroken(s: Select): Select {
    if (!s.orderBy.length || (!s.limit && !s.offset)) return s;
    const keys = new Set(s.orderBy.map((o) => this.key(o.expr)));
    // grouped rows ordered by every group key cannot tie: each group is one row
    if (s.groupBy.length && s.groupBy.every((g) => keys.has(this.key(g)))) return s;
    const extra: OrderItem[] = [];
    for (const item of s.items) {
      if (!isOrderable(item.expr)) continue;
      const text = this.key(item.expr);
      if (keys.has(text)) continue;
      keys.add(text);
      extra.push({ expr: item.expr, desc: false });
    }
    if (!extra.length) return s;
    const completed: Select = { ...s, orderBy: [...s.orderBy, ...extra] };
    const cut = this.cutsOrderAtLeadingKey
      ? leadingKeyCut(s, this.cutsThroughPlainCte ? this.plainCteBody : undefined)
      : undefined;
    return cut ? { ...completed, where: [...s.where, cut] } : completed;
  }

  /** A set operation's order completed by its output columns (withTiesBroken). */
  protected setOpWithTiesBroken(s: SetOp): SetOp {
    if (!s.orderBy.length || (!s.limit && !s.offset)) return s;
    let first: Select | SetOp = s;
    while (first.k === "setop") first = first.left.body;
    const keys = new Set(s.orderBy.map((o) => this.key(o.expr)));
    const extra: OrderItem[] = [];
    for (const item of first.items) {
      const expr: Expr = { k: "col", rel: "", col: item.name, type: item.expr.type };
      if (!isOrderable(item.expr) || keys.has(this.key(expr))) continue;
      extra.push({ expr, desc: false });
    }
    return extra.length ? { ...s, orderBy: [...s.orderBy, ...extra] } : s;
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
  protected orderItem(o: OrderItem, rankNaN = true): string {
    const dir = o.desc ? "DESC" : "ASC";
    const t = o.expr.type;
    // records and JSON arrays order by their text (PostgreSQL's json has no ordering)
    const key =
      t.t === "record" || t.t === "records" || (t.t === "array" && !t.native)
        ? this.ordered(this.cast(this.key(o.expr), t, "STRING"), { t: "scalar", s: "STRING" })
        : this.ordered(this.key(o.expr), t);
    if (o.expr.k === "col" && o.expr.notNull && !o.nulls) return `${key} ${dir}`;
    const nulls = o.nulls ?? (o.desc ? "last" : "first");
    // BigQuery orders NaN next to NULL, before -inf (ascending); DuckDB and PostgreSQL order it
    // after +inf: a FLOAT64 key is ranked first (NULL, NaN, numbers; NULL's place as asked)
    if (t.t === "scalar" && t.s === "FLOAT64" && o.expr.k !== "lit" && rankNaN) {
      const nullRank = (nulls === "first") === !o.desc ? 0 : 3;
      const rank = `CASE WHEN ${key} IS NULL THEN ${nullRank} WHEN ${this.isNaN(key)} THEN 1 ELSE 2 END`;
      return `${rank} ${dir}, ${key} ${dir} NULLS ${nulls.toUpperCase()}`;
    }
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
        if (f === this.recentFrom) return `${this.quoteIdent(RECENT_ROWS)} AS ${this.quoteIdent(f.alias)}`;
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
    // an expression a SAFE. call's emitter writes is one of its arguments: its errors still raise
    if (!this.safeErrors) return this.exprOf(e);
    this.safeErrors = false;
    try {
      return this.exprOf(e);
    } finally {
      this.safeErrors = true;
    }
  }

  /**
   * True while a `SAFE.` call's own SQL is written (not its arguments'): what the function raises
   * (raiseWhen, divisor) is NULL instead, BigQuery's SAFE. prefix.
   */
  private safeErrors = false;

  /**
   * Whether the function being written is a SAFE. call: a function whose engine raises by itself
   * (a cast of text, not raiseWhen) writes its non-raising form instead.
   */
  get inSafeCall(): boolean {
    return this.safeErrors;
  }

  private withSafeErrors(emit: () => string): string {
    const outer = this.safeErrors;
    this.safeErrors = true;
    try {
      return emit();
    } finally {
      this.safeErrors = outer;
    }
  }

  private exprOf(e: Expr): string {
    switch (e.k) {
      case "lit":
        return this.literal(e.value, e.type);
      case "param": {
        if (e.index === CUT_VALUE_PARAM) return this.param(this.cutSlot, e.type);
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
        const named = zoneNamedText(e.fn === "TIMESTAMP" && e.args.length === 1 ? e.args[0]! : undefined);
        if (named) return this.inNamedZone(named, e.safe === true);
        const emit = this.functions[e.fn];
        if (isUnsupported(emit))
          throw new QesError(
            "function_not_allowed",
            `Function ${e.fn} is not supported on ${this.engineName}: ${emit.unsupported}.`,
            e.at,
          );
        this.overPlaced = false;
        const args = e.args.map((a, i) => this.callArg(e, a, i));
        this.overPlaced = false;
        const write = (written: string[]) =>
          this.located(e, () =>
            e.safe ? this.withSafeErrors(() => emit(written, e, this)) : emit(written, e, this),
          );
        // TIMESTAMP(text) and DATETIME(text) check the text as a cast does (timeTextChecked)
        // a reading in a time zone is checked against the range of its type (zoneShiftChecked)
        const sql = this.callOnce(e, args, (a) => {
          const written = readsTimeText(e)
            ? this.timeTextChecked(a[0]!, write(a), e.safe === true, e.fn as "TIMESTAMP" | "DATETIME")
            : write(a);
          if (!shiftsZone(e)) return truncates(e) ? this.truncChecked(e, a, written) : written;
          return e.safe
            ? this.withSafeErrors(() => this.zoneShiftChecked(e, a, written))
            : this.zoneShiftChecked(e, a, written);
        });
        // Emitters that wrap an aggregate (CAST(sum(x) AS …)) place OVER themselves via overOf.
        return e.over && !this.overPlaced ? `${sql}${this.overOf(e)}` : sql;
      }
      case "op":
        return this.operator(e.op, e.args);
      case "case": {
        const operand = e.operand ? ` ${this.caseOperand(e.operand, e.whens)}` : "";
        const whens = e.whens.map(([w, t]) => ` WHEN ${this.expr(w)} THEN ${this.expr(t)}`).join("");
        const otherwise = e.else ? ` ELSE ${this.expr(e.else)}` : "";
        return `CASE${operand}${whens}${otherwise} END`;
      }
      case "cast": {
        const named = zoneNamedText(e.to === "TIMESTAMP" ? e.expr : undefined);
        if (named) return this.inNamedZone(named, e.safe);
        const to = e.to;
        // an expression typed NULL (COALESCE(NULL, NULL)) is written as an engine's default type
        // (BIGINT), which the cast then read as text (PostgreSQL: "operator does not exist: bigint
        // ~ unknown"): it is NULL, cast as the literal NULL is; its errors still raise
        if (e.expr.type.t === "null" && e.expr.k !== "lit") {
          const none = this.exprOf({ ...e, expr: { k: "lit", value: null, type: e.expr.type } });
          return `CASE WHEN ${this.expr(e.expr)} IS NULL THEN ${none} END`;
        }
        const text = isString(e.expr);
        return this.bindRepeated([this.expr(e.expr)], ([x]) => {
          const converted = e.safe ? this.safeCast(x!, e.expr.type, to) : this.cast(x!, e.expr.type, to);
          if (text && (to === "TIMESTAMP" || to === "DATETIME"))
            return this.timeTextChecked(x!, converted, e.safe === true, to);
          return text && to === "DATE" ? this.timeTextShaped(x!, converted, e.safe === true, to) : converted;
        });
      }
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

  /**
   * A call's argument. A bare NULL (`SUM(NULL)`, `TIMESTAMP_MICROS(NULL)`) has no type an engine
   * can choose an overload by (PostgreSQL: "function sum(unknown) is not unique", DuckDB: "Could
   * not choose a best candidate"): it is typed as the position accepts, else as the call's
   * result or element, else INT64 (BigQuery's type of a bare NULL).
   */
  /**
   * A call's SQL with each long argument that its emitter names more than once bound by `once`
   * (`bindRepeated`). Not for an aggregate or a window call, whose arguments must stay inside it.
   */
  private callOnce(call: CallExpr, args: string[], emit: (args: string[]) => string): string {
    if (call.agg !== undefined || call.over !== undefined) return emit(args);
    return this.bindRepeated(args, emit);
  }

  /**
   * SQL built from `args` with each long one that it names more than once bound by `once`: what
   * an emitter repeats (GREATEST's comparisons, POW's domain checks, FORMAT's text, a cast from
   * text) multiplied the SQL by each level of nesting — two levels of a cast to STRING and back
   * were 457 MB on PostgreSQL — and the work per row with it, as no engine here shares common
   * subexpressions across a CASE. `emit` runs a second time, over the bound names.
   */
  private bindRepeated(args: string[], emit: (args: string[]) => string): string {
    const sql = emit(args);
    if (sql.length <= this.repeatsInlineUpTo) return sql;
    const repeated = args.flatMap((a, i) => (a.length > REPEATED_ARG_CHARS && namesTwice(sql, a) ? [i] : []));
    if (repeated.length === 0) return sql;
    const bind = (k: number, bound: string[]): string => {
      if (k === repeated.length) return emit(bound);
      const i = repeated[k]!;
      return this.once(args[i]!, (name) => bind(k + 1, bound.with(i, name)));
    };
    return bind(0, args);
  }

  private callArg(call: CallExpr, a: Expr, i: number): string {
    if (!(a.k === "lit" && a.value === null && a.type.t === "null")) return this.expr(a);
    const spec = lookupFunction(call.fn);
    // an ARRAY argument (ARRAY_LENGTH(NULL)) stays bare: the engines read NULL as any array
    if (!spec || signaturesOf(spec).some((s) => s.args[i] === "ARRAY")) return this.expr(a);
    const accepted = spec.accepts?.find(([at]) => at === i)?.[1];
    // a NULL where an engine list goes (IF(c, [1], NULL)): a NULL of the element's type met the
    // list in a CASE, which DuckDB and PostgreSQL refuse ("cannot mix BIGINT and BIGINT[]")
    if (accepted === undefined && call.type.t === "array" && call.type.native)
      return this.nullArray(call.type.element, call);
    const own =
      call.type.t === "scalar" ? call.type.s : call.type.t === "array" ? call.type.element : undefined;
    return `CAST(NULL AS ${this.typeName(accepted ?? own ?? "INT64")})`;
  }

  /** ` OVER (…)` of a windowed call, for emitters that must place it inside a wrapper. */
  overOf(call: CallExpr): string {
    if (!call.over) return "";
    // the spec first: emitting its expressions (an aggregate in ORDER BY) resets the flag
    const spec = this.windowSpec(call.over);
    this.overPlaced = true;
    return ` OVER (${spec})`;
  }

  protected windowSpec(w: WindowSpec): string {
    const parts: string[] = [];
    if (w.partitionBy.length) parts.push(`PARTITION BY ${w.partitionBy.map((p) => this.key(p)).join(", ")}`);
    // a RANGE frame with an offset takes one ORDER BY key: a FLOAT64 key goes without its NaN
    // rank (NaN then sorts where the engine puts it, after +inf)
    const rangeOffset = w.frame?.startsWith("RANGE ") === true && /\d (?:PRECEDING|FOLLOWING)/.test(w.frame);
    if (w.orderBy.length)
      parts.push(`ORDER BY ${w.orderBy.map((o) => this.orderItem(o, !rangeOffset)).join(", ")}`);
    if (w.frame) parts.push(w.frame);
    return parts.join(" ");
  }

  /**
   * A grouping, ordering or partitioning key. A key that folded to a literal (a field the schema
   * does not know is NULL, `GROUP BY 'x'`) is valid in BigQuery, but engines read a bare literal
   * there as a position or refuse it ("non-integer constant in GROUP BY"): written as a cast, it is
   * an expression like any other, with the same (constant) value.
   */
  protected key(e: Expr): string {
    if (e.k !== "lit") {
      // a call some dialect writes as a bare literal (CONCAT('a') is ('a')): DuckDB
      // refused `ORDER BY …, 'UTC'` ("non-integer literal has no effect"), and a bare integer
      // would be read as a column's position
      const sql = this.expr(e);
      return e.type.t === "scalar" && /^\(*(?:'(?:[^']|'')*'|[0-9]+)\)*$/.test(sql)
        ? this.cast(sql, e.type, e.type.s)
        : sql;
    }
    const type = e.type.t === "scalar" ? e.type.s : "STRING";
    return this.cast(this.literal(e.value, e.type), e.type, type);
  }

  /**
   * ORDER BY inside an aggregate (`ARRAY_AGG(x ORDER BY …)`). With DISTINCT the engines take no
   * key but the argument, so a FLOAT64 key goes without its NaN rank: NaN is then where the
   * engine orders it (after +inf), and `nanPlacedAsBigQuery` moves it.
   */
  aggregateOrder(call: CallExpr): string {
    const order = call.agg?.orderBy ?? [];
    const items = order.map((o) => this.orderItem(o, call.agg?.distinct !== true));
    return order.length ? ` ORDER BY ${items.join(", ")}` : "";
  }

  /**
   * The key of a DISTINCT aggregate's array whose NaN the engine ordered after +inf, where
   * BigQuery orders it next to NULL (aggregateOrder): undefined when there is none to move.
   */
  protected distinctNaNOrder(call: CallExpr): OrderItem | undefined {
    const o = call.agg?.distinct ? call.agg.orderBy?.[0] : undefined;
    return o && o.expr.type.t === "scalar" && o.expr.type.s === "FLOAT64" && o.expr.k !== "lit"
      ? o
      : undefined;
  }

  cast(expr: string, _from: SqlType, to: ScalarType): string {
    return `CAST(${expr} AS ${this.typeName(to)})`;
  }

  /**
   * `CASE x WHEN …`'s x; a bare NULL (`CASE NULL WHEN 1 …`) typed as the WHEN values are:
   * PostgreSQL read it as text and found no `text = bigint`.
   */
  private caseOperand(operand: Expr, whens: Array<[Expr, Expr]>): string {
    const typed = whens.find(([w]) => w.type.t === "scalar")?.[0].type;
    if (operand.k === "lit" && operand.value === null && operand.type.t === "null" && typed?.t === "scalar")
      return this.cast("NULL", operand.type, typed.s);
    return this.wrap(operand);
  }

  /** BigQuery's NULL ARRAY<element> as an engine list (`[a, b]`, SPLIT, ARRAY_AGG make those). */
  nullArray(element: ScalarType, _call: CallExpr): string {
    return `CAST(NULL AS ${this.typeName(element)}[])`;
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
    // BigQuery's 0.1 is a FLOAT64; DuckDB reads it as a DECIMAL, PostgreSQL as a numeric, where
    // 0.1 + 0.2 = 0.3 exactly (FLOAT64: 0.30000000000000004)
    if (type.t === "scalar" && type.s === "FLOAT64") return `CAST(${text} AS ${this.typeName("FLOAT64")})`;
    return text;
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
        // `-NULL`: PostgreSQL finds no one operator for an untyped NULL
        return a!.k === "lit" && a!.value === null ? "NULL" : `-${this.wrap(a!)}`;
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
      case "+":
      case "-":
      case "*":
        if (!isFloat64(a!) && !isFloat64(b!)) return `${this.wrap(a!)} ${op} ${this.wrap(b!)}`;
        return this.floatArithmetic(op, a!, b!);
      case "/":
        return this.floatArithmetic(op, a!, b!);
      case "LIKE":
      case "NOT LIKE":
        return `${this.wrap(a!)} ${op} ${this.wrap(b!)}${this.likeEscape()}`;
      default:
        return `${this.wrap(a!)} ${op} ${this.wrap(b!)}`;
    }
  }

  /**
   * A FLOAT64 `+ - * /` (one side may be INT64; `/` of two INT64s too), checked for overflow once
   * at the root of the arithmetic it belongs to: a result that is not finite from finite leaves
   * (`(a * 1.5 + b) - c`: a, b, c) overflowed on the way (an inf, or an inf minus an inf), and one
   * check of a tree instead of one per operator halves what it costs (DuckDB, 1M rows of
   * `y * 1.5 + y - 0.5`: 2× the plain arithmetic, against 5×). A divisor is a tree of its own:
   * `x / inf` is 0, so an overflow inside it would not reach the root. The check names the result
   * and the leaves again, so each leaf is bound once (`once`): arithmetic over arithmetic inside
   * functions (`ABS(ABS(x * 1.5) * 1.5)`) would otherwise triple the SQL per level.
   */
  private floatArithmetic(op: string, a: Expr, b: Expr): string {
    const leaves: Expr[] = [];
    floatLeaves(a, leaves, false);
    floatLeaves(b, leaves, op === "/");
    const sqls = leaves.map((l) => this.wrap(l));
    // INT64 quotients alone (ratios of counts) are within ±2^63, and a leaf divided by a literal
    // of magnitude 1 or more is within the leaf's: nothing to check
    const byAtLeastOne = op === "/" && a.k !== "op" && (literalMagnitude(b) ?? 0) >= 1;
    if (!leaves.some(isFloat64) || byAtLeastOne)
      return this.floatTree(op, a, b, new Map(leaves.map((l, i) => [l, sqls[i]!])));
    // a FLOAT64 literal is a finite number: only the other FLOAT64 leaves can be ±inf
    const floats = leaves.flatMap((l, i) => (isFloat64(l) && l.k !== "lit" ? [i] : []));
    return this.bindRepeated(sqls, (names) => {
      const leafSql = new Map(leaves.map((l, j) => [l, names[j]!]));
      const tree = this.floatTree(op, a, b, leafSql);
      // a leaf written twice (`x * x`) is checked once
      const checked = [...new Set(floats.map((j) => names[j]!))];
      // an inner operation that overflowed beside a leaf that is ±inf (`x * 10 + inf`) leaves
      // the root no finite operands to tell it by: it is checked over its own leaves. One whose
      // leaves are all the root's is told by the root's check (an inf inside stays non-finite).
      const inner = [a, b]
        .flatMap((side, i) => floatSubtrees(side, op === "/" && i === 1))
        .map((t) => ({
          result: this.floatTree(t.op, t.args[0]!, t.args[1]!, leafSql),
          operands: [...new Set(floatLeafSqls(t, leafSql))],
        }))
        .filter((t) => t.operands.length < checked.length);
      return this.floatOverflow(tree, checked, false, inner);
    });
  }

  /** The SQL of floatArithmetic's tree, each leaf written as `leafSql` names it. */
  private floatTree(op: string, a: Expr, b: Expr, leafSql: Map<Expr, string>): string {
    const side = (e: Expr) => {
      const leaf = leafSql.get(e);
      if (leaf !== undefined || e.k !== "op") return leaf!;
      return `(${this.floatTree(e.op, e.args[0]!, e.args[1]!, leafSql)})`;
    };
    const x = side(a);
    const y = side(b);
    if (op === "+" || op === "-") return `${x} ${op} ${y}`;
    // a product or quotient that IEEE rounds to 0: both factors fractional, or a fractional dividend
    const mayUnderflow =
      isFloat64(a) &&
      (op === "/" || isFloat64(b)) &&
      !underflowsOnlyFromSubnormals(op === "/" ? "/" : "*", a, b);
    if (op === "*")
      return this.bindRepeated([x, y], ([x, y]) => this.floatProduct(x!, "*", y!, mayUnderflow));
    // a literal divisor other than 0 needs no check (`avg(x) / 1000`, `count(*) / 60`)
    if ((literalMagnitude(b) ?? 0) !== 0)
      return this.floatProduct(this.cast(x, a.type, "FLOAT64"), "/", y, mayUnderflow);
    // the divisor's check names the dividend too: bound, so that x / 2 / 2 … does not double per level
    return this.bindRepeated([x, y], ([x, y]) =>
      this.floatProduct(this.cast(x!, a.type, "FLOAT64"), "/", this.divisor(y!, x!), mayUnderflow),
    );
  }

  /**
   * `x * y` or `x / y` of FLOAT64s (the divisor checked already). `mayUnderflow`: the result may
   * be too small for a double, where BigQuery, like IEEE, answers 0. This default is the engine's
   * operator; PostgreSQL raises "underflow" there and overrides it.
   */
  protected floatProduct(x: string, op: "*" | "/", y: string, _mayUnderflow: boolean): string {
    return `${x} ${op} ${y}`;
  }

  /**
   * A FLOAT64 `result` computed from `operands` (FLOAT64 SQL; `+ - * /`, SUM and AVG): BigQuery
   * raises "floating point overflow" where it is not finite and every operand is — it answers ±inf
   * or NaN only from an operand that is one (a division by zero raises before). `nullInstead`: NULL there (SAFE_DIVIDE), as under SAFE.
   */
  floatOverflow(
    result: string,
    operands: string[],
    nullInstead = false,
    inner: ReadonlyArray<{ result: string; operands: string[] }> = [],
  ): string {
    return this.bindRepeated([result], ([r]) => {
      const root = this.floatOverflowWhen(r!, operands);
      if (root === undefined) return r!;
      const whens = [root, ...inner.map((t) => this.floatOverflowWhen(t.result, t.operands)!)];
      const when = whens.length === 1 ? root : whens.map((w) => `(${w})`).join(" OR ");
      return nullInstead
        ? `CASE WHEN ${when} THEN NULL ELSE ${r} END`
        : this.raiseWhen(r!, when, FLOAT64_OVERFLOW);
    });
  }

  /**
   * SUM of FLOAT64 `x` (`distinct`: "DISTINCT " or "", `over`: its OVER clause). This default is
   * the engine's sum: PostgreSQL's raises on overflow by itself. Engines that answer ±inf use
   * scaledFloatSum.
   */
  floatSum(x: string, distinct: string, over: string): string {
    return `CAST(sum(${distinct}${x})${over} AS ${this.typeName("FLOAT64")})`;
  }

  /**
   * When floatOverflow's result overflowed, for engines that answer ±inf there. This default is
   * undefined: PostgreSQL's arithmetic raises by itself.
   */
  protected floatOverflowWhen(_result: string, _operands: string[]): string | undefined {
    return undefined;
  }

  /**
   * CAST(text AS TIMESTAMP) or TIMESTAMP(text) of literal text whose zone is a tz database name
   * ('2024-01-01 10:00:00 America/New_York', BigQuery's canonical timestamp text): the civil time
   * placed in that zone, as TIMESTAMP(text, zone) places it — DuckDB and ClickHouse refused the
   * text, PostgreSQL read it. The name is checked against the tz database (time-zones.ts): an
   * unknown one is BigQuery's error, or NULL under SAFE_CAST / SAFE.
   */
  private inNamedZone(named: { civil: Expr; zone: Expr }, safe: boolean): string {
    try {
      zoneRules(named.zone.k === "lit" ? String(named.zone.value) : "");
    } catch (err) {
      if (safe) return this.literal(null, { t: "scalar", s: "TIMESTAMP" });
      throw err;
    }
    const type: SqlType = { t: "scalar", s: "TIMESTAMP" };
    return this.expr({
      k: "call",
      fn: "TIMESTAMP",
      args: [named.civil, named.zone],
      type,
      ...(safe ? { safe } : {}),
    });
  }

  /**
   * `sql`, DATE_TRUNC, DATETIME_TRUNC or TIMESTAMP_TRUNC (in UTC) to a WEEK of a time, or
   * BigQuery's error where the start of its week falls before it (WEEK of 0001-01-01, a Monday, is
   * 0000-12-31): DuckDB and ClickHouse answered year 0, PostgreSQL '0001-12-31 BC'.
   */
  private truncChecked(call: CallExpr, args: string[], sql: string): string {
    const s = (call.args[0]!.type as { s: ScalarType }).s;
    const near = this.timestampLiteral(TIME_MIN_MICROS + 9n * 86_400_000_000n, s);
    const min = this.timestampLiteral(TIME_MIN_MICROS, s);
    const when = `CASE WHEN ${args[0]} < ${near} THEN ${sql} < ${min} ELSE FALSE END`;
    const wrapped = () => this.raiseWhen(sql, when, `${call.fn}: the result is out of ${s}'s range`);
    return call.safe ? this.withSafeErrors(wrapped) : wrapped();
  }

  /**
   * `sql`, a call that reads an instant in a time zone or places a civil time in one
   * (DATETIME(ts, zone), DATE(ts, zone), TIMESTAMP_TRUNC(ts, part, zone), TIMESTAMP(dt, zone)), or
   * BigQuery's error where the reading or the instant falls outside 0001-01-01 … 9999-12-31:
   * DuckDB answered year 10000, PostgreSQL a year BC, and ClickHouse clamped to 9999-12-31. The
   * engines cannot all compare such a value (ClickHouse's is clamped already), so the check reads
   * the time two days inward instead — the dialect's own row, on an argument held inside the
   * range — and compares that reading with the bound two days inward. No zone's offset reaches a
   * day, nor changes (DST) in the last or first days of a year.
   */
  private zoneShiftChecked(call: CallExpr, args: string[], sql: string): string {
    const ts = args[0]!;
    const zoneAt = call.fn === "TIMESTAMP_TRUNC" ? 2 : 1;
    const zone = args[zoneAt]!;
    const zoneExpr = call.args[zoneAt]!;
    // a zone of offset 0 moves no reading out of its range (usage.api-counts' DATETIME(bucket,
    // 'UTC')); a truncation in it still can (WEEK of 0001-01-01)
    if (
      call.fn !== "TIMESTAMP_TRUNC" &&
      zoneExpr.k === "lit" &&
      typeof zoneExpr.value === "string" &&
      fixedZoneOffset(zoneExpr.value) === 0
    )
      return sql;
    const from = (call.args[0]!.type as { s: ScalarType }).s;
    const day = 86_400_000_000n;
    if (this.zoneShiftByOffsets && zoneExpr.k === "lit" && typeof zoneExpr.value === "string") {
      const byOffsets = this.zoneShiftByOffsetsChecked(call, ts, zoneExpr.value, from, sql);
      if (byOffsets !== undefined) return byOffsets;
    }
    // `x` held at or past `bound` (GREATEST), or at or before it (LEAST), shifted by `days`
    const held = (x: string, bound: string, past: boolean, days: number) => {
      const h = `CASE WHEN ${x} ${past ? ">" : "<"} ${bound} THEN ${x} ELSE ${bound} END`;
      return `(${h} + ${this.interval(String(days), "DAY")})`;
    };
    const reading = (fn: "DATETIME" | "TIMESTAMP", x: string, type: SqlType) =>
      (this.functions[fn] as FunctionEmitter)(
        [x, zone],
        { ...call, fn, args: [{ ...call.args[0]!, type }, zoneExpr], type: { t: "scalar", s: fn } },
        this,
      );
    // the argument's own type (a DATE placed in a zone is its midnight), and the type read
    const [x, xType, read]: [string, ScalarType, "DATETIME" | "TIMESTAMP"] =
      call.fn === "TIMESTAMP"
        ? [from === "DATE" ? this.cast(ts, call.args[0]!.type, "DATETIME") : ts, "DATETIME", "TIMESTAMP"]
        : [ts, "TIMESTAMP", "DATETIME"];
    const argLit = (m: bigint) => this.timestampLiteral(m, xType);
    const readLit = (m: bigint) => this.timestampLiteral(m, read);
    const hi = argLit(TIME_MAX_MICROS - 9n * day);
    const lo = argLit(TIME_MIN_MICROS + 9n * day);
    const argType: SqlType = { t: "scalar", s: xType };
    const past = `${reading(read, held(x, hi, true, -2), argType)} > ${readLit(TIME_MAX_MICROS - 2n * day)}`;
    let before = `${reading(read, held(x, lo, false, 2), argType)} < ${readLit(TIME_MIN_MICROS + 2n * day)}`;
    // a truncated reading placed back in the zone can fall before 0001-01-01 UTC
    if (call.fn === "TIMESTAMP_TRUNC")
      before = `(${before}) OR ${sql} < ${this.timestampLiteral(TIME_MIN_MICROS, "TIMESTAMP")}`;
    // only a time within days of an end of the range is read again: the rest compare once
    const when = `CASE WHEN ${x} > ${hi} THEN (${past}) WHEN ${x} < ${lo} THEN (${before}) ELSE FALSE END`;
    const type = call.fn === "DATE" ? "DATE" : call.fn === "DATETIME" ? "DATETIME" : "TIMESTAMP";
    return this.raiseWhen(sql, when, `${call.fn}: the result is out of ${type}'s range`);
  }

  /**
   * Whether zoneShiftChecked compares a literal zone's argument with bounds moved by the zone's
   * offsets at the ends of the range (known when the query compiles) instead of reading the time
   * again in the zone: ClickHouse computes both branches of a CASE for every row, so the reading
   * again made every zone conversion cost 2–3× there. The offsets are the tz database's of today's
   * rules (before 1970: the first known), where an engine may use a zone's local mean time near
   * year 1: a reading within hours of 0001-01-01 may be judged by minutes apart from the engine's.
   */
  protected readonly zoneShiftByOffsets: boolean = false;

  /** zoneShiftChecked by the literal zone's offsets (zoneShiftByOffsets); undefined: read again */
  private zoneShiftByOffsetsChecked(
    call: CallExpr,
    ts: string,
    zone: string,
    from: ScalarType,
    sql: string,
  ): string | undefined {
    let offsets: number[];
    try {
      offsets = zoneRules(zone).offsets;
    } catch {
      return undefined;
    }
    const micros = (seconds: number) => BigInt(seconds) * 1_000_000n;
    const first = micros(offsets[0]!);
    const last = micros(offsets[offsets.length - 1]!);
    // a bound past the range is never met: only the ends a zone's offset can cross are compared
    const checks: string[] = [];
    if (call.fn === "TIMESTAMP") {
      // a civil time placed in the zone: the instant is the time less the offset
      const x = from === "DATE" ? this.cast(ts, call.args[0]!.type, "DATETIME") : ts;
      if (last < 0n) checks.push(`${x} > ${this.timestampLiteral(TIME_MAX_MICROS + last, "DATETIME")}`);
      if (first > 0n) checks.push(`${x} < ${this.timestampLiteral(TIME_MIN_MICROS + first, "DATETIME")}`);
    } else {
      // an instant read in the zone: the reading is the instant plus the offset
      if (last > 0n) checks.push(`${ts} > ${this.timestampLiteral(TIME_MAX_MICROS - last, "TIMESTAMP")}`);
      if (first < 0n) checks.push(`${ts} < ${this.timestampLiteral(TIME_MIN_MICROS - first, "TIMESTAMP")}`);
      if (call.fn === "TIMESTAMP_TRUNC")
        checks.push(`${sql} < ${this.timestampLiteral(TIME_MIN_MICROS, "TIMESTAMP")}`);
    }
    if (checks.length === 0) return sql;
    const when = checks.join(" OR ");
    const type = call.fn === "DATE" ? "DATE" : call.fn === "DATETIME" ? "DATETIME" : "TIMESTAMP";
    return this.raiseWhen(sql, when, `${call.fn}: the result is out of ${type}'s range`);
  }

  /**
   * `value`, a TIMESTAMP or DATETIME read from text `t`: BigQuery refuses text with more than six
   * fraction digits ("if there are extra digits then an error is produced", ZetaSQL's
   * ParseStringToDatetimeParts), where DuckDB and ClickHouse cut them and PostgreSQL rounded —
   * `nullInstead` (SAFE_CAST, SAFE.): NULL there.
   */
  private timeTextChecked(
    t: string,
    value: string,
    nullInstead: boolean,
    to: "TIMESTAMP" | "DATETIME",
  ): string {
    const when = this.textMatches(t, String.raw`:[0-9]{1,2}\.[0-9]{7}`);
    const checked = nullInstead
      ? `CASE WHEN ${when} THEN NULL ELSE ${value} END`
      : this.raiseWhen(
          value,
          when,
          "Invalid timestamp: more than six fraction digits (BigQuery keeps microseconds)",
        );
    return this.timeTextShaped(t, checked, nullInstead, to);
  }

  /**
   * `value`, a DATE, DATETIME or TIMESTAMP read from text `t`, where `t` has the shape of
   * BigQuery's canonical date and time text (`YYYY-[M]M-[D]D[( |T)[H]H:[M]M[:[S]S[.F]]]`, a
   * TIMESTAMP's zone after it, nothing around it); other text is BigQuery's error, `nullInstead`
   * NULL. The engines read more:
   * 'today', 'epoch', 'infinity' (PostgreSQL; DuckDB for DATE and DATETIME), '2024/01/01' and a
   * DATETIME's offset, which DuckDB and PostgreSQL dropped and ClickHouse applied.
   */
  private timeTextShaped(
    t: string,
    value: string,
    nullInstead: boolean,
    to: "TIMESTAMP" | "DATETIME" | "DATE",
  ): string {
    const day = `[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}(:[0-9]{1,2}([.][0-9]*)?)?)?`;
    const zone = String.raw`(\s*(Z|z|UTC|[+-][0-9]{1,2}(:?[0-9]{2})?|[A-Za-z_]+/[A-Za-z0-9_/+-]+))?`;
    // no whitespace around the text: ZetaSQL's ConvertStringToDate / _Timestamp read from its
    // first character to its last (DuckDB and ClickHouse trimmed ' 2024-01-05 ')
    const shape = `^${day}${to === "TIMESTAMP" ? zone : ""}$`;
    const when = `NOT ${this.textMatches(t, shape)}`;
    return nullInstead
      ? `CASE WHEN ${when} THEN NULL ELSE ${value} END`
      : this.raiseWhen(
          value,
          when,
          `Invalid ${to.toLowerCase()}: the text is not YYYY-MM-DD[ HH:MM:SS[.ffffff]]${to === "TIMESTAMP" ? "[ zone]" : ""}`,
        );
  }

  /** Whether `text` holds a match of `pattern` (RE2, of the portable subset); this default is PostgreSQL's `~`. */
  protected textMatches(text: string, pattern: string): string {
    return `(${text} ~ ${this.stringLiteral(pattern)})`;
  }

  /**
   * What makes LIKE escape with a backslash, as BigQuery's does: DuckDB has no default escape
   * character. An engine whose LIKE escapes with a backslash already (and whose string literals
   * read backslash escapes) answers "".
   */
  likeEscape(): string {
    return " ESCAPE '\\'";
  }

  /** Whether a FLOAT64 is NaN: IEEE's `x <> x`, for engines whose NaN is unequal to itself. */
  isNaN(x: string): string {
    return `(${x} <> ${x})`;
  }

  /**
   * The divisor of `/`: BigQuery raises "division by zero". Engines that answer Infinity or NULL
   * instead override this to raise it, so every backend refuses the same query. A NULL `dividend`
   * is no error: the quotient is NULL, as any operator of a NULL is in BigQuery.
   */
  divisor(sql: string, dividend: string): string {
    return this.safeErrors ? `NULLIF(${sql}, 0)` : this.checkedDivisor(sql, dividend);
  }

  /** The divisor outside SAFE.: engines that do not raise "division by zero" override this. */
  protected checkedDivisor(sql: string, _dividend: string): string {
    return sql;
  }

  /**
   * `body` of `value`, which it names several times: an engine that can bind a value (a lambda)
   * evaluates and writes a long one once (core's bindOnce), so that a function of itself nested
   * does not multiply the SQL per level. This default writes it where it is used.
   */
  once(value: string, body: (v: string) => string): string {
    return body(value);
  }

  /**
   * The longest SQL of one call or cast that is left as written when it names a long argument
   * more than once (`bindRepeated`): an engine that shares common subexpressions evaluates the
   * repeats once anyway, and binding can cost it more than it saves; one that does not
   * (PostgreSQL) binds them all.
   */
  readonly repeatsInlineUpTo: number = 0;

  /**
   * `value`, or BigQuery's error `message` for a row where `failWhen` holds (a negative SUBSTR
   * length, POW(0, -1)): the engine stops the query and its executor answers 422 `sql_invalid`.
   * This default is standard SQL: the message, marked with RAISED_MESSAGE_MARK, cast to an integer
   * (the cast is the error; the executor reads the message back out of it). The text names
   * `failWhen` again so that it is never a constant a planner would fold, and raise, while the
   * condition is still undecided. Engines with an error function override this.
   */
  raiseWhen(value: string, failWhen: string, message: string): string {
    // SAFE.: the failing row's answer is NULL (a NULL condition is no failure, as below)
    if (this.safeErrors) return `CASE WHEN ${failWhen} THEN NULL ELSE ${value} END`;
    return this.raise(value, failWhen, message);
  }

  /** raiseWhen outside SAFE.: the engine stops the query with `message` where `failWhen` holds. */
  protected raise(value: string, failWhen: string, message: string): string {
    const text = `${this.stringLiteral(`${RAISED_MESSAGE_MARK}${message}`)} || CASE WHEN ${failWhen} THEN '' END`;
    return `CASE WHEN (CASE WHEN ${failWhen} THEN CAST(${text} AS ${this.typeName("INT64")}) END) IS NULL THEN ${value} END`;
  }

  /**
   * The elements of an array (an engine list, or JSON text of an array read from events) each
   * written by `each` (given an element's SQL: a scalar typed as the array's element, a record as
   * its JSON text) and joined by `separator`, in the array's order; '' for an empty array. FORMAT's
   * `%t` of an ARRAY needs it (format-printable.ts).
   */
  joinedElements(
    _array: string,
    _arrayType: SqlType,
    _each: (element: string) => string,
    _separator: string,
  ): string {
    throw new QesError("sql_invalid", `Printing an ARRAY is not supported on ${this.engineName}.`);
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

/** the message of BigQuery's error for a FLOAT64 result past its range (floatOverflow) */
export const FLOAT64_OVERFLOW = "floating point overflow: a FLOAT64 result is past ±1.8e308";

function isFloat64(e: Expr): boolean {
  return e.type.t === "scalar" && e.type.s === "FLOAT64";
}

function isString(e: Expr): boolean {
  return e.type.t === "scalar" && e.type.s === "STRING";
}

/** BigQuery's time range in microseconds from 1970: 0001-01-01 to 9999-12-31 23:59:59.999999 */
const TIME_MIN_MICROS = -62135596800000000n;
const TIME_MAX_MICROS = 253402300799999999n;

/**
 * A call that reads an instant in a time zone named by an argument, or places a civil time in
 * one (zoneShiftChecked): its result can leave the range its argument was in.
 */
function shiftsZone(e: CallExpr): boolean {
  const s = (i: number) => {
    const t = e.args[i]?.type;
    return t?.t === "scalar" ? t.s : undefined;
  };
  switch (e.fn) {
    case "DATETIME":
    case "DATE":
      return e.args.length === 2 && s(0) === "TIMESTAMP";
    case "TIMESTAMP":
      return e.args.length === 2 && (s(0) === "DATETIME" || s(0) === "DATE");
    case "TIMESTAMP_TRUNC":
      return e.args.length === 3 && s(0) === "TIMESTAMP";
    default:
      return false;
  }
}

/**
 * Literal time text that ends in a tz database name after the date or time
 * ('2024-01-01 10:00:00 America/New_York'): the text before the name, and the name, as literals.
 */
function zoneNamedText(e: Expr | undefined): { civil: Expr; zone: Expr } | undefined {
  if (e?.k !== "lit" || typeof e.value !== "string") return undefined;
  const m =
    /^\s*([0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ][0-9]{1,2}:[0-9]{1,2}(?::[0-9]{1,2}(?:[.][0-9]*)?)?)?)\s*([A-Za-z_]+\/[A-Za-z0-9_/+-]+)\s*$/.exec(
      e.value,
    );
  if (!m) return undefined;
  const text: SqlType = { t: "scalar", s: "STRING" };
  return { civil: { k: "lit", value: m[1]!, type: text }, zone: { k: "lit", value: m[2]!, type: text } };
}

/**
 * DATE_TRUNC, DATETIME_TRUNC and TIMESTAMP_TRUNC in UTC of a time to a WEEK (truncChecked): the
 * only part whose start can fall before 0001-01-01 (a Monday; ISOWEEK and YEAR start on it)
 */
function truncates(e: CallExpr): boolean {
  const t = e.args[0]?.type;
  const time = t?.t === "scalar" && (t.s === "DATE" || t.s === "DATETIME" || t.s === "TIMESTAMP");
  const part = e.args[1];
  const week = part?.k === "datepart" && /^WEEK/i.test(part.part);
  return time && week && (e.fn === "DATE_TRUNC" || e.fn === "DATETIME_TRUNC" || e.fn === "TIMESTAMP_TRUNC");
}

/** TIMESTAMP(text) and DATETIME(text): read time text as a cast does (timeTextChecked) */
function readsTimeText(e: CallExpr): boolean {
  return (e.fn === "TIMESTAMP" || e.fn === "DATETIME") && e.args.length > 0 && isString(e.args[0]!);
}

/** A node of FLOAT64 arithmetic (floatArithmetic's tree) */
/** 2^-50: a factor at least this large gives a product past 2^-1075 from any normal double */
const SCALE_WITHOUT_UNDERFLOW = 2 ** -50;

/**
 * Whether `a op b` can round to 0 only from an operand below FLOAT64's normal range (2^-1022): a
 * literal factor or dividend of magnitude at least 2^-50, or a literal divisor of at most 2^50
 * (`avg(x) * 1000`, `x / 4`). Those are left unguarded by `floatProduct`: a guard names each
 * operand again, which a window's value (never bound) multiplies per level.
 */
function underflowsOnlyFromSubnormals(op: "*" | "/", a: Expr, b: Expr): boolean {
  const size = (e: Expr) => (e.k === "lit" && typeof e.value === "number" ? Math.abs(e.value) : undefined);
  const x = size(a);
  const y = size(b);
  if (x !== undefined && x >= SCALE_WITHOUT_UNDERFLOW) return true;
  if (y === undefined) return false;
  return op === "*" ? y >= SCALE_WITHOUT_UNDERFLOW : y > 0 && y <= 1 / SCALE_WITHOUT_UNDERFLOW;
}

function isFloatArithmetic(e: Expr): boolean {
  return e.k === "op" && (e.op === "+" || e.op === "-" || e.op === "*" || e.op === "/") && isFloat64(e);
}

/** The leaves of floatArithmetic's tree under `e`, in order; `ownTree`: `e` is a leaf (a divisor) */
/**
 * The operations inside one side of floatArithmetic's tree (`ownTree`: a divisor, checked as a
 * tree of its own), innermost last: what floatLeaves descends through.
 */
function floatSubtrees(e: Expr, ownTree: boolean): Array<Extract<Expr, { k: "op" }>> {
  if (ownTree || !isFloatArithmetic(e) || e.k !== "op") return [];
  return [e, ...floatSubtrees(e.args[0]!, false), ...floatSubtrees(e.args[1]!, e.op === "/")];
}

/** The SQL of the FLOAT64 leaves (not literals) under an operation of floatArithmetic's tree. */
function floatLeafSqls(e: Expr, leafSql: Map<Expr, string>): string[] {
  const leaves: Expr[] = [];
  floatLeaves(e, leaves, false);
  return leaves.flatMap((l) => (isFloat64(l) && l.k !== "lit" ? [leafSql.get(l)!] : []));
}

function floatLeaves(e: Expr, out: Expr[], ownTree: boolean): void {
  if (ownTree || !isFloatArithmetic(e) || e.k !== "op") {
    out.push(e);
    return;
  }
  floatLeaves(e.args[0]!, out, false);
  floatLeaves(e.args[1]!, out, e.op === "/");
}

/** Whether a selected value can complete an order: scalars and JSON text, not engine lists or constants. */
function isOrderable(e: Expr): boolean {
  if (e.k === "lit" || e.k === "param") return false;
  const t = e.type;
  return t.t === "scalar" || t.t === "record" || t.t === "records" || (t.t === "array" && !t.native);
}

function visitBody(b: Select | SetOp, onQuery: (q: Query) => void, onCte?: (name: string) => void): void {
  if (b.k === "setop") {
    for (const q of setOpOperands(b)) onQuery(q);
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

/** arguments shorter than this are repeated as they are (a column, a parameter, a literal) */
const REPEATED_ARG_CHARS = 64;

/** does `sql` hold `part` at least twice */
function namesTwice(sql: string, part: string): boolean {
  const first = sql.indexOf(part);
  return first >= 0 && sql.indexOf(part, first + 1) >= 0;
}

/** The magnitude of a numeric literal (`4`, `1e3`, `0.5`), or undefined for anything else. */
function literalMagnitude(e: Expr): number | undefined {
  if (e.k !== "lit") return undefined;
  if (typeof e.value === "number") return Math.abs(e.value);
  if (typeof e.value === "bigint") return Math.abs(Number(e.value));
  return undefined;
}
