import {
  BUILTIN_SOURCES,
  type ColumnType,
  type FieldNode,
  jsNumberTextSql,
  type LogSchema,
  newSourceSchema,
  QesError,
  type SchemaChange,
  type SourceSchema,
} from "@qes/core";
import type { ResolvedPostgresConfig } from "./postgres-config.ts";
import { shortestFloatText } from "./postgres-float-text.ts";
import {
  bucketStatisticsSql,
  ensureBucketStatistics,
  hasExpressionStatistics,
  indexNames,
  indexSql,
  isPartitioned,
  partitionedTableSql,
  partitionLegacyTable,
} from "./postgres-partitions.ts";
import { grantSelect } from "./postgres-query-role.ts";
import { advisoryKey, ident, literal, type Queryable, qualified } from "./postgres-sql.ts";
import { SOURCE_WRITES } from "./postgres-write-token.ts";

/**
 * Log tables and the persisted schema model (schema-model.ts layout). One table per source with
 * the fixed columns `id text`, `timestamp timestamptz`, `event_message text`, `project text`
 * and `f<N>` columns typed per `PG_COLUMN_TYPES`; the model of each source lives in
 * `qes_sources` (postgres-migrations.ts).
 */

/** PostgreSQL type of each storage column type. JSON text is `json`: see docs/benchmarks.md. */
export const PG_COLUMN_TYPES: Record<ColumnType, string> = {
  STRING: "text",
  INT64: "bigint",
  FLOAT64: "double precision",
  BOOL: "boolean",
  TIMESTAMP: "timestamptz",
  DATETIME: "timestamp",
  DATE: "date",
  JSON: "json",
  PRESENCE: "boolean",
};

interface SourceRow {
  name: string;
  table_name: string;
  fields: Record<string, FieldNode>;
}

function toSourceSchema(row: SourceRow): SourceSchema {
  return { name: row.name, table: row.table_name, fields: row.fields };
}

/** The schema model of every source, versioned (a sum that grows with every committed change). */
export async function readLogSchema(db: Queryable, schema: string): Promise<LogSchema> {
  const { rows } = await db.query<SourceRow & { total: string }>(
    `select name, table_name, fields, sum(version) over ()::text as total from ${qualified(schema, "qes_sources")}`,
  );
  const sources: Record<string, SourceSchema> = {};
  for (const row of rows) sources[row.name] = toSourceSchema(row);
  return { version: rows.length === 0 ? 0 : Number(rows[0]!.total), sources };
}

/** The version alone: one aggregate over a handful of rows, cheap enough to ask every second. */
export async function readSchemaVersion(db: Queryable, schema: string): Promise<number> {
  const { rows } = await db.query<{ total: string }>(
    `select coalesce(sum(version), 0)::text as total from ${qualified(schema, "qes_sources")}`,
  );
  return Number(rows[0]!.total);
}

/** One source's model, or null when the source does not exist. */
export async function readSource(db: Queryable, schema: string, name: string): Promise<SourceSchema | null> {
  const { rows } = await db.query<SourceRow>(
    `select name, table_name, fields from ${qualified(schema, "qes_sources")} where name = $1`,
    [name],
  );
  return rows[0] === undefined ? null : toSourceSchema(rows[0]);
}

/**
 * Serialises loads of one source (and, with `name` omitted, the creation of sources) until the
 * transaction ends. Loads of different sources run side by side.
 */
export async function lockSourceForLoad(client: Queryable, schema: string, name?: string): Promise<void> {
  const key = name === undefined ? `qes:create-source:${schema}` : `qes:load:${schema}:${name}`;
  await client.query("select pg_advisory_xact_lock($1::bigint)", [advisoryKey(key)]);
}

function columnDefinition(column: string, type: ColumnType): string {
  return `${ident(column)} ${PG_COLUMN_TYPES[type]}`;
}

/**
 * Creates a source's table, its indexes and its model row (version from the sequence), and lets
 * the reader SELECT it. The caller holds the create lock (`lockSourceForLoad` without a name).
 */
