import { Readable } from "node:stream";
import type { ClickHouseClient } from "@clickhouse/client";
import {
  type ColumnType,
  type ColumnValue,
  type EventFlattener,
  formatMicros,
  type LogEvent,
} from "@qes/core";
import { qualified, quoteIdent } from "./clickhouse-sql.ts";

/** Events per INSERT: large enough for few parts, small enough to keep one batch bounded. */
export const EVENTS_PER_INSERT = 20_000;

/**
 * Settings of every insert: daily partitions mean one insert of a backfill can touch many days
 * (the engine refuses more than 100 per block by default).
 */
export const INSERT_SETTINGS = {
  max_partitions_per_insert_block: "0",
  throw_on_max_partitions_per_insert_block: false,
} as const;

function encodeValue(value: ColumnValue | undefined, type: ColumnType): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "bigint":
      // TIMESTAMP as text the engine parses exactly (µs); INT64 as digits (beyond 2^53 exactly)
      return type === "TIMESTAMP" || type === "DATETIME"
        ? `"${formatMicros(value, " ", "always")}"`
        : value.toString();
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    default:
      return JSON.stringify(value);
  }
}

/** `JSONCompactEachRow` text of events flattened for `flattener`'s columns (one JSON array per row). */
export function encodeRows(flattener: EventFlattener, events: readonly LogEvent[]): string {
  const types = flattener.columns.map((c) => c.type);
  const lines = new Array<string>(events.length);
  for (let r = 0; r < events.length; r++) {
    const values = flattener.flatten(events[r]!);
    let line = "[";
    for (let i = 0; i < values.length; i++) {
      if (i > 0) line += ",";
      line += encodeValue(values[i], types[i]!);
    }
    lines[r] = `${line}]\n`;
  }
  return lines.join("");
}

/** Inserts encoded rows into one table (its columns in `flattener`'s order). */
export async function insertRows(
  client: ClickHouseClient,
  database: string,
  table: string,
  flattener: EventFlattener,
  body: string,
): Promise<void> {
  const columns = flattener.columns.map((c) => quoteIdent(c.column)).join(", ");
  // exec sends the text as it is (insert() would serialise each chunk as one JSON value)
  const result = await client.exec({
    query: `INSERT INTO ${qualified(database, table)} (${columns}) FORMAT JSONCompactEachRow`,
    values: Readable.from([body]),
    clickhouse_settings: INSERT_SETTINGS,
  });
  result.stream.resume();
}
