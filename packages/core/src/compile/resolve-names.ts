import type { AstNode } from "../parse/parse-sql.ts";
import { type ExprEnv, expr, fail } from "./analyze-expr.ts";
import { guarded, leafType, type RecordValue } from "./record-value.ts";
import { rowStruct } from "./row-struct.ts";
import type { Value } from "./scope.ts";
import { NULL_TYPE, typeName } from "./sql-type.ts";

/** Identifier path of a column reference, with subscripts (`a[OFFSET(0)].b`) as numbers. */
export type PathStep =
  | { name: string }
  | { index: number; mode: "offset" | "ordinal" | "safe_offset" | "safe_ordinal" };

export function columnRefPath(node: AstNode): PathStep[] {
  const steps: PathStep[] = [];
  if (node.table)
    steps.push(
      ...String(node.table)
        .split(".")
        .map((name) => ({ name })),
    );
  const col = node.column;
  if (typeof col === "string") {
    steps.push({ name: col });
  } else if (col && typeof col === "object") {
    const inner = col.expr;
    if (inner?.type === "column_ref") steps.push(...columnRefPath(inner));
    else if (inner && "value" in inner) steps.push({ name: String(inner.value) });
    for (const off of col.offset ?? []) {
      const v = off.value;
      if (v?.type !== "number") fail("sql_invalid", "Array subscripts must be integer literals.", node);
      const mode = String(off.name ?? "offset").toLowerCase() as
        | "offset"
        | "ordinal"
        | "safe_offset"
        | "safe_ordinal";
      steps.push({ index: Number(v.value), mode });
    }
    if (typeof col.suffix === "string" && col.suffix) {
      for (const part of col.suffix.split(".").filter(Boolean)) steps.push({ name: part });
    }
  }
  for (const f of node.subFields ?? []) steps.push({ name: String(f) });
  return steps;
}

export function resolveColumnRef(node: AstNode, env: ExprEnv): Value {
  const steps = columnRefPath(node);
  const first = steps[0];
  if (!first || !("name" in first)) return fail("sql_invalid", "Invalid column reference.", node);
  let current: Value | undefined;
  let rest = steps.slice(1);
  if (steps.length === 1 && env.alias) {
    const aliased = env.alias(first.name);
    if (aliased) return expr(aliased);
  }
  // Range variables (FROM aliases) take precedence over column names, as in BigQuery.
  const rangeVar = env.scope.findVar(first.name);
  if (rangeVar) {
    const next = rest[0];
    if (!next || !("name" in next)) {
      current = rangeVar.self;
      if (!current && !next) {
        const found = env.scope.findColumn(first.name);
        current = found && !("ambiguous" in found) ? found : undefined;
      }
      // a range variable on its own is a STRUCT of its row (BigQuery)
      if (!current) current = { kind: "record", rec: rowStruct(rangeVar) };
    } else {
      current = rangeVar.column(next.name);
      if (!current) {
        if (!rangeVar.schemaless)
          fail("sql_invalid", `Name ${next.name} not found inside ${first.name}.`, node);
        return expr({ k: "lit", value: null, type: NULL_TYPE });
      }
      rest = rest.slice(1);
    }
  }
  if (!current) {
    const found = env.scope.findColumn(first.name);
    if (found && "ambiguous" in found) {
      return fail(
        "sql_invalid",
        `Column name ${first.name} is ambiguous: it is in ${found.ambiguous.join(" and ")}; qualify it.`,
        node,
      );
    }
    current = found;
    if (!current) {
      if (env.scope.anySchemaless() && !env.alias?.(first.name))
        return expr({ k: "lit", value: null, type: NULL_TYPE });
      return fail("sql_invalid", `Unrecognized name: ${first.name}.`, node);
    }
    rest = steps.slice(1);
  }
  for (const step of rest) current = step_(current, step, node);
  return current;
}

export function step_(value: Value, step: PathStep, node: AstNode): Value {
  if ("index" in step) {
    const zeroBased = step.mode.endsWith("ordinal") ? step.index - 1 : step.index;
    if (value.kind === "record" && value.rec.repeated) {
      // A JSON object is an array of exactly one element: [0] is the element, any other index is
      // out of range (NULL; BigQuery raises unless SAFE_ — a deliberate departure, DESIGN.md §3).
      if (zeroBased !== 0) return expr({ k: "lit", value: null, type: NULL_TYPE });
      return { kind: "record", rec: { ...value.rec, repeated: false } };
    }
    if (value.kind === "record") {
      // a STRUCT subscripted by position: its field at that position (out of range: NULL, as
      // for arrays — DESIGN.md §3)
      const name = Object.keys(value.rec.node.fields ?? {})[zeroBased];
      return name === undefined ? expr({ k: "lit", value: null, type: NULL_TYPE }) : fieldOf(value.rec, name);
    }
    const t = value.expr.type;
    if (t.t === "null") return value;
    return fail("sql_invalid", `Subscript on a value of type ${typeName(t)} is not supported here.`, node);
  }
  if (value.kind === "record") return fieldOf(value.rec, step.name);
  const t = value.expr.type;
  if (t.t === "null") return value;
  return fail("sql_invalid", `Cannot access field ${step.name} on a value of type ${typeName(t)}.`, node);
}

/** Field `name` of a record (through the one-element array of a repeated record). */
export function fieldOf(rec: RecordValue, name: string): Value {
  // own keys only: `m.constructor` is a field the schema does not know (NULL), not Object's
  const fields = rec.node.fields;
  const child =
    (fields && Object.hasOwn(fields, name) ? fields[name] : undefined) ?? findCaseInsensitive(fields, name);
  if (!child) return expr({ k: "lit", value: null, type: NULL_TYPE });
  const path = [...rec.path, child.name];
  if (child.kind === "record")
    return {
      kind: "record",
      rec: { root: rec.root, path, node: child, repeated: true, ...(rec.guard ? { guard: rec.guard } : {}) },
    };
  const e =
    child.kind === "scalar" || child.kind === "array" || child.kind === "records"
      ? rec.root.leaf(path, child)
      : rec.root.json(path, leafType(child));
  return expr(guarded(e, rec.guard));
}

export function findCaseInsensitive<T>(fields: Record<string, T> | undefined, name: string): T | undefined {
  if (!fields) return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(fields)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// operators
