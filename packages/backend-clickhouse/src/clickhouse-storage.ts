import {
  type ColumnType,
  FIXED_COLUMNS,
  physicalColumns,
  type SchemaChange,
  type SourceSchema,
} from "@qes/core";
import { floatTextAsCore } from "./clickhouse-float-text.ts";
import { jsonStringAt, readableJson } from "./clickhouse-json-text.ts";
import { qualified, quoteIdent, sqlString } from "./clickhouse-sql.ts";

/**
 * Storage of log events in ClickHouse: a MergeTree table per source with the typed columns of the
 * layout in core's schema-model.ts (every scalar reachable through objects a typed column, records
 * as JSON text), `ORDER BY (project, timestamp)`, one partition per day, and a `TTL` when the
 * source has a retention. With a cluster, each source is a ReplicatedMergeTree `<table>_local` on
 * every node under a Distributed `<table>` that queries and loads use, and DDL runs ON CLUSTER.
 */
export interface StorageLayout {
  database: string;
  /** cluster name: ON CLUSTER DDL, ReplicatedMergeTree + Distributed */
  cluster?: string;
}

/** ClickHouse type of a layout column type (without Nullable). JSON text is a plain String. */
export function clickhouseColumnType(type: ColumnType): string {
  switch (type) {
    case "STRING":
    case "JSON":
      return "String";
    case "INT64":
      return "Int64";
    case "FLOAT64":
      return "Float64";
    case "BOOL":
    case "PRESENCE":
      return "Bool";
    case "TIMESTAMP":
    case "DATETIME":
      return "DateTime64(6, 'UTC')";
    case "DATE":
      return "Date32";
  }
}

/** The column's declared type: `id` and `timestamp` are never NULL (they are keys); the rest are Nullable. */
export function columnDeclaration(column: string, type: ColumnType): string {
  const base = clickhouseColumnType(type);
  return column === "id" || column === "timestamp" ? base : `Nullable(${base})`;
}

function onCluster(layout: StorageLayout): string {
  return layout.cluster === undefined ? "" : ` ON CLUSTER ${quoteIdent(layout.cluster)}`;
}

/** The MergeTree table holding a source's rows: the table itself, or `<table>_local` on a cluster. */
export function dataTable(layout: StorageLayout, table: string): string {
  return layout.cluster === undefined ? table : `${table}_local`;
}

/** Every table a schema change must alter: the data table and, on a cluster, its Distributed table. */
function alteredTables(layout: StorageLayout, table: string): string[] {
  return layout.cluster === undefined ? [table] : [dataTable(layout, table), table];
}

/**
 * Rows of UTC day D expire when day D + days + 1 begins: the days core's retention keeps (today and
 * the `days` before it, retention-policy.ts), so TTL and `applyRetention` remove the same events.
 * The TTL is a DateTime in UTC, an instant: a Date TTL is compared with the engine's local today,
 * so an engine east of UTC (chDB takes the process's TZ, a server its `timezone`) expired the
 * oldest day kept up to 14 hours early.
 */
function ttlExpression(days: number): string {
  // DateTime spans 1970-01-01 to 2106-02-07 (ClickHouse clamps or wraps outside it): an event of
  // 2150 (which `qes load` may store) would have a TTL in the past and go at the next merge. Days
  // past the end expire on its last day (never, in practice); days before 1970 as if of
  // 1970-01-01 (long expired: they go, as on every backend).
  const n = days + 1;
  return (
    `toDateTime(greatest(least(toDate32("timestamp"), toDate32('2106-02-06') - ${n}), toDate32('1970-01-01')) ` +
    `+ ${n}, 'UTC')`
  );
}

function ttlClause(days: number): string {
  return days > 0 ? `\nTTL ${ttlExpression(days)}` : "";
}

/** The TTL expression of a retention, for `ALTER TABLE … MODIFY TTL` (no TTL when 0 days). */
export function ttlSql(layout: StorageLayout, table: string, days: number): string {
  const t = `${qualified(layout.database, dataTable(layout, table))}${onCluster(layout)}`;
  return days > 0 ? `ALTER TABLE ${t} MODIFY TTL ${ttlExpression(days)}` : `ALTER TABLE ${t} REMOVE TTL`;
}

