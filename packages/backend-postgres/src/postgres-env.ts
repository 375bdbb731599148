import { badConfig, type Env, envInteger, envText, envUrl } from "@qes/core";
import {
  DEFAULT_HEAVY_QUERY_COST,
  DEFAULT_POSTGRES_POOL,
  DEFAULT_POSTGRES_SCHEMA,
  DEFAULT_POSTGRES_URL,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type PostgresBackendConfig,
  validateSchemaName,
} from "./postgres-config.ts";

const PROTOCOLS = ["postgres:", "postgresql:"];

/**
 * The PostgreSQL backend's variables (DESIGN.md §8): `QES_POSTGRES_URL`, `QES_POSTGRES_SCHEMA`,
 * `QES_POSTGRES_QUERY_URL`, `QES_POSTGRES_POOL`, `QES_POSTGRES_HEAVY_QUERY_COST` (an addition to
 * DESIGN.md's table), and the shared `QES_QUERY_TIMEOUT_MS`. Imports no driver: the server parses
 * these at start-up before it loads the backend.
 */
export function postgresConfigFromEnv(env: Env): PostgresBackendConfig {
  const schema = envText(env, "QES_POSTGRES_SCHEMA") ?? DEFAULT_POSTGRES_SCHEMA;
  if (!/^[a-z_][a-z0-9_]*$/.test(schema))
    badConfig("QES_POSTGRES_SCHEMA", `"${schema}" is not a lower-case SQL identifier`);
  const config: PostgresBackendConfig = {
    url: envUrl(env, "QES_POSTGRES_URL", PROTOCOLS) ?? DEFAULT_POSTGRES_URL,
    schema: validateSchemaName(schema),
    pool: envInteger(env, "QES_POSTGRES_POOL", DEFAULT_POSTGRES_POOL, 1, 1000),
    statementTimeoutMs: envInteger(
      env,
      "QES_QUERY_TIMEOUT_MS",
      DEFAULT_STATEMENT_TIMEOUT_MS,
      1,
      24 * 3600_000,
    ),
    heavyQueryCost: envInteger(
      env,
      "QES_POSTGRES_HEAVY_QUERY_COST",
      DEFAULT_HEAVY_QUERY_COST,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
  };
  const queryUrl = envUrl(env, "QES_POSTGRES_QUERY_URL", PROTOCOLS);
  if (queryUrl !== undefined) config.queryUrl = queryUrl;
  return config;
}
