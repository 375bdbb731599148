import { type ColumnType, type PhysicalColumn, physicalColumns } from "./infer-schema.ts";
import { isJsonObject, type JsonObject, type JsonValue, jsonText, textOfJsonValue } from "./json-value.ts";
import type { LogEvent } from "./parse-event.ts";
import type { FieldNode, SourceSchema } from "./schema-model.ts";

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

interface Slot {
  name: string;
  kind: FieldNode["kind"];
  type: ColumnType;
  /** index into the output, or -1 when the field has no column */
  index: number;
  children: Slot[];
}

function toColumnValue(value: JsonValue, type: ColumnType): ColumnValue {
  switch (type) {
    case "STRING":
      return textOfJsonValue(value);
    case "INT64":
      if (typeof value === "bigint") return value;
      if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
      return null;
    case "FLOAT64":
      if (typeof value === "number") return value;
      if (typeof value === "bigint") return Number(value);
      return null;
    case "BOOL":
      return typeof value === "boolean" ? value : null;
    default:
      return null;
  }
}

/**
 * Prepares the flattening of events into a source's columns (schema-model.ts layout). Prepare once
 * per schema version: the result is tied to the schema as it is now.
 */
export function createFlattener(schema: SourceSchema): EventFlattener {
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
      }));
  const top = slots(schema.fields, true);
  const width = columns.length;

  const fill = (out: ColumnValue[], level: Slot[], obj: JsonObject): void => {
    for (const slot of level) {
      const value = obj[slot.name];
      if (value === undefined || value === null) continue;
      if (slot.kind === "scalar") out[slot.index] = toColumnValue(value, slot.type);
      else if (slot.kind === "record") {
        if (!isJsonObject(value)) continue;
        out[slot.index] = slot.type === "PRESENCE" ? true : jsonText(value);
        fill(out, slot.children, value);
      } else if (Array.isArray(value)) out[slot.index] = jsonText(value);
    }
  };

  return {
    columns,
    flatten(event: LogEvent): ColumnValue[] {
      const out: ColumnValue[] = new Array(width).fill(null);
      const body = event.body;
      out[0] = event.id;
      out[1] = event.timestamp;
      out[2] = body.event_message === undefined ? null : textOfJsonValue(body.event_message);
      out[3] = body.project === undefined ? null : textOfJsonValue(body.project);
      fill(out, top, body);
      return out;
    },
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