export async function createSource(
  client: Queryable,
  config: ResolvedPostgresConfig,
  name: string,
): Promise<SourceSchema> {
  const { rows } = await client.query<{ table_name: string }>(
    `select table_name from ${qualified(config.schema, "qes_sources")}`,
  );
  const taken = rows.map((r) => r.table_name);
  // daily partitions share the schema too (`src_x_20250115`)
  const { rows: relations } = await client.query<{ relname: string }>(
    "select relname from pg_class where relnamespace = $1::regnamespace",
    [ident(config.schema)],
  );
  for (const r of relations) taken.push(r.relname);
  // reserved: qes' own tables share the schema
  taken.push("qes_sources", SOURCE_WRITES, "qes_migration", "qes_migration_lock");
  // and the table's index names free: source `x`'s time index is `src_x_timestamp_idx`, the table
  // of source `x timestamp idx`, and `y`'s (project, timestamp) index is `y project`'s time index;
  // whichever came second silently lacked that index
  const source = newSourceSchema(name, taken, indexNames);
  for (const sql of partitionedTableSql(config.schema, source.table)) await client.query(sql);
  if (await hasExpressionStatistics(client)) {
    for (const sql of bucketStatisticsSql(config.schema, source.table)) await client.query(sql);
  }
  await grantSelect(client, config, source.table);
  await client.query(
    `insert into ${qualified(config.schema, "qes_sources")} (name, table_name, fields, version)
     values ($1, $2, $3, nextval(${literal(`${config.schema}.qes_schema_version_seq`)}))`,
    [source.name, source.table, JSON.stringify(source.fields)],
  );
  return source;
}

/** Stores a widened model and gives the source a new version (visible to others at commit). */
export async function saveSource(client: Queryable, schema: string, source: SourceSchema): Promise<void> {
  await client.query(
    `update ${qualified(schema, "qes_sources")}
     set fields = $2, version = nextval(${literal(`${schema}.qes_schema_version_seq`)}), updated_at = now()
     where name = $1`,
    [source.name, JSON.stringify(source.fields)],
  );
}

