import { type Env, envInteger, envSizeText, envText } from "@qes/core";
import { DUCKDB_DEFAULTS, type DuckdbConfig, defaultMemoryLimit } from "./duckdb-config.ts";

/**
 * The DuckDB backend's variables (DESIGN.md §8): `QES_DUCKDB_PATH`, `QES_DUCKDB_MEMORY_LIMIT`,
 * `QES_DUCKDB_THREADS`. Imports no engine code: the server parses these at start-up before it
 * loads the backend.
 */
export function duckdbConfigFromEnv(env: Env): DuckdbConfig {
  return {
    path: envText(env, "QES_DUCKDB_PATH") ?? "./data/qes.duckdb",
    memoryLimit: envSizeText(env, "QES_DUCKDB_MEMORY_LIMIT", defaultMemoryLimit()),
    threads: envInteger(env, "QES_DUCKDB_THREADS", DUCKDB_DEFAULTS.threads, 1, 1024),
  };
}
