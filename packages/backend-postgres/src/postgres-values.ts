import {
  type NormalisedValue,
  type OutputColumn,
  parseIsoTimestampMicros,
  toWireValue,
  type WireType,
  type WireValue,
} from "@qes/core";
import type pg from "pg";

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

const identity = (text: string): string => text;
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
      default:
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

/** One pg result value, normalised for its wire type. */
export function normalisePgValue(value: unknown, type: WireType): NormalisedValue {
  if (value === null || value === undefined) return null;
  if (type.kind === "scalar" && typeof value === "string") {
    if (type.type === "TIMESTAMP" || type.type === "DATETIME") return timestampTextToMicros(value);
  }
  return value as NormalisedValue;
}

/** Rows of a query run with `rowMode: 'array'` as wire rows keyed by the compiled columns. */
export function toWireRows(rows: unknown[][], columns: OutputColumn[]): Record<string, WireValue>[] {
  const out: Record<string, WireValue>[] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const wire: Record<string, WireValue> = {};
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      wire[column.name] = toWireValue(column.type, normalisePgValue(row[c], column.type));
    }
    out[r] = wire;
  }
  return out;
}
