export { createPostgresBackend, PostgresBackend } from "./postgres-backend.ts";
export {
  DEFAULT_POSTGRES_POOL,
  DEFAULT_POSTGRES_SCHEMA,
  DEFAULT_POSTGRES_URL,
  type PostgresBackendConfig,
  type ResolvedPostgresConfig,
  readerRoleFor,
  validateSchemaName,
} from "./postgres-config.ts";
export { postgresDialect } from "./postgres-dialect.ts";
export { dropPostgresStorage } from "./postgres-drop-storage.ts";
export { postgresConfigFromEnv } from "./postgres-env.ts";
export { PG_COLUMN_TYPES } from "./postgres-storage.ts";
