import type { EndpointDefinition, FieldNode, OutputColumn, ParamSpec, ScalarType, WireType } from "@qes/core";
import { REDACTION_HEADERS } from "../redaction/redaction-header.ts";
import { ingestPath } from "./ingest-path.ts";
import { servicePaths } from "./service-paths.ts";

type Schema = { [key: string]: unknown };

/** the built-ins' ids: their rows are described by SPEC.md §2.2/§2.3, not inferred */
const LOGS_ALL_ID = "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19";
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";

const LOGS_ALL_ROW: Schema = {
  type: "object",
  description: "A proxy/edge request log record (SPEC.md §2.2).",
  properties: {
    id: { type: "string", description: "log record identifier" },
    timestamp: { type: "integer", description: "record time, unix microseconds (16 digits)" },
    event_message: { type: "string", description: "message text of the record" },
    metadata: {
      type: "array",
      description: "nested structure attached to the record: every JSON object is an array of one record",
      items: { type: "object", additionalProperties: true },
    },
  },
  required: ["id", "timestamp", "event_message", "metadata"],
};

const count = (area: string): Schema => ({
  type: "integer",
  minimum: 0,
  description: `requests whose path contains /${area}; never null`,
});

const USAGE_ROW: Schema = {
  type: "object",
  description: "Request counts of one time bucket (SPEC.md §2.3).",
  properties: {
    timestamp: {
      type: "string",
      pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?$",
      description: "bucket start, a UTC datetime YYYY-MM-DDTHH:MM:SS",
    },
    total_rest_requests: count("rest"),
    total_storage_requests: count("storage"),
    total_auth_requests: count("auth"),
    total_realtime_requests: count("realtime"),
  },
  required: [
    "timestamp",
    "total_rest_requests",
    "total_storage_requests",
    "total_auth_requests",
    "total_realtime_requests",
  ],
};

const ERROR_STATUSES: Record<string, string> = {
  "400": "missing_parameter or invalid_parameter",
  "401": "unauthorized: no token, or an unknown, malformed or expired one",
  "403": "forbidden: the token may not run this endpoint, or contradicts a pinned parameter",
  "404": "endpoint_not_found",
  "413": "request_too_large",
  "422": "consumer SQL that does not parse or leaves the sandbox",
  "500": "internal",
  "503": "backend_unavailable",
  "504": "query_timeout",
};

export interface OpenApiInput {
  endpoints: readonly EndpointDefinition[];
  /** output columns of each endpoint's stored query, by endpoint id, when it compiles */
  columns: ReadonlyMap<string, readonly OutputColumn[]>;
  version: string;
  /** `QES_INGEST_MAX_BYTES`, stated in the ingest route's description */
  ingestMaxBytes: number;
}

/**
 * The OpenAPI 3.1 document of the service (`GET /api/openapi.json`), generated from the endpoint
 * files: per endpoint a path `/api/endpoints/query/<name>` with a GET (query parameters) and a
 * POST (the same parameters as a JSON object), parameter schemas from `params` (`kind`,
 * `allowed` as `enum`, `default`, `description`), and the row schema — SPEC.md §2.2/§2.3 for the
 * built-ins, the compiled query's wire types (DESIGN.md §4) for the others.
 */
export function openApiDocument(input: OpenApiInput): Schema {
  const paths: Schema = {};
  for (const endpoint of input.endpoints) {
    const row = rowSchema(endpoint, input.columns.get(endpoint.id));
    paths[`/api/endpoints/query/${encodeURIComponent(endpoint.name)}`] = {
      get: operation(endpoint, row, "get"),
      post: operation(endpoint, row, "post"),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "qes — query endpoint service",
      version: input.version,
      description:
        "Stored BigQuery-dialect SQL served as read-only HTTP endpoints over log data. " +
        "Call an endpoint by name (the paths below) or by its UUID (x-qes-endpoint-id).",
      // the service is private software run by its operator: no public licence is granted
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    // relative to where this document is served from: the same server answers every path
    servers: [{ url: "/", description: "this qes server" }],
    security: [{ apiKey: [] }, { bearer: [] }, { apiKeyQuery: [] }],
    paths: { ...paths, ...ingestPath(input.ingestMaxBytes), ...servicePaths() },
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-KEY" },
        bearer: { type: "http", scheme: "bearer", description: "an API token or a JWT" },
        apiKeyQuery: { type: "apiKey", in: "query", name: "api_key" },
      },
      schemas: {
        Error: {
          type: "object",
          properties: {
            error: {
              type: "object",
              properties: {
                code: { type: "string" },
                message: { type: "string" },
                requestId: { type: "string" },
                param: { type: "string" },
                allowed: { type: "array", items: { type: "string" } },
                line: { type: "integer" },
                column: { type: "integer" },
              },
              required: ["code", "message", "requestId"],
            },
          },
          required: ["error"],
        },
      },
      headers: {
        "X-Request-Id": {
          description: "the request's id (also in the server log)",
          schema: { type: "string" },
        },
      },
    },
  };
}

