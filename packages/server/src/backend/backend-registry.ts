import { resolve } from "node:path";
import { clickhouseConfigFromEnv, DEFAULT_CLICKHOUSE_PATH } from "@qes/backend-clickhouse/env";
import { duckdbConfigFromEnv } from "@qes/backend-duckdb/env";
import { postgresConfigFromEnv } from "@qes/backend-postgres/env";
import type { Backend, Env } from "@qes/core";

/**
 * The backends qes can run on, by `QES_BACKEND` name (DESIGN.md §6, §12). Each row reads the
 * backend's own variables with its package's `env` module (plain parsing, no engine code) and
 * loads the package itself only when that backend is created: the DuckDB default never loads the
 * PostgreSQL driver or ClickHouse's engine. A new backend is a new row here; nothing else in the
 * server knows backends by name.
 */
export interface BackendPlugin<C = unknown> {
  /** reads the backend's variables; a bad value throws QesError('invalid_config') naming it */
  configFromEnv(env: Env): C;
  /** loads the backend's package and creates the backend (not yet initialised) */
  create(config: C): Promise<Backend>;
  /**
   * the file or directory only one process may open (an embedded engine), if any: `qes serve`
   * announces its ingest API beside it and `qes load` sends events there instead
   */
  exclusiveStore?(config: C): string | undefined;
}

function plugin<C>(p: BackendPlugin<C>): BackendPlugin<unknown> {
  return p as BackendPlugin<unknown>;
}

export const BACKEND_PLUGINS = {
  duckdb: plugin({
    configFromEnv: duckdbConfigFromEnv,
    create: async (config) => (await import("@qes/backend-duckdb")).createDuckdbBackend(config),
    exclusiveStore: (config) => (config.path === ":memory:" ? undefined : resolve(config.path)),
  }),
  postgres: plugin({
    configFromEnv: postgresConfigFromEnv,
    create: async (config) => (await import("@qes/backend-postgres")).createPostgresBackend(config),
  }),
  clickhouse: plugin({
    configFromEnv: clickhouseConfigFromEnv,
    create: async (config) => (await import("@qes/backend-clickhouse")).createClickhouseBackend(config),
    exclusiveStore: (config) =>
      config.url === undefined ? resolve(config.path ?? DEFAULT_CLICKHOUSE_PATH) : undefined,
  }),
} satisfies Record<string, BackendPlugin>;

export type BackendName = keyof typeof BACKEND_PLUGINS;

export const BACKEND_NAMES = Object.keys(BACKEND_PLUGINS) as BackendName[];
