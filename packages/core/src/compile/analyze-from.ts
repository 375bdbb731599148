/** FROM items: sources, CTEs, subqueries, joins, and UNNEST (records flattened, arrays expanded). */
import { QesError, type QesErrorDetails } from "../errors.ts";
import { type AstNode, aliasText, locationOf, tableNameOf } from "../parse/parse-sql.ts";
import { isCreatableSourceName } from "../schema/source-name.ts";
import { analyzeCondition, analyzeValue, type ExprEnv, fail, recordAsExpr } from "./analyze-expr.ts";
import { bindJoinGroup, isJoinGroup } from "./analyze-join-group.ts";
import { analyzeQuery, type QueryOptions } from "./analyze-query.ts";
import { notNull } from "./analyze-select.ts";
import type { CompileContext, CteInfo } from "./compile-context.ts";
import type { Expr, FromItem, Join, Select } from "./ir.ts";
import { requirePresence } from "./record-presence.ts";
import { and, elementRoot, type RecordValue, tableRoot } from "./record-value.ts";
import { fieldOf } from "./resolve-names.ts";
import { DerivedRelation, derivedRoot, type RangeVar, Scope, type Value } from "./scope.ts";
import { commonType, INT64, type SqlType, typeName } from "./sql-type.ts";

/**
 * A source the store does not hold. `qes serve` creates, empty, those its stored queries name
 * (`missingSources`), so a compile meets this for a name ingest could create only where nothing
 * created it (a direct compile): the message says how the source comes to be.
 */
function unknownSourceMessage(name: string): string {
  const known = `Table ${name} is not a known log source.`;
  if (!isCreatableSourceName(name)) return known;
  return `${known} A source comes to be with its first events (POST /api/logs?source_name=${encodeURIComponent(name)}, or qes load --source ${JSON.stringify(name)}), or when qes serve starts with a stored query that reads it.`;
}

/**
 * A stored query names a source the store does not hold: a `relation_not_allowed` that carries the
 * name, so that start-up can create the sources its stored queries read (`sourcesToCreate`).
 */
export class UnknownSourceError extends QesError {
  constructor(
    readonly source: string,
    message: string,
    details: QesErrorDetails,
  ) {
    super("relation_not_allowed", message, details);
  }
}

export function analyzeFrom(
  items: AstNode[],
  select: Select,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
  fromVar: { cte?: CteInfo; alias?: string },
): void {
  items.forEach((item, i) => {
    if (item.operator) {
      const name = String(item.operator.type ?? "this table operator").toUpperCase();
      fail("sql_invalid", `${name} is not supported by qes.`, item);
    }
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
        joinArray(select, kind, from);
      }
      return;
    }
    // FROM t, t.arr AS x: an implicit UNNEST of a path that starts at an earlier FROM item. The
    // parser gives `t.metadata.request` as db, schema and table: read as `t.request`, it unnested a
    // field the source does not have, and the query answered no rows.
    if (i > 0 && item.db && !item.expr && scope.findVar(String(item.db))) {
      const path: AstNode = {
        type: "column_ref",
        table: item.db,
        column: item.schema ?? item.table,
        subFields: item.schema ? [item.table] : [],
        loc: item.loc,
      };
      const from = analyzeUnnest(
        { type: "unnest", expr: path, as: aliasText(item.as) ?? item.table, on: item.on, loc: item.loc },
        kind,
        select,
        scope,
        ctx,
        opts,
      );
      if (from) joinArray(select, kind, from);
      return;
    }
    const using = ((item.using ?? []) as AstNode[]).map((u) => String(u.value ?? u));
    const leftValues = using.map((name) => {
      const v = scope.findColumn(name);
      if (!v || "ambiguous" in v || v.kind !== "expr")
        fail("sql_invalid", `USING column ${name} must name one column of the left side.`, item);
      return (v as Extract<Value, { kind: "expr" }>).expr;
    });
    const before = scope.vars.length;
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
          if (r?.kind !== "expr")
            fail("sql_invalid", `USING column ${name} is not a column of the joined table.`, item);
          const eq: Expr = {
            k: "op",
            op: "=",
            args: [leftValues[k]!, (r as Extract<Value, { kind: "expr" }>).expr],
            type: { t: "scalar", s: "BOOL" },
          };
          on = on ? { k: "op", op: "AND", args: [on, eq], type: { t: "scalar", s: "BOOL" } } : eq;
          const merged = usingValue(kind, leftValues[k]!, (r as Extract<Value, { kind: "expr" }>).expr);
          scope.merged.set(name.toLowerCase(), { kind: "expr", expr: merged });
        });
      }
      if ((kind === "inner" || kind === "left" || kind === "right" || kind === "full") && !on) {
        fail("sql_invalid", `${kind.toUpperCase()} JOIN needs an ON condition.`, item);
      }
      select.joins.push({ kind, item: bound.from, ...(on ? { on } : {}) });
      fromVar.cte = undefined;
      // an outer join pads the other side's rows with NULLs: its never-NULL columns may be NULL
      const padded = scope.vars.slice(kind === "right" ? 0 : before, kind === "right" ? before : undefined);
      if (kind === "left" || kind === "right" || kind === "full") for (const v of padded) mayBeNull(v);
      if (kind === "full") for (const v of scope.vars.slice(0, before)) mayBeNull(v);
    }
  });
}

