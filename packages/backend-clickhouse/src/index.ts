export { createClickhouseBackend } from "./clickhouse-backend.ts";
export {
  type ClickhouseConfig,
  DEFAULT_CLICKHOUSE_DATABASE,
  DEFAULT_CLICKHOUSE_PATH,
  databaseOf,
} from "./clickhouse-config.ts";
export { ClickhouseDialect, clickhouseDialect } from "./clickhouse-dialect.ts";
export { boundedSql, limitSettings, paramName, queryParams } from "./clickhouse-executor.ts";
export { queryUrlFor, queryUserFor, queryUserSql } from "./clickhouse-query-user.ts";
export { qualified, quoteIdent, sqlString } from "./clickhouse-sql.ts";
export {
  clickhouseColumnType,
  columnDeclaration,
  createSourceSql,
  dropSourceSql,
  type StorageLayout,
  schemaChangeSql,
  ttlSql,
} from "./clickhouse-storage.ts";
export { CLICKHOUSE_QUERY_SETTINGS, nullableType } from "./clickhouse-types.ts";
export { clickhouseRowToWire, normaliseClickhouseValue } from "./clickhouse-values.ts";
