import type { FieldNode, ScalarType } from "../schema/schema-model.ts";
import type { WireType } from "../wire/wire-type.ts";

/** The compiler's type of an expression (BigQuery's types, as far as log queries need them). */
export type SqlType =
  | { t: "scalar"; s: ScalarType }
  /** a JSON object: REPEATED RECORD of ≤1 element when `repeated`, else the STRUCT element */
  | { t: "record"; node: FieldNode; repeated: boolean }
  /** an array of objects: REPEATED RECORD of N elements */
  | { t: "records"; node: FieldNode }
  /** ARRAY<scalar>: JSON text when read from an event, an engine list when `native` (SPLIT, ARRAY_AGG…) */
  | { t: "array"; element: ScalarType; native?: boolean }
  /** NULL literal, or a field the schema does not know: NULL of any type */
  | { t: "null" }
  | { t: "interval" }
  | { t: "datepart"; part: string };

export const STRING: SqlType = { t: "scalar", s: "STRING" };
export const INT64: SqlType = { t: "scalar", s: "INT64" };
export const FLOAT64: SqlType = { t: "scalar", s: "FLOAT64" };
export const BOOL: SqlType = { t: "scalar", s: "BOOL" };
export const TIMESTAMP: SqlType = { t: "scalar", s: "TIMESTAMP" };
export const DATETIME: SqlType = { t: "scalar", s: "DATETIME" };
export const DATE: SqlType = { t: "scalar", s: "DATE" };
export const NULL_TYPE: SqlType = { t: "null" };

export function scalar(s: ScalarType): SqlType {
  return { t: "scalar", s };
}

export function scalarOf(type: SqlType): ScalarType | undefined {
  return type.t === "scalar" ? type.s : undefined;
}

export function isNumeric(type: SqlType): boolean {
  return type.t === "scalar" && (type.s === "INT64" || type.s === "FLOAT64");
}

export function isTemporal(type: SqlType): boolean {
  return type.t === "scalar" && (type.s === "TIMESTAMP" || type.s === "DATETIME" || type.s === "DATE");
}

export function typeName(type: SqlType): string {
  switch (type.t) {
    case "scalar":
      return type.s;
    case "record":
      return type.repeated ? "ARRAY<STRUCT>" : "STRUCT";
    case "records":
      return "ARRAY<STRUCT>";
    case "array":
      return `ARRAY<${type.element}>`;
    case "null":
      return "NULL";
    case "interval":
      return "INTERVAL";
    case "datepart":
      return "DATE PART";
  }
}

/** The wire format of an output column of this type (DESIGN.md §4). */
export function wireTypeOf(type: SqlType): WireType {
  switch (type.t) {
    case "scalar":
      return { kind: "scalar", type: type.s };
    case "record":
      return { kind: "record", node: type.node, repeated: type.repeated };
    case "records":
      return { kind: "records", node: type.node };
    case "array":
      return { kind: "array", element: type.element };
    default:
      return { kind: "null" };
  }
}

/** Common supertype for CASE branches, COALESCE, set operations; undefined when none. */
export function commonType(a: SqlType, b: SqlType): SqlType | undefined {
  if (a.t === "null") return b;
  if (b.t === "null") return a;
  if (a.t === "scalar" && b.t === "scalar") {
    if (a.s === b.s) return a;
    if (isNumeric(a) && isNumeric(b)) return FLOAT64;
    if ((a.s === "DATE" && b.s === "DATETIME") || (a.s === "DATETIME" && b.s === "DATE")) return DATETIME;
    return undefined;
  }
  if (a.t === b.t) return a;
  return undefined;
}
