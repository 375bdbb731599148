import {
  type Backend,
  type BoundRequest,
  bindRequestParams,
  type CompiledQuery,
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

export interface PreparedEndpointQuery {
  compiled: CompiledQuery;
  bound: BoundRequest;
}

/**
 * compile (cached in core per endpoint version and schema version) → validate and bind; throws the
 * 400/422 errors of a bad request before anything runs or any cache is read.
 */
export async function prepareEndpointQuery(
  backend: Backend,
  endpoint: EndpointDefinition,
  params: Record<string, string | undefined>,
  consumerSql: string | undefined,
  nowMicros: bigint,
  /** the answer is redacted: consumer SQL then reads the stored CTEs redacted in the engine */
  redact = false,
): Promise<PreparedEndpointQuery> {
  const schema = await backend.schema();
  const compiled = compileEndpoint(endpoint, {
    schema,
    dialect: backend.dialect,
    ...(consumerSql !== undefined ? { consumerSql } : {}),
    redact,
    params,
  });
  return { compiled, bound: bindRequestParams(endpoint, compiled, params, nowMicros) };
}

/** compile → bind → execute, without cache */
export async function runEndpointQuery(
  backend: Backend,
  endpoint: EndpointDefinition,
  req: EndpointQueryRequest,
): Promise<EndpointQueryResult> {
  const { compiled, bound } = await prepareEndpointQuery(
    backend,
    endpoint,
    req.params,
    req.consumerSql,
    req.nowMicros,
  );
  const result = await backend.execute(compiled, bound.values, {
    maxRows: endpoint.maxRows,
    timeoutMs: req.timeoutMs,
    ...(req.signal ? { signal: req.signal } : {}),
  });
  return { ...result, ignored: bound.ignored, canonical: bound.canonical };
}
