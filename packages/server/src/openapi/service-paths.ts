type Schema = { [key: string]: unknown };

const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };
const requestIdHeader = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };

/** an error response in the shape of DESIGN.md §7 */
export function errorResponse(description: string, headers: Schema = {}): Schema {
  return { description, headers: { ...requestIdHeader, ...headers }, content: errorContent };
}

/**
 * 4xx answers every route can give, whatever it does: Node refuses a malformed request (400) and
 * a request line or headers past its limits (413) before any route runs, in the error shape.
 */
const TRANSPORT_ERRORS: Schema = {
  "400": errorResponse("invalid_parameter: the request is not valid HTTP"),
  "413": errorResponse("request_too_large: the request line or headers are too large"),
};

function serviceOperation(operationId: string, summary: string, ok: Schema, extra: Schema = {}): Schema {
  return {
    operationId,
    summary,
    security: [],
    responses: { "200": { ...ok, headers: requestIdHeader }, ...TRANSPORT_ERRORS, ...extra },
  };
}

function json(description: string, properties: Schema): Schema {
  return { description, content: { "application/json": { schema: { type: "object", properties } } } };
}

/** `/health`, `/ready`, `/metrics` and the document itself */
export function servicePaths(): Schema {
  return {
    "/health": {
      get: serviceOperation(
        "getHealth",
        "Process is up",
        json("the process is up", { status: { type: "string", const: "ok" } }),
      ),
    },
    "/ready": {
      get: serviceOperation(
        "getReady",
        "Backend answers (503 backend_unavailable when it does not)",
        json("the backend answers", {
          status: { type: "string" },
          backend: { type: "string" },
          redis: { type: "string", enum: ["up", "down", "disabled"] },
        }),
        { "503": errorResponse("backend_unavailable") },
      ),
    },
    "/metrics": {
      get: {
        ...serviceOperation(
          "getMetrics",
          "Prometheus metrics",
          {
            description: "text exposition format",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          {
            "401": errorResponse("unauthorized: no token, or not QES_METRICS_TOKEN when that is set"),
            "403": errorResponse(
              "forbidden: without QES_METRICS_TOKEN, a token allowed every endpoint is needed",
            ),
          },
        ),
        description:
          "Authorization: Bearer <QES_METRICS_TOKEN> when that is set; otherwise a token allowed every endpoint.",
        security: [{ bearer: [] }, { apiKey: [] }],
      },
    },
    "/api/openapi.json": {
      get: {
        operationId: "getOpenApiDocument",
        summary: "This document, listing the endpoints the presented token may run",
        responses: {
          "200": {
            description: "an OpenAPI 3.1 document",
            headers: requestIdHeader,
            content: { "application/json": { schema: { type: "object" } } },
          },
          ...TRANSPORT_ERRORS,
          "401": errorResponse("unauthorized"),
        },
      },
    },
  };
}
