import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";

/**
 * kysely's PostgreSQL dialect for the storage's migrations, whose introspection sees only the
 * storage's own schema. kysely's migrator asks whether its tables exist by listing every table of
 * every schema, with a regclass lookup per column (pg_get_serial_sequence): a table another
 * instance, test worker or hourly retention drops meanwhile fails that listing ("relation
 * other_schema.t does not exist"), and with it this instance's start-up. Looking again only
 * narrowed the window (CI failed on it with two test workers); not looking at other schemas
 * closes it.
 */
export class OwnSchemaPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly schema: string,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db, this.schema);
  }
}

/** tables and schemas by name only: what the migrator asks; no columns, so no per-column lookups */
class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<any>,
    private readonly schema: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace where nspname = ${this.schema}`.execute(this.db);
    return rows.map((r) => ({ name: r.name }));
  }

  async getTables(_options?: DatabaseMetadataOptions): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; kind: string }>`
      select c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = ${this.schema} and c.relkind in ('r', 'v', 'p')`.execute(this.db);
    return rows.map((r) => ({ name: r.name, isView: r.kind === "v", columns: [], schema: this.schema }));
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