/**
 * The one column of `JOIN … USING (c)`: the left side's `c`, the right side's in a RIGHT JOIN (the
 * left one is NULL on its padded rows), either in a FULL JOIN — COALESCE(left, right).
 */
function usingValue(kind: Join["kind"], left: Expr, right: Expr): Expr {
  if (kind === "right") return right;
  if (kind !== "full") return left;
  const type = commonType(left.type, right.type) ?? left.type;
  const as = (e: Expr): Expr =>
    type.t === "scalar" && e.type.t === "scalar" && e.type.s !== type.s
      ? { k: "cast", expr: e, to: type.s, safe: false, type }
      : e;
  return { k: "call", fn: "COALESCE", args: [as(left), as(right)], type };
}

/** Drops `notNull` from the columns of a range variable on the NULL-padded side of an outer join. */
function mayBeNull(v: RangeVar): void {
  const nullable = (x: Value | undefined): Value | undefined => {
    if (x?.kind !== "expr" || !notNull(x.expr)) return x;
    const { notNull: _, ...expr } = x.expr as Extract<Expr, { k: "col" }>;
    return { kind: "expr", expr };
  };
  const column = v.column.bind(v);
  v.column = (name) => nullable(column(name));
  if (v.star) {
    const star = v.star.bind(v);
    v.star = (name) => nullable(star(name));
  }
}

export function bindTableItem(
  item: AstNode,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
): { from: FromItem; cte?: CteInfo } {
  if (item.expr?.ast && isJoinGroup(item.expr.ast))
    return { from: bindJoinGroup(item.expr.ast, scope, ctx, opts) };
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
    bindDerived(scope, aliasText(item.as) ?? alias, alias, info);
    return { from: { k: "subquery", query: analyzed.query, alias }, cte: info };
  }
  if (item.expr?.type === "function") {
    // `FROM read_csv(…)`, `FROM glob(…)`, `, LATERAL (…)`: table functions are not relations
    const parts = [item.expr.name?.schema, ...(item.expr.name?.name ?? [])] as Array<{ value?: unknown }>;
    const fn =
      parts
        .map((p) => p?.value)
        .filter(Boolean)
        .join(".") || "a function";
    throw new QesError(
      "relation_not_allowed",
      `Table function ${String(fn)} is not allowed in FROM: ${ctx.mode === "consumer" ? "consumer SQL may read only the stored query's CTEs" : "only log sources are"}.`,
      locationOf(item.expr),
    );
  }
  const name = tableNameOf(item);
  const aliasName = aliasText(item.as) ?? String(item.table);
  const cte = !item.db ? opts.ctes.get(name.toLowerCase()) : undefined;
  if (cte) {
    // an engine may inline the CTE: its relations join this graph
    ctx.joinRelations(cte.relations ?? 1, item);
    ctx.readsCte(cte.chain ?? 1);
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
  const source = Object.hasOwn(ctx.schema.sources, name) ? ctx.schema.sources[name] : undefined;
  if (!source) {
    throw new UnknownSourceError(name, unknownSourceMessage(name), locationOf(item));
  }
  ctx.joinRelations(1, item);
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
export function bindDerived(scope: Scope, aliasName: string, alias: string, info: CteInfo): void {
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
      // the name as written first, as a table's fields are read (recordVar): `select *` of a source
      // holding `Foo` and `foo` (or `ǅ` and `ǆ`) outputs both, and each is read by its own spelling
      let i = names.indexOf(n);
      if (i < 0) {
        const lower = n.toLowerCase();
        i = names.findIndex((x) => x.toLowerCase() === lower);
      }
      return i < 0 ? undefined : columnValue(i);
    },
    // every output, the empty name included: an event's key `""` is a column of its source
    // (`select *` of the source outputs it), and anonymous expressions are named `f<N>_`
    columnNames: () => names,
    schemaless: false,
  });
}

