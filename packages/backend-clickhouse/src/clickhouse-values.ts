import {
  emptyWireRow,
  type NormalisedValue,
  type OutputColumn,
  parseIsoTimestampMicros,
  type ScalarType,
  toWireValue,
  type WireType,
} from "@qes/core";

/**
 * ClickHouse result values (JSON output with 64-bit integers and non-finite floats quoted, see
 * `OUTPUT_SETTINGS`) → core's normalised values (to-wire-value.ts), then wire values:
 * DateTime64 text `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) → unix µs; Int64 digits stay text (exact);
 * `inf` / `-inf` / `nan` → numbers; UInt8 0/1 of a BOOL → boolean; Date32 text stays as it is; arrays element by element.
 */
export const OUTPUT_SETTINGS = {
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_denormals: 1,
  output_format_json_named_tuples_as_objects: 1,
  date_time_output_format: "simple",
} as const;

function scalar(type: ScalarType, value: unknown): NormalisedValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "TIMESTAMP":
    case "DATETIME":
      if (typeof value === "string") {
        const micros = parseIsoTimestampMicros(value);
        return micros ?? value;
      }
      return value as NormalisedValue;
    case "FLOAT64":
      if (typeof value === "string") {
        if (value === "inf" || value === "+inf") return Number.POSITIVE_INFINITY;
        if (value === "-inf") return Number.NEGATIVE_INFINITY;
        if (value === "nan" || value === "-nan") return Number.NaN;
      }
      return value as NormalisedValue;
    case "BOOL":
      // comparisons and IS NULL give UInt8 0/1
      return typeof value === "number" ? value !== 0 : (value as NormalisedValue);
    default:
      return value as NormalisedValue;
  }
}

/** One value of a column of `type`, as parsed from the engine's JSON. */
export function normaliseClickhouseValue(type: WireType, value: unknown): NormalisedValue {
  if (type.kind === "scalar") return scalar(type.type, value);
  if (type.kind === "array" && Array.isArray(value))
    return value.map((v) => scalar(type.element, v)) as NormalisedValue;
  return value as NormalisedValue;
}

/** One result row (values in column order) → wire values keyed by the output columns. */
export function clickhouseRowToWire(columns: readonly OutputColumn[], values: readonly unknown[]) {
  const row = emptyWireRow();
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    row[column.name] = toWireValue(column.type, normaliseClickhouseValue(column.type, values[i] ?? null));
  }
  return row;
}
