import {
  emptyWireRow,
  type NormalisedValue,
  type OutputColumn,
  parseIsoTimestampMicros,
  toWireValue,
  type WireType,
  type WireValue,
} from "@qes/core";
import pg from "pg";

/**
 * Result values from pg to core's normalised values (to-wire-value.ts), then to wire values.
 *
 * Query connections parse only what JS holds exactly: booleans, 2- and 4-byte integers and
 * floats. Everything else stays PostgreSQL's text: int8 and numeric (exact digits), timestamps
 * (microseconds; a JS Date keeps milliseconds), dates, json/jsonb (parsed losslessly later).
 */
const BOOL = 16;
const INT2 = 21;
const INT4 = 23;
const OID = 26;
const FLOAT4 = 700;
const FLOAT8 = 701;

/** Arrays whose elements JS holds exactly as parsed by pg; every other array: elements as text. */
const BOOL_ARRAY = 1000;
const INT2_ARRAY = 1005;
const INT4_ARRAY = 1007;
const FLOAT4_ARRAY = 1021;
const FLOAT8_ARRAY = 1022;
/** array types: `typcategory = 'A'` in pg_type; the common ones, whose elements qes can type */
const TEXT_ELEMENT_ARRAYS = new Set([
  1009, // text[]
  1015, // varchar[]
  1016, // int8[]: digits as text
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1182, // date[]
  1014, // bpchar[]
  2951, // uuid[]
]);

const identity = (text: string): string => text;
const textArray = (pg.types.getTypeParser as (oid: number) => (text: string) => unknown)(1009);
const parseBool = (text: string): boolean => text === "t";
const parseInteger = (text: string): number => Number.parseInt(text, 10);
// parseFloat reads PostgreSQL's NaN, Infinity and -Infinity too
const parseFloat64 = (text: string): number => Number.parseFloat(text);

/** Type parsers of query connections (`types` of the pg Pool). */
export const queryTypeParsers: pg.CustomTypesConfig = {
  getTypeParser(oid: number, format?: string) {
    if (format === "binary") return identity as never;
    switch (oid) {
      case BOOL:
        return parseBool as never;
      case INT2:
      case INT4:
      case OID:
        return parseInteger as never;
      case FLOAT4:
      case FLOAT8:
        return parseFloat64 as never;
      case BOOL_ARRAY:
      case INT2_ARRAY:
      case INT4_ARRAY:
      case FLOAT4_ARRAY:
      case FLOAT8_ARRAY:
        return (pg.types.getTypeParser as (oid: number) => unknown)(oid) as never;
      default:
        if (TEXT_ELEMENT_ARRAYS.has(oid)) return textArray as never;
        return identity as never;
    }
  },
} as pg.CustomTypesConfig;

/**
 * `2025-01-15 09:00:00.123456+00` (timestamptz in a UTC session), `2025-01-15 09:00:00.5`
 * (timestamp) → unix microseconds. An offset other than +00 is honoured, so a session in another
 * zone still gives the same instant. `infinity` and BC dates stay text.
 */
export function timestampTextToMicros(text: string): bigint | string {
  return parseIsoTimestampMicros(text) ?? text;
}

function isTimeType(type: string): boolean {
  return type === "TIMESTAMP" || type === "DATETIME";
}

/**
 * One pg result value, normalised for its wire type. Records and arrays are expected as JSON
 * (json/jsonb); a native PostgreSQL array (e.g. from `string_to_array`) is accepted as well.
 */
export function normalisePgValue(value: unknown, type: WireType): NormalisedValue {
  if (value === null || value === undefined) return null;
  if (type.kind === "scalar" && typeof value === "string" && isTimeType(type.type)) {
    return timestampTextToMicros(value);
  }
  if (type.kind === "array" && Array.isArray(value) && isTimeType(type.element)) {
    return value.map((el) => (typeof el === "string" ? timestampTextToMicros(el) : el)) as NormalisedValue;
  }
  return value as NormalisedValue;
}

/** Rows of a query run with `rowMode: 'array'` as wire rows keyed by the compiled columns. */
export function toWireRows(rows: unknown[][], columns: OutputColumn[]): Record<string, WireValue>[] {
  const out: Record<string, WireValue>[] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const wire = emptyWireRow();
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      wire[column.name] = toWireValue(column.type, normalisePgValue(row[c], column.type));
    }
    out[r] = wire;
  }
  return out;
}
