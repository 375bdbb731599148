import { type ColumnType, type PhysicalColumn, physicalColumns } from "./infer-schema.ts";
import { isJsonObject, type JsonObject, type JsonValue, jsonText, textOfJsonValue } from "./json-value.ts";
import type { LogEvent } from "./parse-event.ts";
import type { FieldNode, SourceSchema } from "./schema-model.ts";

/**
 * How a backend writes the value of one column. Flattening (which field of an event goes to which
 * column, and as what) is core's alone: the row encoder walks the event once and hands each value
 * it finds here, by the column's type, so a backend's encoder only encodes (COPY text, JSON, a
 * native vector's value) and never walks an event itself.
 */
export interface ColumnEncoder<T> {
  /** a column the event has no value for (absent, null, or not of the column's kind) */
  readonly null: T;
  /** STRING: a scalar as text */
  text(value: string): T;
  /**
   * JSON: the JSON text of a record or an array, as JSON.stringify writes it (so with no raw
   * control characters: an encoder that escapes them in text can skip that here)
   */
  json(value: string): T;
  /**
   * INT64: an integral value, a `number` when it is within ±2^53 (as JSON.parse read it) and a
   * `bigint` beyond. Encoders that write text never need a BigInt.
   */
  int64(value: number | bigint): T;
  float64(value: number): T;
  /** BOOL, and PRESENCE (true: the record is there) */
  bool(value: boolean): T;
  /** TIMESTAMP, the event's timestamp in unix microseconds */
  timestamp(micros: bigint): T;
}

/** A source's columns and the encoding of events into them, for one schema version. */
export interface RowEncoder<T> {
  /** the columns, in the order of a row's values (see `physicalColumns`) */
  readonly columns: PhysicalColumn[];
  /**
   * Writes an event's values into `row` (every column: the encoder's null where there is none)
   * and returns it; the event should have widened the schema first. `row` may be reused.
   */
  encode(event: LogEvent, row: T[]): T[];
}

/**
 * The value of one physical column: `bigint` for INT64 and for TIMESTAMP (unix µs), `number` for
 * FLOAT64, `boolean` for BOOL and PRESENCE, `string` for STRING and JSON (JSON text), or null.
 */
export type ColumnValue = null | string | number | bigint | boolean;

export interface EventFlattener {
  /** the columns, in the order of the values `flatten` returns (see `physicalColumns`) */
  readonly columns: PhysicalColumn[];
  /** values for every column of the table; the event should have widened the schema first */
  flatten(event: LogEvent): ColumnValue[];
}

/** Core's values as JavaScript values (`ColumnValue`): what the DuckDB appender takes. */
export const COLUMN_VALUES: ColumnEncoder<ColumnValue> = {
  null: null,
  text: (value) => value,
  json: (value) => value,
  int64: (value) => (typeof value === "bigint" ? value : BigInt(value)),
  float64: (value) => value,
  bool: (value) => value,
  timestamp: (micros) => micros,
};

interface Slot {
  name: string;
  kind: FieldNode["kind"];
  type: ColumnType;
  /** index into the output, or -1 when the field has no column */
  index: number;
  children: Slot[];
  /**
   * the name is also a property every object inherits (`constructor`, `toString`, `__proto__`):
   * an event without that key would read the inherited one — a function, Object.prototype — and
   * store its text ("" on PostgreSQL, "{}", a broken row that ClickHouse refused) instead of NULL
   */
  inherited: boolean;
}

/**
 * Prepares the encoding of events into a source's columns (schema-model.ts layout) by `encoder`.
 * Prepare once per schema version: the result is tied to the schema as it is now.
 */
export function createRowEncoder<T>(schema: SourceSchema, encoder: ColumnEncoder<T>): RowEncoder<T> {
  const columns = physicalColumns(schema);
  const indexOf = new Map(columns.map((c, i) => [c.column, i]));
  const slots = (fields: Record<string, FieldNode>, topLevel: boolean): Slot[] =>
    Object.values(fields)
      .filter((node) => node.column !== undefined && !(topLevel && isFixed(node.name)))
      .map((node) => ({
        name: node.name,
        kind: node.kind,
        type: columns[indexOf.get(node.column!)!]!.type,
        index: indexOf.get(node.column!)!,
        children: node.kind === "record" && node.fields ? slots(node.fields, false) : [],
        inherited: node.name in Object.prototype,
      }));
  const top = slots(schema.fields, true);
  const NULL = encoder.null;

  const scalar = (value: JsonValue, type: ColumnType): T => {
    switch (type) {
      case "STRING":
        return encoder.text(textOfJsonValue(value)!);
      case "INT64":
        if (typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value)))
          return encoder.int64(value);
        return NULL;
      case "FLOAT64":
        if (typeof value === "number") return encoder.float64(value);
        if (typeof value === "bigint") return encoder.float64(Number(value));
        return NULL;
      case "BOOL":
        return typeof value === "boolean" ? encoder.bool(value) : NULL;
      default:
        return NULL;
    }
  };

  const fill = (row: T[], level: Slot[], obj: JsonObject): void => {
    for (const slot of level) {
      const value = slot.inherited && !Object.hasOwn(obj, slot.name) ? undefined : obj[slot.name];
      if (value === undefined || value === null) continue;
      if (slot.kind === "scalar") row[slot.index] = scalar(value, slot.type);
      else if (slot.kind === "record") {
        if (!isJsonObject(value)) continue;
        row[slot.index] = slot.type === "PRESENCE" ? encoder.bool(true) : encoder.json(jsonText(value));
        fill(row, slot.children, value);
      } else if (Array.isArray(value)) row[slot.index] = encoder.json(jsonText(value));
      // a records field stores an object as its one element
      else if (slot.kind === "records" && isJsonObject(value))
        row[slot.index] = encoder.json(jsonText([value]));
    }
  };

  return {
    columns,
    encode(event: LogEvent, row: T[]): T[] {
      row.fill(NULL, 0, columns.length);
      const body = event.body;
      row[0] = encoder.text(event.id);
      row[1] = encoder.timestamp(event.timestamp);
      const message = body.event_message;
      if (message !== undefined && message !== null) row[2] = encoder.text(textOfJsonValue(message)!);
      const project = body.project;
      if (project !== undefined && project !== null) row[3] = encoder.text(textOfJsonValue(project)!);
      fill(row, top, body);
      return row;
    },
  };
}

/**
 * Prepares the flattening of events into a source's columns as `ColumnValue`s (`createRowEncoder`
 * with `COLUMN_VALUES`). Prepare once per schema version.
 */
export function createFlattener(schema: SourceSchema): EventFlattener {
  const rows = createRowEncoder(schema, COLUMN_VALUES);
  const width = rows.columns.length;
  return {
    columns: rows.columns,
    flatten: (event) => rows.encode(event, new Array<ColumnValue>(width)),
  };
}

function isFixed(name: string): boolean {
  return name === "id" || name === "timestamp" || name === "event_message" || name === "project";
}

/** Values of one event keyed by column name (convenience over `createFlattener`). */
export function flattenEvent(schema: SourceSchema, event: LogEvent): Record<string, ColumnValue> {
  const flattener = createFlattener(schema);
  const values = flattener.flatten(event);
  return Object.fromEntries(flattener.columns.map((c, i) => [c.column, values[i] ?? null]));
}
