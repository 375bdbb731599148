import {
  badConfig,
  type Env,
  envInteger,
  envSizeBytes,
  envText,
  envUrl,
  parseRetentionDays,
} from "@qes/core";
import {
  type ClickhouseConfig,
  DEFAULT_CLICKHOUSE_PATH,
  isClickhouseIdentifier,
} from "./clickhouse-config.ts";

/**
 * The ClickHouse backend's variables (DESIGN.md §8, §12): `QES_CLICKHOUSE_URL`,
 * `QES_CLICKHOUSE_QUERY_URL`, `QES_CLICKHOUSE_PATH`, `QES_CLICKHOUSE_CLUSTER`,
 * `QES_CLICKHOUSE_MAX_MEMORY`, and the shared `QES_QUERY_TIMEOUT_MS` and `QES_RETENTION_DAYS`
 * (the tables' TTL). Imports no engine code: the server parses these before it loads the backend.
 */
export function clickhouseConfigFromEnv(env: Env): ClickhouseConfig {
  const config: ClickhouseConfig = {
    path: envText(env, "QES_CLICKHOUSE_PATH") ?? DEFAULT_CLICKHOUSE_PATH,
    queryTimeoutMs: envInteger(env, "QES_QUERY_TIMEOUT_MS", 30_000, 1, 24 * 3600_000),
    retention: parseRetentionDays(env.QES_RETENTION_DAYS),
  };
  // tables get no TTL under a pinned clock (tests): it would expire by the engine's clock the
  // events the service's runs keep by the pinned one (clickhouse-retention.ts)
  if (env.NODE_ENV === "test" && envText(env, "QES_TEST_NOW") !== undefined) delete config.retention;
  const url = envUrl(env, "QES_CLICKHOUSE_URL", ["http:", "https:"]);
  if (url !== undefined) config.url = url;
  const queryUrl = envUrl(env, "QES_CLICKHOUSE_QUERY_URL", ["http:", "https:"]);
  if (queryUrl !== undefined) {
    if (url === undefined)
      badConfig("QES_CLICKHOUSE_QUERY_URL", "needs QES_CLICKHOUSE_URL (the embedded engine has no users)");
    config.queryUrl = queryUrl;
  }
  const cluster = envText(env, "QES_CLICKHOUSE_CLUSTER");
  if (cluster !== undefined) {
    if (!isClickhouseIdentifier(cluster))
      badConfig("QES_CLICKHOUSE_CLUSTER", `"${cluster}" is not a cluster name ([A-Za-z_][A-Za-z0-9_]*)`);
    if (url === undefined)
      badConfig("QES_CLICKHOUSE_CLUSTER", "needs QES_CLICKHOUSE_URL (a cluster is reached over HTTP)");
    config.cluster = cluster;
  }
  const maxMemory = envSizeBytes(env, "QES_CLICKHOUSE_MAX_MEMORY");
  if (maxMemory !== undefined) config.maxMemoryBytes = maxMemory;
  return config;
}

export { DEFAULT_CLICKHOUSE_PATH };