function operation(endpoint: EndpointDefinition, row: Schema, method: "get" | "post"): Schema {
  const declared = Object.entries(endpoint.params);
  const parameters: Schema[] = [];
  if (method === "get") {
    for (const [name, spec] of declared) parameters.push(queryParameter(name, spec));
    if (endpoint.sandboxable) parameters.push(sqlParameter());
  }
  for (const name of REDACTION_HEADERS) {
    parameters.push({
      name: name.toUpperCase(),
      in: "header",
      required: false,
      description: "`true` redacts IP addresses in this response (it never switches redaction off)",
      schema: { type: "string", enum: ["true"] },
    });
  }
  const op: Schema = {
    operationId: `${method}_${endpoint.name.replace(/[^A-Za-z0-9]+/g, "_")}`,
    "x-qes-endpoint-id": endpoint.id,
    summary: endpoint.description ?? endpoint.name,
    ...(endpoint.description !== undefined ? { description: endpoint.description } : {}),
    parameters,
    responses: responses(endpoint, row),
  };
  if (method === "post") {
    const properties: Schema = {};
    const required: string[] = [];
    for (const [name, spec] of declared) {
      properties[name] = { ...paramSchema(spec), type: "string" };
      if (spec.required && spec.default === undefined) required.push(name);
    }
    if (endpoint.sandboxable) properties.sql = sqlParameter().schema;
    op.requestBody = {
      required: false,
      description: "the parameters as a flat JSON object of strings, merged with the query string",
      content: {
        "application/json": {
          schema: { type: "object", properties, required, additionalProperties: { type: "string" } },
        },
      },
    };
  }
  return op;
}

function queryParameter(name: string, spec: ParamSpec): Schema {
  return {
    name,
    in: "query",
    required: spec.required && spec.default === undefined,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    schema: paramSchema(spec),
  };
}

function paramSchema(spec: ParamSpec): Schema {
  const schema: Schema =
    spec.kind === "integer"
      ? { type: "integer", format: "int64" }
      : spec.kind === "timestamp"
        ? { type: "string", format: "date-time" }
        : { type: "string" };
  if (spec.allowed) schema.enum = [...spec.allowed];
  if (spec.default !== undefined) schema.default = spec.default;
  return schema;
}

function sqlParameter(): Schema {
  return {
    name: "sql",
    in: "query",
    required: false,
    description:
      "consumer SQL (BigQuery dialect) replacing the stored query's final SELECT; it may read the stored query's CTEs",
    schema: { type: "string" },
  };
}

function responses(endpoint: EndpointDefinition, row: Schema): Schema {
  const out: Schema = {
    "200": {
      description: `rows of ${endpoint.name}, at most ${endpoint.maxRows}`,
      headers: {
        "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
        "X-Cache": { schema: { type: "string", enum: ["HIT", "MISS", "BYPASS"] } },
        Age: { description: "seconds since the cached rows were produced", schema: { type: "integer" } },
        "QES-Ignored-Params": { description: "undeclared parameters, ignored", schema: { type: "string" } },
        "QES-Row-Limit-Reached": { description: "`true` when rows were cut", schema: { type: "string" } },
      },
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: { result: { type: "array", items: row } },
            required: ["result"],
          },
        },
      },
    },
  };
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    out[status] = {
      description,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return out;
}

function rowSchema(endpoint: EndpointDefinition, columns: readonly OutputColumn[] | undefined): Schema {
  if (endpoint.id === LOGS_ALL_ID) return LOGS_ALL_ROW;
  if (endpoint.id === USAGE_ID) return USAGE_ROW;
  if (!columns) return { type: "object", additionalProperties: true };
  const properties: Schema = {};
  for (const column of columns) properties[column.name] = wireSchema(column.type);
  return { type: "object", properties, required: columns.map((c) => c.name) };
}

/** a column's wire value (DESIGN.md §4); any value may be null */
function wireSchema(type: WireType): Schema {
  switch (type.kind) {
    case "scalar":
      return nullable(scalarSchema(type.type));
    case "record":
      return type.repeated
        ? nullable({ type: "array", items: objectSchema(type.node) })
        : nullable(objectSchema(type.node));
    case "records":
      return nullable({ type: "array", items: objectSchema(type.node) });
    case "array":
      return nullable({ type: "array", items: scalarSchema(type.element) });
    case "null":
      return { type: "null" };
  }
}

function objectSchema(node: FieldNode, depth = 0): Schema {
  if (depth > 8 || !node.fields) return { type: "object", additionalProperties: true };
  const properties: Schema = {};
  for (const [name, child] of Object.entries(node.fields)) {
    properties[name] =
      child.kind === "scalar"
        ? nullable(scalarSchema(child.type ?? "STRING"))
        : child.kind === "array"
          ? nullable({ type: "array", items: scalarSchema(child.type ?? "STRING") })
          : nullable({ type: "array", items: objectSchema(child, depth + 1) });
  }
  return { type: "object", properties, additionalProperties: true };
}

function scalarSchema(type: ScalarType): Schema {
  switch (type) {
    case "STRING":
      return { type: "string" };
    case "INT64":
      return { oneOf: [{ type: "integer" }, { type: "string", description: "beyond ±2^53" }] };
    case "FLOAT64":
      return { type: "number" };
    case "BOOL":
      return { type: "boolean" };
    case "TIMESTAMP":
      return { type: "integer", description: "unix microseconds" };
    case "DATETIME":
      return { type: "string", description: "YYYY-MM-DDTHH:MM:SS[.ffffff]" };
    case "DATE":
      return { type: "string", format: "date" };
  }
}

function nullable(schema: Schema): Schema {
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  return { oneOf: [schema, { type: "null" }] };
}
