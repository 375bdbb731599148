import {
  DuckDBArrayValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBUnionValue,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { NormalisedValue, OutputColumn } from "@qes/core";
import { emptyWireRow, toWireValue } from "@qes/core";

/**
 * DuckDB result values → core's normalised values (see `NormalisedValue` in core's
 * to-wire-value.ts): TIMESTAMP (naive UTC) and TIMESTAMPTZ → unix µs `bigint`, DATE → days,
 * BIGINT/HUGEINT → `bigint`, DECIMAL → number, VARCHAR (JSON text of record columns) → string,
 * LIST/STRUCT/MAP → arrays and objects of normalised values, anything else → its text.
 */
export function normaliseDuckdbValue(value: DuckDBValue): NormalisedValue {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) return value.micros;
  if (value instanceof DuckDBDateValue) return value.days;
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  if (value instanceof DuckDBTimestampSecondsValue) return value.seconds * 1_000_000n;
  if (value instanceof DuckDBTimestampMillisecondsValue) return value.millis * 1000n;
  if (value instanceof DuckDBTimestampNanosecondsValue) return value.nanos / 1000n;
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
    return value.items.map((item) => normaliseDuckdbValue(item)) as NormalisedValue;
  }
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, NormalisedValue> = {};
    for (const [key, v] of Object.entries(value.entries)) out[key] = normaliseDuckdbValue(v);
    return out as NormalisedValue;
  }
  if (value instanceof DuckDBMapValue) {
    const out: Record<string, NormalisedValue> = {};
    for (const { key, value: v } of value.entries)
      out[String(normaliseDuckdbValue(key))] = normaliseDuckdbValue(v);
    return out as NormalisedValue;
  }
  if (value instanceof DuckDBUnionValue) return normaliseDuckdbValue(value.value);
  return value.toString();
}

/** One result row → wire values keyed by the compiled query's output columns, in order. */
export function duckdbRowToWire(columns: readonly OutputColumn[], values: readonly DuckDBValue[]) {
  const row = emptyWireRow();
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    row[column.name] = toWireValue(column.type, normaliseDuckdbValue(values[i] ?? null));
  }
  return row;
}
