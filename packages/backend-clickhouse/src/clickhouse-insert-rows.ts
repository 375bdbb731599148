import { Readable } from "node:stream";
import type { ClickHouseClient } from "@clickhouse/client";
import {
  type ColumnEncoder,
  createRowEncoder,
  formatMicros,
  type LogEvent,
  type PhysicalColumn,
  type SourceSchema,
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

/**
 * `JSONCompactEachRow` text of each kind of value: TIMESTAMP as text the engine parses exactly
 * (µs), INT64 as digits (beyond 2^53 exactly), a double the engine cannot hold as null.
 */
const JSON_COMPACT: ColumnEncoder<string> = {
  null: "null",
  text: (value) => JSON.stringify(value),
  json: (value) => JSON.stringify(value),
  int64: (value) => String(value),
  float64: (value) => (Number.isFinite(value) ? String(value) : "null"),
  bool: (value) => (value ? "true" : "false"),
  timestamp: (micros) => `"${formatMicros(micros, " ", "always")}"`,
};

/** Encodes events for a source's columns (core's flattening) as `JSONCompactEachRow` rows. */
export function createRowsEncoder(schema: SourceSchema): {
  columns: PhysicalColumn[];
  encode(events: readonly LogEvent[]): string;
  /** one event's row, with its newline */
  encodeOne(event: LogEvent): string;
} {
  const rows = createRowEncoder(schema, JSON_COMPACT);
  const row = new Array<string>(rows.columns.length);
  const encodeOne = (event: LogEvent) => `[${rows.encode(event, row).join(",")}]\n`;
  return {
    columns: rows.columns,
    encode(events) {
      let text = "";
      for (const event of events) text += encodeOne(event);
      return text;
    },
    encodeOne,
  };
}

/** Inserts encoded rows into one table (`columns` in the rows' order). */
export async function insertRows(
  client: ClickHouseClient,
  database: string,
  table: string,
  columns: readonly PhysicalColumn[],
  body: string,
): Promise<void> {
  const names = columns.map((c) => quoteIdent(c.column)).join(", ");
  // exec sends the text as it is (insert() would serialise each chunk as one JSON value)
  const result = await client.exec({
    query: `INSERT INTO ${qualified(database, table)} (${names}) FORMAT JSONCompactEachRow`,
    values: Readable.from([body]),
    clickhouse_settings: INSERT_SETTINGS,
  });
  result.stream.resume();
}
