import type { FieldNode, ScalarType } from "../schema/schema-model.ts";

/**
 * The type of an output column, which decides its wire format (DESIGN.md §4). The format follows
 * the value's type, never a column or endpoint name.
 *
 * - `scalar`: the engine returns the value in the scalar's natural engine type.
 * - `record`: the engine returns JSON text of one JSON object; `repeated` wraps it in an array
 *   (a REPEATED RECORD column such as `metadata`), otherwise it is a STRUCT value. Nested objects
 *   are shaped by `node` (every object becomes a one-element array, numbers follow the types).
 * - `records`: JSON text of an array of objects, shaped by `node`.
 * - `array`: JSON text of an array of scalars of `element`.
 */
export type WireType =
  | { kind: "scalar"; type: ScalarType }
  | { kind: "record"; node: FieldNode; repeated: boolean }
  | { kind: "records"; node: FieldNode }
  | { kind: "array"; element: ScalarType }
  /** a value whose type is not known (a field the schema does not know): always NULL */
  | { kind: "null" };

export type WireValue = null | string | number | boolean | WireValue[] | { [key: string]: WireValue };
