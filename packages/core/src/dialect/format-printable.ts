import type { SqlType } from "../compile/sql-type.ts";
import { QesError } from "../errors.ts";
import type { FieldNode } from "../schema/schema-model.ts";
import type { SqlEmitter } from "./sql-emitter.ts";

/**
 * FORMAT's `%t` and `%T` (BigQuery "FORMAT", the printable and the literal-like text of any type):
 * written here once, from the emitter's casts and JSON reads, so every backend spells a value
 * alike — the engines' own casts of lists and records differ (`[1, 2]`, `{1,2}`, `['a','b']`,
 * `{"a" : 1}`). NULL prints as NULL (a repeated field read from JSON as `[]`, its wire value); an
 * ARRAY is `[v, v]`, a STRUCT `(v, v)`, a nested object a REPEATED RECORD of one `[(v, v)]`
 * (`%T`: `STRUCT()` and `STRUCT(v)` with fewer than two fields); `%T` quotes strings and writes
 * typed literals (`DATE "2025-01-15"`, `1.0`, `CAST("nan" AS FLOAT64)`).
 */
export function printableText(x: string, type: SqlType, literal: boolean, e: SqlEmitter): string {
  return `coalesce(${printable(x, type, literal, e)}, 'NULL')`;
}

function printable(x: string, type: SqlType, literal: boolean, e: SqlEmitter): string {
  switch (type.t) {
    case "null":
      return "'NULL'";
    case "scalar":
      return scalarText(x, type.s, literal, e);
    case "record":
      return type.repeated
        ? listText(x, { t: "records", node: type.node }, literal, e)
        : structText(x, type.node, literal, e);
    case "records":
    case "array":
      return listText(x, type, literal, e);
    default:
      throw new QesError("sql_invalid", `FORMAT %${literal ? "T" : "t"} cannot print this value.`);
  }
}

function scalarText(
  x: string,
  s: Extract<SqlType, { t: "scalar" }>["s"],
  literal: boolean,
  e: SqlEmitter,
): string {
  const text = e.cast(x, { t: "scalar", s }, "STRING");
  if (!literal) return text;
  switch (s) {
    case "STRING":
      return `'"' || replace(replace(${x}, ${e.stringLiteral("\\")}, ${e.stringLiteral("\\\\")}), '"', ${e.stringLiteral('\\"')}) || '"'`;
    case "FLOAT64":
      // a whole number keeps a fraction; NaN and the infinities are casts of their names
      return `CASE WHEN ${text} IN ('nan', 'inf', '-inf') THEN 'CAST("' || ${text} || '" AS FLOAT64)' WHEN NOT (${text} LIKE '%.%' OR ${text} LIKE '%e%' OR ${text} LIKE '%n%') THEN ${text} || '.0' ELSE ${text} END`;
    case "TIMESTAMP":
    case "DATETIME":
    case "DATE":
      return `'${s} "' || ${text} || '"'`;
    default:
      return text;
  }
}

function fieldType(f: FieldNode): SqlType {
  switch (f.kind) {
    case "scalar":
      return { t: "scalar", s: f.type ?? "STRING" };
    case "array":
      return { t: "array", element: f.type ?? "STRING" };
    // a nested object is a REPEATED RECORD of one element (DESIGN.md §3), as its wire value says
    default:
      return { t: "records", node: f };
  }
}

/** A STRUCT's JSON text, field by field in the record's order. */
function structText(x: string, node: FieldNode, literal: boolean, e: SqlEmitter): string {
  const fields = Object.values(node.fields ?? {});
  const parts = fields.map((f) => {
    const t = fieldType(f);
    return `coalesce(${printable(e.jsonExtract(x, [f.name], t), t, literal, e)}, 'NULL')`;
  });
  const open = literal && fields.length < 2 ? "'STRUCT('" : "'('";
  const body = parts.length ? parts.join(" || ', ' || ") : "''";
  return `CASE WHEN ${x} IS NULL THEN NULL ELSE ${open} || ${body} || ')' END`;
}

/** An ARRAY: each element printed, joined by ", " in the array's order (the dialect walks it). */
function listText(x: string, type: SqlType, literal: boolean, e: SqlEmitter): string {
  const element: SqlType =
    type.t === "records"
      ? { t: "record", node: type.node, repeated: false }
      : { t: "scalar", s: type.t === "array" ? type.element : "STRING" };
  const joined = e.joinedElements(
    x,
    type,
    (v) => `coalesce(${printable(v, element, literal, e)}, 'NULL')`,
    ", ",
  );
  // a repeated field read from JSON text is never NULL, only empty (DESIGN.md §4); an engine
  // list (SPLIT of NULL) may be NULL
  const missing = type.t === "array" && type.native ? "NULL" : "'[]'";
  return `CASE WHEN ${x} IS NULL THEN ${missing} ELSE '[' || ${joined} || ']' END`;
}
