import type { FieldNode, SourceSchema } from "../schema/schema-model.ts";
import type { Expr } from "./ir.ts";
import { columnKey } from "./null-rejection.ts";
import { BOOL, NULL_TYPE, type SqlType, STRING } from "./sql-type.ts";

/**
 * Where a record's fields physically live. Records are never materialised as engine values:
 * a field access becomes a typed column (flattened object chains, see schema-model.ts), a value
 * read from JSON text (below arrays), or a hidden column of a CTE or subquery that passes the
 * record through. Paths are absolute from the root's top.
 */
export interface RecordRoot {
  /** value of a scalar or array field (arrays as JSON text) */
  leaf(path: string[], node: FieldNode): Expr;
  /** true when the object at `path` exists (an object, not null or absent) */
  presence(path: string[]): Expr;
  /** JSON text of the value at `path` (the whole record when `path` is the root's) */
  json(path: string[], type: SqlType): Expr;
  /**
   * Columns (`columnKey`) whose value is not NULL only where the object at `path` exists: a
   * condition that rejects NULL in one of them implies that object's presence
   * (`record-presence.ts`). Absent where the root cannot tell.
   */
  presenceImpliedBy?(path: string[]): Set<string>;
}

/** A record-valued expression: the fields of `node`, found under `path` of `root`. */
export interface RecordValue {
  root: RecordRoot;
  path: string[];
  node: FieldNode;
  /** REPEATED RECORD (an array of ≤1 objects, e.g. `t.metadata`) or its element (a STRUCT) */
  repeated: boolean;
  /** fields are NULL unless this holds (a LEFT JOIN UNNEST … ON that did not match) */
  guard?: Expr;
}

export function recordType(rec: RecordValue): SqlType {
  return { t: "record", node: rec.node, repeated: rec.repeated };
}

export function and(a: Expr | undefined, b: Expr | undefined): Expr | undefined {
  if (!a) return b;
  if (!b) return a;
  return { k: "op", op: "AND", args: [a, b], type: BOOL };
}

export function guarded(expr: Expr, guard: Expr | undefined): Expr {
  if (!guard) return expr;
  return { k: "case", whens: [[guard, expr]], type: expr.type };
}

function isNotNull(expr: Expr): Expr {
  return { k: "op", op: "IS NOT NULL", args: [expr], type: BOOL };
}

function nodeAt(source: SourceSchema, path: string[]): FieldNode | undefined {
  let fields: Record<string, FieldNode> | undefined = source.fields;
  let node: FieldNode | undefined;
  for (const name of path) {
    node = fields && Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!node) return undefined;
    fields = node.fields;
  }
  return node;
}

/** A source table's row: fields reached through objects only have their own columns. */
export function tableRoot(rel: string, source: SourceSchema): RecordRoot {
  const column = (path: string[]) => nodeAt(source, path)?.column;
  const jsonOf = (path: string[], type: SqlType): Expr => {
    const top = column(path.slice(0, 1));
    if (!top) return { k: "lit", value: null, type: NULL_TYPE };
    const base: Expr = { k: "col", rel, col: top, type: path.length === 1 ? type : STRING, fromJson: true };
    return path.length === 1 ? base : { k: "json", base, path: path.slice(1), type, fromJson: true };
  };
  return {
    leaf(path, node) {
      const col = column(path);
      const type = leafType(node);
      if (col) return { k: "col", rel, col, type, fromJson: true };
      // Below an array there are no columns; the compiler unnests before reaching here.
      return jsonOf(path, type);
    },
    presence(path) {
      const col = column(path);
      if (!col) return { k: "lit", value: false, type: BOOL };
      return isNotNull({ k: "col", rel, col, type: BOOL });
    },
    json: jsonOf,
    presenceImpliedBy(path) {
      // storage fills a field's column only inside its parent object (flatten-event.ts), so every
      // column below the object is NULL where the object is absent, null or not an object
      const out = new Set<string>();
      const node = path.length > 0 ? nodeAt(source, path) : undefined;
      const stack = node?.kind === "record" ? Object.values(node.fields ?? {}) : [];
      while (stack.length) {
        const n = stack.pop()!;
        if (n.column) out.add(columnKey(rel, n.column));
        if (n.kind === "record") stack.push(...Object.values(n.fields ?? {}));
      }
      return out;
    },
  };
}

/** An element of a JSON array expanded by UNNEST: fields are read from the element's JSON text. */
export function elementRoot(element: Expr): RecordRoot {
  const at = (path: string[], type: SqlType): Expr =>
    path.length === 0
      ? ({ ...element, type } as Expr)
      : { k: "json", base: element, path, type, fromJson: true };
  return {
    leaf: (path, node) => at(path, leafType(node)),
    presence: (path) => isNotNull(at(path, STRING)),
    json: at,
  };
}

export function leafType(node: FieldNode): SqlType {
  switch (node.kind) {
    case "scalar":
      return { t: "scalar", s: node.type ?? "STRING" };
    case "array":
      return { t: "array", element: node.type ?? "STRING" };
    case "records":
      return { t: "records", node };
    case "record":
      return { t: "record", node, repeated: true };
  }
}
