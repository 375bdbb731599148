import { type AstNode, aliasText } from "../parse/parse-sql.ts";
import type { FieldNode, ScalarType } from "../schema/schema-model.ts";
import { analyzeValue, type ExprEnv, fail, recordAsExpr } from "./analyze-expr.ts";
import { analyzeQuery } from "./analyze-query.ts";
import type { Expr } from "./ir.ts";
import { elementRoot } from "./record-value.ts";
import type { Value } from "./scope.ts";
import { BOOL, commonType, type SqlType, STRING } from "./sql-type.ts";

export function analyzeSubquery(ast: AstNode, env: ExprEnv, mode: "scalar" | "exists" | "in"): Expr {
  const outer = env.scope;
  const analyzed = analyzeQuery(ast, env.ctx, { final: false, ctes: env.ctes ?? new Map(), outer });
  const values = analyzed.branches[0]!.values;
  if (mode !== "exists" && values.length !== 1) {
    fail(
      "sql_invalid",
      `A ${mode === "in" ? "IN" : "scalar"} subquery must return one column, not ${values.length}.`,
      ast,
    );
  }
  const v = values[0];
  if (mode !== "exists" && v?.kind !== "expr")
    fail("sql_invalid", "A subquery returning a record is not supported here.", ast);
  const type: SqlType = mode === "scalar" && v?.kind === "expr" ? v.expr.type : BOOL;
  return { k: "subquery", query: analyzed.query, mode, type };
}

export const ELEMENT_TYPES: Record<string, ScalarType> = {
  INT64: "INT64",
  INT: "INT64",
  INTEGER: "INT64",
  FLOAT64: "FLOAT64",
  STRING: "STRING",
  BOOL: "BOOL",
  BOOLEAN: "BOOL",
  TIMESTAMP: "TIMESTAMP",
  DATETIME: "DATETIME",
  DATE: "DATE",
};

export function parseElementType(text: string, node: AstNode): ScalarType {
  const t = ELEMENT_TYPES[text.trim().toUpperCase()];
  if (!t) return fail("sql_invalid", `ARRAY<${text}> is not supported; use a scalar element type.`, node);
  return t;
}

/** `[a, b]`: an engine list of scalars, or JSON text of an array of structs. */
export function arrayLiteral(items: Value[], declared: ScalarType | undefined, node: AstNode): Expr {
  if (items.some((v) => v.kind === "record")) {
    if (!items.every((v) => v.kind === "record"))
      fail("sql_invalid", "An array literal mixes structs and other values.", node);
    const recs = items.map((v) => (v as Extract<Value, { kind: "record" }>).rec);
    const firstNames = Object.keys(recs[0]!.node.fields ?? {});
    const fields: Record<string, FieldNode> = {};
    const args = recs.map((r, n) => {
      const e = recordAsExpr(r);
      const own = Object.keys(r.node.fields ?? {});
      const literal = e.k === "call" && e.fn === "__JSON_OBJECT" ? e : undefined;
      // BigQuery coerces the elements to one STRUCT type by position: a later element's
      // unnamed fields (`STRUCT(2, 'b')`) take the first element's names
      const renamed =
        n > 0 && literal && own.length === firstNames.length && own.every((k, i) => k === `_field_${i + 1}`);
      const names = renamed ? firstNames : own;
      names.forEach((name, i) => {
        const field = { ...r.node.fields![own[i]!]!, name };
        // a NULL member (typed STRING by default) does not override another element's type
        const isNull = literal?.args[2 * i + 1]?.type.t === "null";
        if (!isNull || !Object.hasOwn(fields, name)) fields[name] = field;
      });
      if (!renamed) return e;
      return {
        ...literal!,
        args: literal!.args.map((a, i) =>
          i % 2 === 0 ? { k: "lit", value: names[i / 2]!, type: STRING } : a,
        ),
      } as Expr;
    });
    const recNode: FieldNode = { name: "", kind: "records", fields };
    return { k: "call", fn: "__JSON_ARRAY", args, type: { t: "records", node: recNode } };
  }
  const exprs = items.map((v) => (v as Extract<Value, { kind: "expr" }>).expr);
  let type: SqlType = declared ? { t: "scalar", s: declared } : { t: "null" };
  for (const e of exprs) {
    const c = commonType(type, e.type);
    if (!c || (c.t !== "scalar" && c.t !== "null"))
      fail("sql_invalid", "Array elements must share one scalar type.", node);
    type = c!;
  }
  const element: ScalarType = type.t === "scalar" ? type.s : "INT64";
  const args = exprs.map((e) =>
    e.type.t === "scalar" && e.type.s !== element
      ? ({ k: "cast", expr: e, to: element, safe: false, type: { t: "scalar", s: element } } as Expr)
      : e,
  );
  return { k: "call", fn: "__ARRAY", args, type: { t: "array", element, native: true } };
}

/** `STRUCT(1 AS a, 'x' AS b)`: JSON text of an object, read like a record from an event. */
export function analyzeStruct(node: AstNode, env: ExprEnv): Value {
  const items = (node.expr_list ?? []) as AstNode[];
  const declared = Array.isArray(node.definition?.definition)
    ? (node.definition.definition as AstNode[])
    : [];
  const fields: Record<string, FieldNode> = {};
  const args: Expr[] = [];
  items.forEach((item, i) => {
    const name = aliasText(item.as) ?? String(declared[i]?.field_name ?? `_field_${i + 1}`);
    const v = analyzeValue(item.expr, env);
    let e: Expr;
    let field: FieldNode;
    if (v.kind === "record") {
      e = recordAsExpr(v.rec);
      field = { ...v.rec.node, name, kind: v.rec.repeated ? "record" : "record" };
    } else {
      e = v.expr;
      const t = e.type;
      field =
        t.t === "array"
          ? { name, kind: "array", type: t.element }
          : t.t === "records"
            ? { ...t.node, name, kind: "records" }
            : { name, kind: "scalar", type: t.t === "scalar" ? t.s : "STRING" };
    }
    fields[name] = field;
    args.push({ k: "lit", value: name, type: STRING }, e);
  });
  const json: Expr = { k: "call", fn: "__JSON_OBJECT", args, type: STRING };
  return {
    kind: "record",
    rec: { root: elementRoot(json), path: [], node: { name: "", kind: "record", fields }, repeated: false },
  };
}