export function isFromJson(e: Expr): boolean {
  return "fromJson" in e && e.fromJson === true;
}

/**
 * UNNEST of a record (a JSON object, REPEATED RECORD of ≤1) needs no join: its element is the
 * object itself, present or not. CROSS JOIN keeps rows where it is present; LEFT JOIN … ON keeps
 * every row and guards the element's fields. Only real arrays become engine-level unnests.
 */
export function analyzeUnnest(
  item: AstNode,
  kind: Join["kind"],
  select: Select,
  scope: Scope,
  ctx: CompileContext,
  opts: QueryOptions,
): FromItem | undefined {
  const env: ExprEnv = { scope, ctx, clause: "from", ctes: opts.ctes };
  const value = analyzeValue(item.expr, env);
  const name = (aliasText(item.as) ?? "").toLowerCase();
  const offsetName = item.with_offset
    ? (aliasText(item.with_offset.as) ?? "offset").toLowerCase()
    : undefined;
  if (value.kind === "record" && !offsetName) {
    const rec = value.rec;
    const presence = and(rec.guard, rec.root.presence(rec.path))!;
    let element: RecordValue;
    if (kind === "left") {
      const on = item.on ? analyzeOnForElement(item, rec, name, scope, ctx) : undefined;
      element = { ...rec, repeated: false, guard: on ? and(presence, on) : presence };
    } else {
      requirePresence(select, rec, presence);
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
    scope.vars.push(valueVar(name, { kind: "expr", expr: array }, true));
    if (offsetName)
      scope.vars.push(
        valueVar(offsetName, { kind: "expr", expr: { k: "lit", value: null, type: INT64 } }, false),
      );
    return undefined;
  }
  if (t.t !== "records" && t.t !== "array") {
    return fail("sql_invalid", `UNNEST needs an array, got ${typeName(t)}.`, item);
  }
  // an array's elements are a relation of the join graph (a record's one element is not)
  ctx.joinRelations(1, locationOf(item).line !== undefined ? item : item.expr);
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
    scope.vars.push(valueVar(name, { kind: "expr", expr: elementExpr }, false));
  } else {
    scope.vars.push(
      elementVar(name, { root: elementRoot(elementExpr), path: [], node: t.node, repeated: false }),
    );
  }
  if (offsetName) {
    const off: Expr = { k: "col", rel: alias, col: "off", type: INT64 };
    scope.vars.push(valueVar(offsetName, { kind: "expr", expr: off }, false));
  }
  if (item.on) {
    const on = analyzeCondition(item.on, { scope, ctx, clause: "on", ctes: opts.ctes });
    if (!(on.k === "lit" && on.value === true))
      fail("sql_invalid", "JOIN UNNEST(array) … ON supports only ON TRUE.", item.on);
  }
  return { k: "unnest", array, alias, elementType, withOffset: !!offsetName };
}

/**
 * The alias of an UNNEST of scalars (or of its offset): a value, and in `SELECT *` the one column
 * named after it (`select * from unnest([1, 2]) as x` has a column x).
 */
function valueVar(name: string, self: Value, schemaless: boolean): RangeVar {
  return {
    name,
    column: () => undefined,
    columnNames: () => (name ? [name] : []),
    star: (n) => (n === name ? self : undefined),
    self,
    schemaless,
  };
}

export function analyzeOnForElement(
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

export function elementVar(name: string, element: RecordValue): RangeVar {
  return recordVar(name, element);
}

/** Fixed columns of every source: typed by the service, not inferred from JSON, never NULL for id/timestamp. */
export const TYPED_BY_SERVICE = new Set(["id", "timestamp", "event_message", "project"]);

export const NEVER_NULL = new Set(["id", "timestamp"]);

/** A range variable whose columns are the fields of a record (a table row or an UNNEST element). */
export function recordVar(name: string, rec: RecordValue, isTableRow = false): RangeVar {
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

export function hasField(rec: RecordValue, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(rec.node.fields ?? {}).some((k) => k.toLowerCase() === lower);
}

/** An expanded array joins its row: CROSS, or LEFT … ON TRUE (keeping rows whose array is empty). */
function joinArray(select: Select, kind: Join["kind"], from: FromItem): void {
  const on: Expr = { k: "lit", value: true, type: { t: "scalar", s: "BOOL" } };
  select.joins.push(kind === "left" ? { kind: "left", item: from, on } : { kind: "cross", item: from });
}