/** `'{a,b}'`: a text[] literal of a JSON path for `#>>`. */
function jsonPath(path: string[]): string {
  return literal(`{${path.map((p) => `"${p.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`);
}

/**
 * The JSON column holding a field's value when it sits inside a top-level record (so its
 * original text can be read back exactly), else undefined.
 */
function enclosingJson(source: SourceSchema, path: string[]): { column: string; rest: string[] } | undefined {
  if (path.length < 2) return undefined;
  const top = source.fields[path[0]!];
  if (top?.kind !== "record" || top.column === undefined) return undefined;
  return { column: top.column, rest: path.slice(1) };
}

/**
 * Applies widening changes (core's `widenSchema`) to a source's table, in order. Runs inside the
 * load's transaction, so a failed load leaves the table as it was. `source` is the widened model.
 */
/** SQLSTATE 54011: a table holds at most 1,600 columns */
const TOO_MANY_COLUMNS = "54011";

/**
 * The refusal of a batch whose new fields take its source's table past PostgreSQL's 1,600
 * columns. The count includes every column ever dropped from the table (PostgreSQL keeps a
 * dropped column's slot until the table is rewritten), and a record widened to STRING drops its
 * fields' columns: so a source can meet the limit with far fewer fields than
 * `QES_INGEST_MAX_FIELDS` allows. It is the batch's doing, not the service's: 400.
 */
function tooManyColumns(source: string, adding: number, cause: unknown): QesError {
  return new QesError(
    "invalid_event",
    `source ${JSON.stringify(source)} cannot take ${adding} more column${adding === 1 ? "" : "s"}: PostgreSQL ` +
      "holds at most 1,600 columns per table, counting the columns of fields that were widened away " +
      "(a record widened to STRING leaves its fields' columns behind until the table is rewritten). " +
      "Send these fields inside a string, or into another source.",
    { cause },
  );
}

export async function applySchemaChanges(
  client: Queryable,
  schema: string,
  source: SourceSchema,
  changes: SchemaChange[],
): Promise<void> {
  const table = qualified(schema, source.table);
  const adds: string[] = [];
  const flushAdds = async () => {
    if (adds.length === 0) return;
    try {
      await client.query(`alter table ${table} ${adds.join(", ")}`);
    } catch (e) {
      throw (e as { code?: unknown }).code === TOO_MANY_COLUMNS
        ? tooManyColumns(source.name, adds.length, e)
        : e;
    }
    adds.length = 0;
  };
  for (const change of changes) {
    switch (change.op) {
      case "add_column":
        adds.push(`add column if not exists ${columnDefinition(change.column, change.type)}`);
        if (change.backfill) {
          await flushAdds();
          const at = `(${ident(change.backfill.column)} #> ${jsonPath(change.backfill.path)})`;
          const text = `(${ident(change.backfill.column)} #>> ${jsonPath(change.backfill.path)})`;
          // wrap: a nested record widened to records keeps its objects as one-element arrays
          const value = change.backfill.wrap
            ? `case when json_typeof(${at}) = 'object' then ('[' || ${text} || ']')::json end`
            : text;
          await client.query(`update ${table} set ${ident(change.column)} = ${value}`);
        }
        break;
      case "alter_column": {
        await flushAdds();
        const to = PG_COLUMN_TYPES[change.to];
        // To STRING, a field inside a top-level record takes its original JSON text (what
        // `textOfJsonValue` gives at load) rather than PostgreSQL's rendering of the old type.
        const within = change.to === "STRING" ? enclosingJson(source, change.path) : undefined;
        const col = ident(change.column);
        if (within !== undefined) {
          await client.query(
            `alter table ${table} alter column ${col} type ${to} using ${ident(within.column)} #>> ${jsonPath(within.rest)}`,
          );
        } else if (change.from === "FLOAT64" && change.to === "STRING") {
          // core's spelling (`String(number)`), not PostgreSQL's (`9.007199254740992e+15`,
          // `5e-05`), from the shortest digits, which float8out writes only with this setting.
          // Written by an UPDATE of the text, not in the ALTER's USING: PostgreSQL (15) maps an
          // IS NULL in a USING expression onto the wrong column of a partition made after a
          // column was dropped (a record widened to STRING), which numbers its columns otherwise
          // ("attribute number 10 exceeds number of columns 9", every retry of the request)
          await client.query("set local extra_float_digits = 1");
          await client.query(`alter table ${table} alter column ${col} type text using ${col}::text`);
          const value = `${col}::float8`;
          await client.query(
            `update ${table} set ${col} = ${jsNumberTextSql(value, shortestFloatText(value), "text")} where ${col} is not null`,
          );
        } else {
          await client.query(`alter table ${table} alter column ${col} type ${to} using ${col}::${to}`);
        }
        break;
      }
      case "wrap_in_array": {
        await flushAdds();
        // the json type keeps the text as written; only objects, should one be an array
        const col = ident(change.column);
        await client.query(
          `update ${table} set ${col} = ('[' || ${col}::text || ']')::json where json_typeof(${col}) = 'object'`,
        );
        break;
      }
      case "drop_column":
        await flushAdds();
        await client.query(`alter table ${table} drop column if exists ${ident(change.column)}`);
        break;
      case "retype_field":
        break;
    }
  }
  await flushAdds();
}

/** The nine built-in sources exist (empty) from start-up (DESIGN.md §2). Idempotent. */
export async function ensureBuiltinSources(client: Queryable, config: ResolvedPostgresConfig): Promise<void> {
  const existing = await readLogSchema(client, config.schema);
  for (const name of BUILTIN_SOURCES) {
    if (existing.sources[name] === undefined) await createSource(client, config, name);
  }
  // covers tables created before the reader existed or after it was dropped and re-created
  const statistics = await hasExpressionStatistics(client);
  for (const source of Object.values(existing.sources)) {
    if (!(await isPartitioned(client, config.schema, source.table)))
      await partitionLegacyTable(client, config.schema, source.table);
    for (const sql of indexSql(config.schema, source.table)) await client.query(sql);
    // stores from before the bucket statistics get them (and one ANALYZE) at their first start-up
    if (statistics) await ensureBucketStatistics(client, config.schema, source.table);
    await grantSelect(client, config, source.table);
  }
}
