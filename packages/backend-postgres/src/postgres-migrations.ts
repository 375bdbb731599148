import { QesError } from "@qes/core";
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import { JSON_OR_NULL } from "./postgres-sql.ts";
import { SOURCE_WRITES } from "./postgres-write-token.ts";

/**
 * The storage's own tables, created and migrated at start-up (kysely). Log tables are not
 * migrations: a load creates them as sources appear (postgres-storage.ts).
 *
 * - `qes_sources`: one row per source: its physical table and its schema model (the `fields`
 *   tree of core's SourceSchema as JSON) with a version taken from `qes_schema_version_seq`
 *   on every change. The LogSchema version is the sum of the sources' versions: it grows with
 *   every committed change even when transactions commit out of order, and reading it is one
 *   aggregate over a handful of rows.
 * - `qes_source_writes`: one row per source written since 0003: a token that every transaction
 *   storing events in the source replaces with a new random one (postgres-stored-ids.ts: a
 *   process's filter of a source's ids is good while the token is the one it last saw).
 */
export function storageMigrations(schema: string): Record<string, Migration> {
  return {
    "0001_schema_model": {
      async up(db: Kysely<any>) {
        await sql`create sequence if not exists ${sql.id(schema, "qes_schema_version_seq")}`.execute(db);
        await db.schema
          .withSchema(schema)
          .createTable("qes_sources")
          .ifNotExists()
          .addColumn("name", "text", (c) => c.primaryKey())
          .addColumn("table_name", "text", (c) => c.notNull().unique())
          .addColumn("fields", "json", (c) => c.notNull())
          .addColumn("version", "bigint", (c) => c.notNull())
          .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
          .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
          .execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.withSchema(schema).dropTable("qes_sources").ifExists().execute();
        await sql`drop sequence if exists ${sql.id(schema, "qes_schema_version_seq")}`.execute(db);
      },
    },
    // JSON functions read STRING arguments as JSON: text that is not JSON is NULL (BigQuery's
    // answer, DuckDB's json_valid, ClickHouse's isValidJSON), where a cast would raise; PostgreSQL
    // before 16 has no test for it but the cast itself. Queries call it unqualified (their
    // search path is this schema); PUBLIC may execute it, the query role included.
    "0002_json_or_null": {
      async up(db: Kysely<any>) {
        await sql`create or replace function ${sql.id(schema, JSON_OR_NULL)}(t text) returns json
          language plpgsql immutable strict parallel safe
          as $$ begin return t::json; exception when others then return null; end $$`.execute(db);
      },
      async down(db: Kysely<any>) {
        await sql`drop function if exists ${sql.id(schema, JSON_OR_NULL)}(text)`.execute(db);
      },
    },
    "0003_source_writes": {
      async up(db: Kysely<any>) {
        await db.schema
          .withSchema(schema)
          .createTable(SOURCE_WRITES)
          .ifNotExists()
          .addColumn("name", "text", (c) => c.primaryKey())
          .addColumn("token", "text", (c) => c.notNull())
          .execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.withSchema(schema).dropTable(SOURCE_WRITES).ifExists().execute();
      },
    },
    // 0002's function catches the cast's error in a subtransaction, which a parallel plan may not
    // start: a query reading JSON from a table the planner scanned in parallel failed ("cannot
    // start subtransactions during a parallel operation", a 500). PostgreSQL's rule for a
    // function with an EXCEPTION block is PARALLEL UNSAFE; such queries run in one process.
    "0004_json_or_null_parallel_unsafe": {
      async up(db: Kysely<any>) {
        await sql`alter function ${sql.id(schema, JSON_OR_NULL)}(text) parallel unsafe`.execute(db);
      },
      async down(db: Kysely<any>) {
        await sql`alter function ${sql.id(schema, JSON_OR_NULL)}(text) parallel safe`.execute(db);
      },
    },
  };
}

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

/**
 * Brings the schema's own tables to the latest version. The caller holds the schema's
 * advisory lock: kysely's own lock is taken only after it has created its bookkeeping tables,
 * which parallel first starts would otherwise race on.
 */
export async function migrateStorage(db: Kysely<any>, schema: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(storageMigrations(schema)),
    migrationTableSchema: schema,
    migrationTableName: "qes_migration",
    migrationLockTableName: "qes_migration_lock",
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "?";
    throw error instanceof QesError
      ? error
      : Object.assign(new Error(`migration ${failed} of schema ${schema} failed: ${String(error)}`), {
          cause: error,
          code: (error as { code?: unknown }).code,
        });
  }
}
