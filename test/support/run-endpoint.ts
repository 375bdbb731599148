import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Backend,
  bindRequestParams,
  compileEndpoint,
  type EndpointRegistry,
  loadEndpoints,
  parseTimestampMicros,
  type QueryResult,
} from "@qes/core";

const here = fileURLToPath(new URL(".", import.meta.url));
export const BUILTIN_ENDPOINTS_DIR = join(here, "../../packages/server/endpoints");
export const FIXTURE_ENDPOINTS_DIR = join(here, "../fixtures/endpoints");

export async function builtinRegistry(...extraDirs: string[]): Promise<EndpointRegistry> {
  return loadEndpoints([BUILTIN_ENDPOINTS_DIR, ...extraDirs]);
}

export function micros(iso: string): bigint {
  const m = parseTimestampMicros(iso);
  if (m === undefined) throw new Error(`bad timestamp ${iso}`);
  return m;
}

/** Compile, bind and execute an endpoint the way the server does, without HTTP. */
export async function runEndpoint(
  backend: Backend,
  registry: EndpointRegistry,
  nameOrId: string,
  params: Record<string, string | undefined>,
  options: { now?: string; sql?: string } = {},
): Promise<QueryResult & { ignored: string[] }> {
  const endpoint = registry.get(nameOrId);
  if (!endpoint) throw new Error(`no endpoint ${nameOrId}`);
  const compiled = compileEndpoint(endpoint, {
    schema: await backend.schema(),
    dialect: backend.dialect,
    ...(options.sql !== undefined ? { consumerSql: options.sql } : {}),
    params,
  });
  const bound = bindRequestParams(endpoint, compiled, params, micros(options.now ?? "2025-01-15T12:00:00Z"));
  const result = await backend.execute(compiled, bound.values, {
    maxRows: endpoint.maxRows,
    timeoutMs: 30_000,
  });
  return { ...result, ignored: bound.ignored };
}

/** NDJSON lines of events. */
export function ndjson(events: object[]): string[] {
  return events.map((e) => JSON.stringify(e));
}
