import { isJsonObject, type JsonValue, jsonText, parseJsonText, setOwn } from "../schema/json-value.ts";
import type { FieldNode, ScalarType } from "../schema/schema-model.ts";
import { formatDate, formatMicros, parseIsoTimestampMicros } from "../schema/timestamp-micros.ts";
import type { WireType, WireValue } from "./wire-type.ts";

/**
 * Wire values (DESIGN.md §4) from normalised engine values. A backend converts what its driver
 * returns into these normalised forms, then calls `toWireValue`:
 * - TIMESTAMP, DATETIME: unix microseconds as `bigint` (DATETIME: of the naive clock reading);
 *   a `number` or decimal string is accepted too;
 * - DATE: days since 1970-01-01 as a `number`, or `YYYY-MM-DD` text;
 * - INT64: `bigint`, `number` or decimal text; FLOAT64: `number`; BOOL: `boolean`; STRING: text;
 * - record / records / array: JSON text (parsed losslessly), or an already parsed value.
 */
export type NormalisedValue = null | undefined | string | number | bigint | boolean | JsonValue;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function int64Wire(value: bigint): WireValue {
  return value > MAX_SAFE || value < -MAX_SAFE ? value.toString() : Number(value);
}

function toBigInt(value: NormalisedValue): bigint | null {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isFinite(value) ? BigInt(Math.trunc(value)) : null;
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return BigInt(value.trim());
  return null;
}

/**
 * A TIMESTAMP or DATETIME inside a STRUCT, as an engine writes it in the record's JSON text:
 * DuckDB `2024-01-01 00:00:00.5`, PostgreSQL `2024-01-01T00:00:00.5+00:00` (ClickHouse writes
 * micros). Read as UTC (a DATETIME has no zone, and its text none), so that the member goes out
 * in the wire format of its type as a column of that type does.
 */
function timeTextMicros(value: NormalisedValue): bigint | null {
  return typeof value === "string" ? parseIsoTimestampMicros(value) : null;
}

function float64Wire(value: number): WireValue {
  // JSON has no NaN or infinities; BigQuery's JSON API writes them as these strings.
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
}

function textOf(value: NormalisedValue): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) return jsonText(value);
  return String(value);
}

/** A scalar of a known type (also used for scalars inside records and arrays). */
export function scalarToWire(type: ScalarType, value: NormalisedValue): WireValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "TIMESTAMP": {
      const micros = toBigInt(value) ?? timeTextMicros(value);
      return micros === null ? textOf(value) : int64Wire(micros);
    }
    case "DATETIME": {
      const micros = toBigInt(value) ?? timeTextMicros(value);
      return micros === null ? textOf(value) : formatMicros(micros, "T", "nonzero");
    }
    case "DATE":
      return typeof value === "number" ? formatDate(value) : textOf(value);
    case "INT64": {
      const n = toBigInt(value);
      return n === null ? null : int64Wire(n);
    }
    case "FLOAT64":
      if (typeof value === "number") return float64Wire(value);
      if (typeof value === "bigint") return Number(value);
      if (typeof value === "string") {
        // an array's NaN arrives as JSON's "NaN" (float64Wire's own spelling)
        if (value === "NaN") return "NaN";
        const n = Number(value);
        return value.trim() === "" || Number.isNaN(n) ? null : float64Wire(n);
      }
      return null;
    case "BOOL":
      if (typeof value === "boolean") return value;
      if (value === "true") return true;
      if (value === "false") return false;
      return null;
    default:
      return textOf(value);
  }
}

function parsed(value: NormalisedValue): JsonValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "string") return value;
  try {
    return parseJsonText(value);
  } catch {
    return undefined;
  }
}

/** An object shaped BigQuery-style: every nested object a one-element array. */
function shapeObject(fields: Record<string, FieldNode> | undefined, obj: Record<string, JsonValue>) {
  const out: Record<string, WireValue> = {};
  for (const key of Object.keys(obj)) {
    const node = fields !== undefined && Object.hasOwn(fields, key) ? fields[key] : undefined;
    setOwn(out, key, shapeField(node, obj[key]!));
  }
  return out;
}

function shapeField(node: FieldNode | undefined, value: JsonValue): WireValue {
  if (node === undefined) return shapeUntyped(value);
  switch (node.kind) {
    case "scalar":
      return scalarToWire(node.type ?? "STRING", value);
    case "record":
      return isJsonObject(value) ? [shapeObject(node.fields, value)] : [];
    case "records":
      // an object is a records field's one element (JSON text written before the field met arrays)
      if (isJsonObject(value)) return [shapeObject(node.fields, value)];
      return Array.isArray(value) ? value.filter(isJsonObject).map((el) => shapeObject(node.fields, el)) : [];
    case "array":
      return Array.isArray(value)
        ? value.filter((el) => el !== null).map((el) => scalarToWire(node.type ?? "STRING", el))
        : [];
  }
}

/** A value the schema has no node for: objects still become one-element arrays. */
function shapeUntyped(value: JsonValue): WireValue {
  if (value === null) return null;
  if (typeof value === "bigint") return int64Wire(value);
  if (Array.isArray(value)) return value.map(shapeUntyped);
  if (typeof value === "object") return [shapeObject(undefined, value)];
  return value;
}

/**
 * Converts one normalised value to its wire value by the column's type (DESIGN.md §4). A REPEATED
 * field (a repeated record, records, an array) is `[]` when missing or NULL, never null.
 */
export function toWireValue(type: WireType, value: NormalisedValue): WireValue {
  switch (type.kind) {
    case "null":
      return null;
    case "scalar":
      return scalarToWire(type.type, value);
    case "record": {
      const v = parsed(value);
      if (!isJsonObject(v)) return type.repeated ? [] : null;
      const shaped = shapeObject(type.node.fields, v);
      return type.repeated ? [shaped] : shaped;
    }
    case "records": {
      const v = parsed(value);
      if (isJsonObject(v)) return [shapeObject(type.node.fields, v)];
      return Array.isArray(v) ? v.filter(isJsonObject).map((el) => shapeObject(type.node.fields, el)) : [];
    }
    case "array": {
      const v = parsed(value);
      return Array.isArray(v)
        ? v.filter((el) => el !== null).map((el) => scalarToWire(type.element, el))
        : [];
    }
  }
}

/** An empty result row: prototype-less, so a column named `__proto__` is data like any other. */
export function emptyWireRow(): Record<string, WireValue> {
  return Object.create(null) as Record<string, WireValue>;
}
