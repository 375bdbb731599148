import { createHash } from "node:crypto";
import {
  type Backend,
  bindRequestParams,
  compileEndpoint,
  type EndpointDefinition,
  type ParamKind,
  type WireValue,
} from "@qes/core";
import { micros } from "./run-endpoint.ts";

export interface SqlParam {
  kind: ParamKind;
  /** the request value (requests carry strings); absent = not sent */
  value?: string;
}

export interface RunSqlOptions {
  params?: Record<string, SqlParam>;
  /** the instant CURRENT_TIMESTAMP() is pinned to (ISO 8601); default 2025-01-15T12:00:00Z */
  now?: string;
  /** consumer SQL over the query's CTEs (the query must define the CTEs it reads) */
  consumerSql?: string;
  /** a redacting request: consumer SQL reads the CTEs with every address replaced in the engine */
  redact?: boolean;
}

export const DEFAULT_NOW = "2025-01-15T12:00:00Z";

/** A fixed id for every ad-hoc endpoint: the version (a hash of the SQL) tells them apart. */
const SQL_ENDPOINT_ID = "5f0c2a8e-3d41-4b7a-9c6e-8a1d2b3c4e5f";

/** Wraps one BigQuery query in an in-memory stored endpoint (DESIGN.md §2). */
export function sqlEndpoint(sql: string, params: Record<string, SqlParam> = {}): EndpointDefinition {
  const version = createHash("sha256")
    .update(sql)
    .update("\0")
    .update(JSON.stringify(Object.entries(params).map(([n, p]) => [n, p.kind])))
    .digest("hex");
  return {
    id: SQL_ENDPOINT_ID,
    name: "sql.case",
    sql,
    sqlFile: "<sql case>",
    maxRows: 10_000,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params: Object.fromEntries(
      Object.entries(params).map(([name, p]) => [name, { required: false, kind: p.kind }]),
    ),
    version,
  };
}

/**
 * Compiles, binds and executes one query the way the server runs a stored endpoint
 * (run-endpoint.ts), without HTTP. Returns the rows as wire values; a refusal throws its QesError.
 */
export async function runSql(
  backend: Backend,
  sql: string,
  opts: RunSqlOptions = {},
): Promise<Record<string, WireValue>[]> {
  const params = opts.params ?? {};
  const endpoint = sqlEndpoint(sql, params);
  const compiled = compileEndpoint(endpoint, {
    schema: await backend.schema(),
    dialect: backend.dialect,
    ...(opts.consumerSql === undefined ? {} : { consumerSql: opts.consumerSql }),
    redact: opts.redact === true,
  });
  const raw: Record<string, string | undefined> = {};
  for (const [name, p] of Object.entries(params)) if (p.value !== undefined) raw[name] = p.value;
  const bound = bindRequestParams(endpoint, compiled, raw, micros(opts.now ?? DEFAULT_NOW));
  const result = await backend.execute(compiled, bound.values, {
    maxRows: endpoint.maxRows,
    timeoutMs: 30_000,
  });
  return result.rows;
}
