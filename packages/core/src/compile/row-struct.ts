/**
 * A range variable used as a value: in BigQuery a FROM item's alias on its own is a STRUCT of its
 * row (`dates` in `from dates, t where t.timestamp >= dates[0]`), with its columns as fields, in
 * SELECT * order. Fields resolve to the columns the range variable already has, so reading one
 * costs what reading the column costs; the whole struct, when output, is a JSON object.
 */
import type { FieldNode } from "../schema/schema-model.ts";
import type { Expr } from "./ir.ts";
import { and, guarded, leafType, type RecordRoot, type RecordValue } from "./record-value.ts";
import type { RangeVar, Value } from "./scope.ts";
import { BOOL, INT64, NULL_TYPE, type SqlType, STRING } from "./sql-type.ts";

export function rowStruct(v: RangeVar): RecordValue {
  const values = new Map<string, Value>();
  const fields: Record<string, FieldNode> = {};
  for (const name of v.columnNames()) {
    const value = v.column(name) ?? v.star?.(name);
    if (!value || Object.hasOwn(fields, name)) continue;
    values.set(name, value);
    fields[name] = fieldNodeOf(name, value);
  }
  return {
    root: structRoot(values),
    path: [],
    node: { name: v.name, kind: "record", fields },
    repeated: false,
  };
}

function fieldNodeOf(name: string, value: Value): FieldNode {
  if (value.kind === "record") return { ...value.rec.node, name, kind: "record" };
  const t = value.expr.type;
  if (t.t === "scalar") return { name, kind: "scalar", type: t.s };
  if (t.t === "array") return { name, kind: "array", type: t.element };
  if (t.t === "records") return { ...t.node, name, kind: "records" };
  if (t.t === "record") return { ...t.node, name, kind: "record" };
  return { name, kind: "scalar", type: "STRING" };
}

/**
 * One field of the struct output whole: its value, or its record's JSON text. Times go as the
 * wire conversion reads them inside JSON (TIMESTAMP and DATETIME as unix microseconds, DATE as
 * its text), never as an engine's own JSON rendering of a time.
 */
function fieldJson(value: Value): Expr {
  if (value.kind === "expr") {
    const e = value.expr;
    if (e.type.t !== "scalar") return e;
    const micros = (ts: Expr): Expr => ({ k: "call", fn: "UNIX_MICROS", args: [ts], type: INT64 });
    if (e.type.s === "TIMESTAMP") return micros(e);
    if (e.type.s === "DATETIME")
      return micros({
        k: "cast",
        expr: e,
        to: "TIMESTAMP",
        safe: false,
        type: { t: "scalar", s: "TIMESTAMP" },
      });
    if (e.type.s === "DATE") return { k: "cast", expr: e, to: "STRING", safe: false, type: STRING };
    return e;
  }
  const rec = value.rec;
  const type: SqlType = { t: "record", node: rec.node, repeated: rec.repeated };
  return guarded(rec.root.json(rec.path, type), rec.guard);
}

function structRoot(values: Map<string, Value>): RecordRoot {
  const nullOf = (type: SqlType): Expr => ({
    k: "lit",
    value: null,
    type: type.t === "scalar" ? type : NULL_TYPE,
  });
  const below = (value: Value, rest: string[], type: SqlType): Expr =>
    value.kind === "record"
      ? guarded(value.rec.root.json([...value.rec.path, ...rest], type), value.rec.guard)
      : { k: "json", base: value.expr, path: rest, type, fromJson: true };
  return {
    leaf(path, node) {
      const value = values.get(path[0] ?? "");
      if (!value) return nullOf(leafType(node));
      if (path.length === 1 && value.kind === "expr") return value.expr;
      if (value.kind === "record")
        return guarded(value.rec.root.leaf([...value.rec.path, ...path.slice(1)], node), value.rec.guard);
      return below(value, path.slice(1), leafType(node));
    },
    presence(path) {
      if (path.length === 0) return { k: "lit", value: true, type: BOOL };
      const value = values.get(path[0]!);
      if (!value) return { k: "lit", value: false, type: BOOL };
      if (value.kind === "record")
        return and(value.rec.guard, value.rec.root.presence([...value.rec.path, ...path.slice(1)]))!;
      const e = path.length === 1 ? value.expr : below(value, path.slice(1), STRING);
      return { k: "op", op: "IS NOT NULL", args: [e], type: BOOL };
    },
    json(path, type) {
      if (path.length === 0) {
        const args: Expr[] = [];
        for (const [name, value] of values)
          args.push({ k: "lit", value: name, type: STRING }, fieldJson(value));
        // typed as the record it is (as a STRUCT literal is), not as its text: typed STRING, the
        // row went into MAX, ORDER BY, GROUP BY, LENGTH, ARRAY_AGG … as each engine's
        // own JSON text of it (PostgreSQL's spaced, ClickHouse's INT64 as strings): three answers
        return { k: "call", fn: "__JSON_OBJECT", args, type };
      }
      const value = values.get(path[0]!);
      if (!value) return nullOf(type);
      if (path.length === 1) return value.kind === "expr" ? value.expr : fieldJson(value);
      return below(value, path.slice(1), type);
    },
  };
}
