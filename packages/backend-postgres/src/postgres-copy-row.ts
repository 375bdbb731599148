import {
  type ColumnEncoder,
  createRowEncoder,
  type LogEvent,
  type PhysicalColumn,
  type SourceSchema,
} from "@qes/core/events";
import { TimestampText } from "./postgres-timestamp-text.ts";

/**
 * Events as rows of COPY's text format, in the column order of core's `physicalColumns`. Which
 * value goes to which column is core's flattening (`createRowEncoder`); this file only says how a
 * value is written as COPY text: INT64 as its digits (no BigInt on the way), text escaped.
 */

const NULL = "\\N";

/** COPY text format: backslash, tab, newline and carriage return escaped; NUL cannot be stored. */
export function copyText(text: string): string {
  // fast path: most values have nothing to escape
  if (!/[\\\t\n\r\0]/.test(text)) return text;
  return text
    .replaceAll("\\", "\\\\")
    .replaceAll("\t", "\\t")
    .replaceAll("\n", "\\n")
    .replaceAll("\r", "\\r")
    .replaceAll("\0", "");
}

/**
 * COPY text of JSON text: JSON.stringify leaves no raw tab, newline, carriage return or NUL, so
 * only backslashes are doubled (one scan for one character instead of the character class).
 */
export function copyJsonText(text: string): string {
  return text.includes("\\") ? text.replaceAll("\\", "\\\\") : text;
}

/**
 * COPY text of each kind of value. `timestamp` gives null for an instant outside the years
 * 0001–9999; callers check the range first (`TimestampText.format`), so a row never holds it.
 */
export function copyColumnEncoder(timestamps: TimestampText): ColumnEncoder<string> {
  return {
    null: NULL,
    text: copyText,
    json: copyJsonText,
    // integral numbers print in full below 1e21, beyond INT64 anyway
    int64: (value) => String(value),
    float64: (value) => String(value),
    bool: (value) => (value ? "t" : "f"),
    timestamp: (micros) => timestamps.format(micros) ?? NULL,
  };
}

export interface CopyRowEncoder {
  readonly columns: PhysicalColumn[];
  /** the day (since the epoch) and range check of timestamps, shared with the rows' encoding */
  readonly timestamps: TimestampText;
  /** one row without its newline */
  encode(event: LogEvent): string;
}

/** Prepares the encoding of events into a source's columns; one per schema version. */
export function createCopyRowEncoder(schema: SourceSchema, timestamps = new TimestampText()): CopyRowEncoder {
  const rows = createRowEncoder(schema, copyColumnEncoder(timestamps));
  const parts: string[] = new Array(rows.columns.length).fill(NULL);
  return {
    columns: rows.columns,
    timestamps,
    encode: (event) => rows.encode(event, parts).join("\t"),
  };
}
