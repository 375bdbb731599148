export { createDuckdbBackend } from "./duckdb-backend.ts";
export {
  DUCKDB_DEFAULTS,
  type DuckdbConfig,
  defaultMemoryLimit,
  duckdbInstanceOptions,
} from "./duckdb-config.ts";
export { DuckdbDialect, duckdbDialect } from "./duckdb-dialect.ts";
export { duckdbQueryError, executeOnDuckdb } from "./duckdb-executor.ts";
export { countRows, loadIntoDuckdb } from "./duckdb-loader.ts";
export { duckdbColumnType, jsonPointer, quoteIdent, schemaChangeSql, sqlString } from "./duckdb-storage.ts";
export { duckdbRowToWire, normaliseDuckdbValue } from "./duckdb-values.ts";