/**
 * The partition key of a new source's table: one partition per UTC day. `toDate32`, not `toDate`:
 * `Date` spans 1970-01-01…2149-06-06 and wraps around outside it (2150-01-01 became 2020-07-27),
 * and ClickHouse prunes partitions by the key, so a query on `timestamp` missed the events of
 * 1960 or 2150. Its partition ids are day numbers since 1970-01-01 (`-3532`, `20089`).
 */
export const PARTITION_KEY = 'toDate32("timestamp")';

/**
 * The key of tables made before `PARTITION_KEY`. Its partition ids are `YYYYMMDD`. A partition key
 * cannot be altered: start-up rebuilds such tables (clickhouse-partition-migration.ts), but on a
 * cluster, or when made by an older qes still running, or when a rebuild was refused, a table
 * keeps it, and staging, retention and statistics still follow it.
 */
export const OLD_PARTITION_KEY = 'toDate("timestamp")';

/** Whether a table's `partition_key` (as system.tables shows it) is by `toDate32`: day-number ids. */
export function isDayNumberKey(partitionKey: string): boolean {
  return /^toDate32\(/.test(partitionKey.trim());
}

function engineClause(layout: StorageLayout, table: string): string {
  if (layout.cluster === undefined) return "MergeTree";
  const path = `/clickhouse/tables/{shard}/${layout.database}/${dataTable(layout, table)}`;
  return `ReplicatedMergeTree(${sqlString(path)}, '{replica}')`;
}

/** What `createDataTableSql` makes. */
export interface DataTableSpec {
  /** the qualified name of the table to create */
  name: string;
  /** the source's table (its Distributed table's name on a cluster): names the replication path */
  table: string;
  /** column declarations, `"f1" Nullable(String)` */
  columns: readonly string[];
  retentionDays: number;
  durable: boolean;
  partitionKey: string;
  /**
   * false: the statement fails when the table exists, so a table being rebuilt is surely the one
   * this statement made (clickhouse-partition-migration.ts)
   */
  ifNotExists?: boolean;
}

/** The DDL of a source's MergeTree data table: the given columns, and what every source's table has. */
export function createDataTableSql(layout: StorageLayout, spec: DataTableSpec): string {
  const { columns, durable } = spec;
  return (
    `CREATE TABLE ${spec.ifNotExists === false ? "" : "IF NOT EXISTS "}${spec.name}${onCluster(layout)} (\n  ${columns.join(",\n  ")},\n` +
    `  INDEX "qes_id" "id" TYPE bloom_filter(0.01) GRANULARITY 1,\n` +
    `  PROJECTION ${ID_PROJECTION} ${ID_PROJECTION_QUERY}\n)\n` +
    `ENGINE = ${engineClause(layout, spec.table)}\n` +
    `PARTITION BY ${spec.partitionKey}\nORDER BY ("project", "timestamp")` +
    ttlClause(spec.retentionDays) +
    // project may be NULL; a TTL drops whole parts (whole days) instead of rewriting them
    `\nSETTINGS allow_nullable_key = 1, ttl_only_drop_parts = 1` +
    // an insert is on disk (fsynced) before it returns, so an acknowledged ingest survives a
    // crash; bulk loads skip it (3× faster measured) and rely on the OS like DuckDB's appender
    (durable ? ", fsync_after_insert = 1, fsync_part_directory = 1" : "")
  );
}

/**
 * The DDL creating a source's storage: its MergeTree table (ReplicatedMergeTree + Distributed on a
 * cluster). `retentionDays` > 0 adds a TTL that drops whole daily partitions once they expire;
 * `durable` fsyncs every insert (the staging tables of ingest calls). `partitionKey` is the
 * new-table key unless the table must match another's (a staging table its target's, for
 * `ATTACH PARTITION`).
 * A bloom filter on `id` keeps a check of a few ids from reading every row, and a projection of
 * the ids in id order (`ID_PROJECTION`) keeps ingest's check of a batch's thousands of ids, which
 * every granule's bloom filter lets through, from reading the whole `id` column.
 */
export function createSourceSql(
  layout: StorageLayout,
  schema: SourceSchema,
  retentionDays: number,
  durable = true,
  partitionKey = PARTITION_KEY,
): string[] {
  const columns = physicalColumns(schema).map(
    (c) => `${quoteIdent(c.column)} ${columnDeclaration(c.column, c.type)}`,
  );
  const local = qualified(layout.database, dataTable(layout, schema.table));
  const sql = [
    createDataTableSql(layout, {
      name: local,
      table: schema.table,
      columns,
      retentionDays,
      durable,
      partitionKey,
    }),
  ];
  if (layout.cluster !== undefined) {
    sql.push(
      `CREATE TABLE IF NOT EXISTS ${qualified(layout.database, schema.table)}${onCluster(layout)} AS ${local}\n` +
        `ENGINE = Distributed(${sqlString(layout.cluster)}, ${sqlString(layout.database)}, ` +
        `${sqlString(dataTable(layout, schema.table))}, cityHash64("id"))`,
    );
  }
  return sql;
}

/**
 * The projection of a source's ids in id order: ingest's duplicate check of 5,000 ids reads it by
 * its primary key instead of every `id` of the source (at 20M events: 62 ms against 231 ms,
 * `bench/clickhouse-dedupe.ts`). Parts carry it, so a TTL or a dropped partition takes it along.
 */
const ID_PROJECTION = '"qes_by_id"';
const ID_PROJECTION_QUERY = '(SELECT "id" ORDER BY "id")';

/**
 * The projection's declaration in a table's `SHOW CREATE` text: the name alone is not enough, as
 * a table (`src_app_qes_by_id` of source `app.qes-by-id`) or database name may hold it too.
 */
const ID_PROJECTION_DECLARED = /\bPROJECTION [`"]?qes_by_id[`"]? \(/;

/**
 * The DDL giving a source made before the projection its projection, for the parts it holds too
 * (a mutation ClickHouse runs in the background); none when `createTableQuery` (its `SHOW CREATE`
 * text) has it.
 */
export function addIdProjectionSql(layout: StorageLayout, table: string, createTableQuery: string): string[] {
  if (ID_PROJECTION_DECLARED.test(createTableQuery)) return [];
  const t = `${qualified(layout.database, dataTable(layout, table))}${onCluster(layout)}`;
  return [
    `ALTER TABLE ${t} ADD PROJECTION IF NOT EXISTS ${ID_PROJECTION} ${ID_PROJECTION_QUERY}`,
    `ALTER TABLE ${t} MATERIALIZE PROJECTION ${ID_PROJECTION}`,
  ];
}

/** The DDL dropping a source's tables (tests and tooling). */
export function dropSourceSql(layout: StorageLayout, table: string): string[] {
  return alteredTables(layout, table)
    .reverse()
    .map((t) => `DROP TABLE IF EXISTS ${qualified(layout.database, t)}${onCluster(layout)} SYNC`);
}

/**
 * Text at `path` inside JSON text `column`, as core's loader writes a STRING field: a string
 * unquoted, a number in core's spelling, anything else as its JSON text, NULL when missing or null
 * (clickhouse-json-text.ts).
 */
function jsonTextAt(column: string, path: readonly string[]): string {
  return jsonStringAt([readableJson(quoteIdent(column)), ...path.map(sqlString)].join(", "));
}

/** The top-level record whose JSON text holds the field at `path`, if any. */
function enclosingJson(source: SourceSchema, path: readonly string[]) {
  if (path.length < 2) return undefined;
  const top = source.fields[path[0]!];
  if (top?.kind !== "record" || top.column === undefined) return undefined;
  return { column: top.column, path: path.slice(1) };
}

/**
 * The statements of one schema change against the widened `source`, in order (empty when storage
 * does not change). `table` is the table to alter: staging tables of a load are altered alike.
 * Value rewrites are mutations: run them with `mutations_sync` so they are done on return.
 */
export function schemaChangeSql(
  layout: StorageLayout,
  source: SourceSchema,
  change: SchemaChange,
  table = source.table,
): string[] {
  const tables = table === source.table ? alteredTables(layout, table) : [table];
  const data = qualified(layout.database, table === source.table ? dataTable(layout, table) : table);
  const alter = (sql: string) =>
    tables.map((t) => `ALTER TABLE ${qualified(layout.database, t)}${onCluster(layout)} ${sql}`);
  switch (change.op) {
    case "add_column": {
      const col = quoteIdent(change.column);
      const sql = alter(`ADD COLUMN IF NOT EXISTS ${col} ${columnDeclaration(change.column, change.type)}`);
      if (change.backfill) {
        const text = jsonTextAt(change.backfill.column, change.backfill.path);
        // wrap: a nested record widened to records keeps its objects as one-element arrays
        const value = change.backfill.wrap
          ? `if(startsWith(${text}, '{'), concat('[', ${text}, ']'), NULL)`
          : text;
        sql.push(`ALTER TABLE ${data}${onCluster(layout)} UPDATE ${col} = ${value} WHERE 1`);
      }
      return sql;
    }
    case "alter_column": {
      const from = clickhouseColumnType(change.from);
      const to = clickhouseColumnType(change.to);
      // To STRING, a field inside a top-level record takes its original JSON text (what the loader
      // writes for new rows) rather than the engine's rendering of the old type.
      const within = change.to === "STRING" ? enclosingJson(source, change.path) : undefined;
      // JSON is a String too, but a records field's text holds an object sent as its one element
      // (`[{…}]`): as STRING it is the text sent, as one request of the events stores it
      if (from === to && (within === undefined || change.from !== "JSON")) return [];
      const col = quoteIdent(change.column);
      const sql =
        from === to ? [] : alter(`MODIFY COLUMN ${col} ${columnDeclaration(change.column, change.to)}`);
      if (within && change.from === "FLOAT64") {
        // ClickHouse rewrites a JSON number's exponent as `1e21` (core writes `1e+21`) and cannot
        // read an integer literal beyond 64 bits (`100000000000000000000`): that one takes the
        // column's own value, converted by MODIFY
        const json = jsonTextAt(within.column, within.path);
        sql.push(
          `ALTER TABLE ${data}${onCluster(layout)} UPDATE ${col} = ` +
            `if(${col} IS NULL, NULL, coalesce(${json}, ${floatTextAsCore(col)})) WHERE 1`,
        );
      } else if (within) {
        // an INT64 or BOOL converted by MODIFY is its JSON text already: it stands in where the
        // record's JSON cannot be read. A mutation reads JSON with simdjson whatever its settings
        // (CLICKHOUSE_QUERY_SETTINGS), which gives up on a whole document holding a number literal
        // beyond 64 bits (core writes 1.8446744073709552e19 as 18446744073709552000): every
        // INT64 field of such a record widened to STRING was NULL
        sql.push(
          `ALTER TABLE ${data}${onCluster(layout)} UPDATE ${col} = ` +
            `if(${col} IS NULL, NULL, coalesce(${jsonTextAt(within.column, within.path)}, ${col})) WHERE 1`,
        );
      } else if (change.from === "FLOAT64" && change.to === "STRING") {
        // ClickHouse converted with core's notation (`String(number)`: shortest digits, fixed within
        // [1e-7, 1e21)) but for two spellings: `1e21` is `1e+21`, and -0 is `0`
        sql.push(
          `ALTER TABLE ${data}${onCluster(layout)} UPDATE ${col} = ${floatTextAsCore(col)} ` +
            `WHERE ${col} = '-0' OR match(${col}, 'e[0-9]')`,
        );
      }
      return sql;
    }
    case "wrap_in_array": {
      // only objects, should one be an array
      const col = quoteIdent(change.column);
      return [
        `ALTER TABLE ${data}${onCluster(layout)} UPDATE ${col} = concat('[', ${col}, ']') WHERE startsWith(${col}, '{')`,
      ];
    }
    case "drop_column":
      return alter(`DROP COLUMN IF EXISTS ${quoteIdent(change.column)}`);
    case "retype_field":
      return [];
  }
}

/** True for the fixed columns every table has. */
export function isFixedColumn(column: string): boolean {
  return column in FIXED_COLUMNS;
}

const ADD_COLUMN = /^(ALTER TABLE \S+(?: ON CLUSTER \S+)?) (ADD COLUMN .*)$/s;

/**
 * Consecutive new columns of one table as one ALTER (`ADD COLUMN a …, ADD COLUMN b …`): each
 * ALTER is a metadata round trip, and a new source brings dozens of fields at once. Order is kept;
 * every other change stays a statement of its own.
 */
export function mergeAlters(statements: readonly string[]): string[] {
  const out: string[] = [];
  let prefix: string | null = null;
  for (const sql of statements) {
    const m = ADD_COLUMN.exec(sql);
    if (m && m[1] === prefix) out[out.length - 1] += `, ${m[2]}`;
    else out.push(sql);
    prefix = m ? m[1]! : null;
  }
  return out;
}
