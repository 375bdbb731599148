import {
  type Backend,
  bindRequestParams,
  compileEndpoint,
  type EndpointDefinition,
  type QueryResult,
} from "@qes/core";

/** One run of a stored query, as the HTTP layer (and later the cache) asks for it. */
export interface EndpointQueryRequest {
  /** request parameters as strings, unknown ones included (they are reported, not bound) */
  params: Record<string, string | undefined>;
  /** consumer SQL replacing the stored query's final SELECT (DESIGN.md §5) */
  consumerSql?: string;
  /** CURRENT_TIMESTAMP() of this request, unix µs, taken once */
  nowMicros: bigint;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface EndpointQueryResult extends QueryResult {
  /** request parameters the endpoint does not declare */
  ignored: string[];
  /** declared parameters after validation: the parameter part of a cache key */
  canonical: Record<string, string | null>;
}

/** compile (cached in core per endpoint version and schema version) → bind → execute */
export async function runEndpointQuery(
  backend: Backend,
  endpoint: EndpointDefinition,
  req: EndpointQueryRequest,
): Promise<EndpointQueryResult> {
  const schema = await backend.schema();
  const compiled = compileEndpoint(endpoint, {
    schema,
    dialect: backend.dialect,
    ...(req.consumerSql !== undefined ? { consumerSql: req.consumerSql } : {}),
  });
  const bound = bindRequestParams(endpoint, compiled, req.params, req.nowMicros);
  const result = await backend.execute(compiled, bound.values, {
    maxRows: endpoint.maxRows,
    timeoutMs: req.timeoutMs,
    ...(req.signal ? { signal: req.signal } : {}),
  });
  return { ...result, ignored: bound.ignored, canonical: bound.canonical };
}
