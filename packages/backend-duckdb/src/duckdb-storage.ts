import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  type DuckDBConnection,
  type DuckDBType,
  TIMESTAMP,
  VARCHAR,
} from "@duckdb/node-api";
import {
  BUILTIN_SOURCES,
  type ColumnType,
  type FieldNode,
  type LogSchema,
  newSourceSchema,
  physicalColumns,
  QesError,
  type SchemaChange,
  type SourceSchema,
} from "@qes/core";
import { checkpointAfterReaders } from "./duckdb-checkpoint.ts";
import { duckdbNumberText } from "./duckdb-float-text.ts";
import { jsonStringAt } from "./duckdb-json-text.ts";
import { quoteIdent, sqlString } from "./duckdb-sql.ts";

/**
 * Storage of log events in DuckDB: one table per source with the typed columns of the layout in
 * core's schema-model.ts, and the schema itself persisted beside them:
 * - `qes_sources(name, table_name, fields)`: each source's field tree as JSON;
 * - `qes_meta(key, value)`: `schema_version`, bumped by every schema change.
 */

const META = "qes_meta";
const SOURCES = "qes_sources";

export { quoteIdent, sqlString } from "./duckdb-sql.ts";

/** DuckDB column type of a layout column type. JSON text is plain VARCHAR. */
export function duckdbColumnType(type: ColumnType): string {
  switch (type) {
    case "STRING":
    case "JSON":
      return "VARCHAR";
    case "INT64":
      return "BIGINT";
    case "FLOAT64":
      return "DOUBLE";
    case "BOOL":
    case "PRESENCE":
      return "BOOLEAN";
    case "TIMESTAMP":
    case "DATETIME":
      return "TIMESTAMP";
    case "DATE":
      return "DATE";
  }
}

/** The node-api type of a layout column type (as `duckdbColumnType`), for appending. */
export function duckdbType(type: ColumnType): DuckDBType {
  switch (type) {
    case "STRING":
    case "JSON":
      return VARCHAR;
    case "INT64":
      return BIGINT;
    case "FLOAT64":
      return DOUBLE;
    case "BOOL":
    case "PRESENCE":
      return BOOLEAN;
    case "TIMESTAMP":
    case "DATETIME":
      return TIMESTAMP;
    case "DATE":
      return DATE;
  }
}

/** A JSON Pointer (RFC 6901) for DuckDB's json_extract, e.g. `/request/headers`. */
export function jsonPointer(path: readonly string[]): string {
  return path.map((key) => "/" + key.replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

/**
 * A column definition. JSON text columns are stored uncompressed: they are large and nearly
 * unique per row, DuckDB picks FSST for them, and decompressing FSST for every row a top-N scan
 * passes made "newest 100 events with metadata" (logs.all's default) take ~2 s over 1M edge
 * events against ~0.1 s uncompressed; loading them uncompressed also costs a third of the CPU.
 * The price is file size: ~1.2 GB instead of ~0.6 GB per million edge events for that column.
 */
function columnDefinition(column: string, type: ColumnType): string {
  const compression = type === "JSON" ? " USING COMPRESSION uncompressed" : "";
  return `${quoteIdent(column)} ${duckdbColumnType(type)}${compression}`;
}

export function createTableSql(schema: SourceSchema): string {
  const columns = physicalColumns(schema).map((c) => columnDefinition(c.column, c.type));
  return `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema.table)} (${columns.join(", ")})`;
}

/**
 * An ART index on a source's timestamp. DuckDB reads it for a scan whose only filter is a
 * constant range of that column: the rows of a "newest n" past their cut (`cutsFirst` in the
 * dialect, its value computed first by the executor), fetched by row id instead of decoding the
 * wide columns of every vector that holds one (logs.all at 1M events: the rows' read 20 → 10 ms).
 * Costs ~48 MB per million events on disk and in memory once read, and ~1 s of CPU per million
 * to build; appends maintain it.
 */
function timeIndex(source: SourceSchema): { name: string; column: string } {
  return { name: `${source.table}__timestamp`, column: source.fields.timestamp?.column ?? "timestamp" };
}

export function createTimeIndexSql(source: SourceSchema): string {
  const { name, column } = timeIndex(source);
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(source.table)} (${quoteIdent(column)})`;
}

/** DuckDB refuses to change or drop a column of an indexed table: the index is rebuilt around it */
export function dropTimeIndexSql(source: SourceSchema): string {
  return `DROP INDEX IF EXISTS ${quoteIdent(timeIndex(source).name)}`;
}

/**
 * A query that reads a source's time index, so that DuckDB loads it (lazily, on first use: ~1–2 s
 * per million events) before a request has to wait for it.
 */
export function readTimeIndexSql(source: SourceSchema): string {
  const { column } = timeIndex(source);
  return `SELECT count(*) FROM ${quoteIdent(source.table)} WHERE ${quoteIdent(column)} = TIMESTAMP '1970-01-01'`;
}

/** The top-level record whose JSON text holds the field at `path`, if any. */
function enclosingJson(
  source: SourceSchema,
  path: readonly string[],
): { column: string; path: string[] } | undefined {
  if (path.length < 2) return undefined;
  const top = source.fields[path[0]!];
  if (top?.kind !== "record" || top.column === undefined) return undefined;
  return { column: top.column, path: path.slice(1) };
}

/** Strings unquoted, numbers, objects and arrays as their JSON text in core's spelling (duckdb-json-text.ts). */
function jsonTextAt(column: string, path: readonly string[]): string {
  return jsonStringAt(quoteIdent(column), sqlString(jsonPointer(path)));
}

/**
 * The DDL of one schema change against the widened `source`, in order (empty when storage does
 * not change). No UPDATE: DuckDB 1.5 refuses to commit a transaction that UPDATEs a table and
 * then ALTERs it ("another transaction has altered this table"), so values are rewritten by
 * `ALTER COLUMN … TYPE … USING`.
 */
export function schemaChangeSql(source: SourceSchema, change: SchemaChange): string[] {
  const t = quoteIdent(source.table);
  switch (change.op) {
    case "add_column": {
      const col = quoteIdent(change.column);
      const type = duckdbColumnType(change.type);
      const sql = [`ALTER TABLE ${t} ADD COLUMN ${columnDefinition(change.column, change.type)}`];
      if (change.backfill) {
        const text = jsonTextAt(change.backfill.column, change.backfill.path);
        // wrap: a nested record widened to records keeps its objects as one-element arrays
        const using = change.backfill.wrap
          ? `CASE WHEN starts_with(${text}, '{') THEN '[' || ${text} || ']' END`
          : text;
        sql.push(`ALTER TABLE ${t} ALTER COLUMN ${col} TYPE ${type} USING ${using}`);
      }
      return sql;
    }
    case "alter_column": {
      const from = duckdbColumnType(change.from);
      const to = duckdbColumnType(change.to);
      // To STRING, a field inside a top-level record takes its original JSON text (what the
      // loader writes for new rows) rather than DuckDB's rendering of the old type (200.0).
      const within = change.to === "STRING" ? enclosingJson(source, change.path) : undefined;
      // JSON is VARCHAR too, but a records field's text holds an object sent as its one element
      // (`[{…}]`): as STRING it is the text sent, as one request of the events stores it
      if (from === to && (within === undefined || change.from !== "JSON")) return [];
      const col = quoteIdent(change.column);
      let using = "";
      if (within) {
        using = ` USING ${jsonTextAt(within.column, within.path)}`;
      } else if (change.from === "FLOAT64" && change.to === "STRING") {
        // core's spelling (`String(number)`), not DuckDB's (`9007199254740992.0`, `5e-05`)
        using = ` USING ${duckdbNumberText(col)}`;
      }
      return [`ALTER TABLE ${t} ALTER COLUMN ${col} TYPE ${to}${using}`];
    }
    case "wrap_in_array": {
      // a rewrite by ALTER … USING, not UPDATE (see above); only objects, should one be an array
      const col = quoteIdent(change.column);
      const type = duckdbColumnType("JSON");
      return [
        `ALTER TABLE ${t} ALTER COLUMN ${col} TYPE ${type} USING ` +
          `CASE WHEN starts_with(${col}, '{') THEN '[' || ${col} || ']' ELSE ${col} END`,
      ];
    }
    case "drop_column":
      return [`ALTER TABLE ${t} DROP COLUMN IF EXISTS ${quoteIdent(change.column)}`];
    case "retype_field":
      return [];
  }
}

/**
 * Run after the COMMIT of a transaction that changed a schema, before it is acknowledged. DuckDB
 * 1.5 cannot replay an `ALTER COLUMN … TYPE … USING <expression>` from its WAL ("Failure while
 * replaying WAL file: Calling DatabaseManager::GetDefaultDatabase with no default database set",
 * duckdb/duckdb#20543, #22044): a crash after such a widening and before the next checkpoint left
 * a store no process could open again. A checkpoint takes the change out of the WAL. What stays
 * is the moment between the two. A query running since before the change made DuckDB refuse the
 * checkpoint: the request failed after its COMMIT, and the process kept the old schema, so every
 * later event bringing the new field failed too ("Column with name f3 already exists") until a
 * restart; the checkpoint now waits for such queries (`checkpointAfterReaders`).
 */
export async function checkpointSchemaChange(conn: DuckDBConnection, waitMs?: number): Promise<void> {
  await checkpointAfterReaders(conn, waitMs);
}

export async function applySchemaChanges(
  conn: DuckDBConnection,
  source: SourceSchema,
  changes: SchemaChange[],
) {
  const statements = changes.flatMap((change) => schemaChangeSql(source, change));
  const altersColumns = statements.some((sql) => !sql.includes(" ADD COLUMN "));
  if (altersColumns) await conn.run(dropTimeIndexSql(source));
  for (const sql of statements) await conn.run(sql);
  if (altersColumns) await conn.run(createTimeIndexSql(source));
}

async function ensureMetaTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(`CREATE TABLE IF NOT EXISTS ${META} (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL)`);
  await conn.run(
    `CREATE TABLE IF NOT EXISTS ${SOURCES} (name VARCHAR PRIMARY KEY, table_name VARCHAR NOT NULL UNIQUE, fields VARCHAR NOT NULL)`,
  );
  await conn.run(`INSERT INTO ${META} VALUES ('schema_version', 0) ON CONFLICT DO NOTHING`);
}

/** Reads the persisted schema; null when the store has never been initialised. */
export async function readLogSchema(conn: DuckDBConnection): Promise<LogSchema | null> {
  const exists = await conn.runAndReadAll(
    `SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('${META}', '${SOURCES}') AND schema_name = 'main'`,
  );
  if (Number(exists.getRows()[0]![0]) < 2) return null;
  const version = await conn.runAndReadAll(`SELECT value FROM ${META} WHERE key = 'schema_version'`);
  const rows = await conn.runAndReadAll(`SELECT name, table_name, fields FROM ${SOURCES} ORDER BY name`);
  const sources: Record<string, SourceSchema> = {};
  for (const [name, table, fields] of rows.getRows()) {
    sources[name as string] = {
      name: name as string,
      table: table as string,
      fields: JSON.parse(fields as string) as Record<string, FieldNode>,
    };
  }
  return { version: Number(version.getRows()[0]?.[0] ?? 0), sources };
}

/** Persists one source's schema (insert or replace). */
export async function writeSourceSchema(conn: DuckDBConnection, schema: SourceSchema): Promise<void> {
  await conn.run(
    `INSERT INTO ${SOURCES} VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET fields = excluded.fields`,
    [schema.name, schema.table, JSON.stringify(schema.fields)],
  );
}

export async function bumpSchemaVersion(conn: DuckDBConnection): Promise<number> {
  const r = await conn.runAndReadAll(
    `UPDATE ${META} SET value = value + 1 WHERE key = 'schema_version' RETURNING value`,
  );
  return Number(r.getRows()[0]![0]);
}

/** Creates a new source's table and records its schema (inside the caller's transaction). */
export async function createSource(conn: DuckDBConnection, schema: SourceSchema): Promise<void> {
  await conn.run(createTableSql(schema));
  await conn.run(createTimeIndexSql(schema));
  await writeSourceSchema(conn, schema);
}

/**
 * Creates the metadata tables and the nine built-in sources when missing, in one transaction.
 * Idempotent: an initialised store is left as it is.
 */
export async function initStorage(conn: DuckDBConnection): Promise<LogSchema> {
  await conn.run("BEGIN TRANSACTION");
  try {
    await ensureMetaTables(conn);
    const current = (await readLogSchema(conn))!;
    const tables = Object.values(current.sources).map((s) => s.table);
    let created = false;
    for (const name of BUILTIN_SOURCES) {
      if (current.sources[name]) continue;
      const schema = newSourceSchema(name, tables);
      tables.push(schema.table);
      await createSource(conn, schema);
      created = true;
    }
    if (created) await bumpSchemaVersion(conn);
    // stores made before the time index get it here, once
    for (const source of Object.values(current.sources)) await conn.run(createTimeIndexSql(source));
    await conn.run("COMMIT");
  } catch (e) {
    await conn.run("ROLLBACK").catch(() => {});
    throw e;
  }
  const schema = await readLogSchema(conn);
  if (!schema) throw new QesError("internal", "DuckDB store did not initialise");
  return schema;
}
