import { errorResponse } from "./service-paths.ts";

type Schema = { [key: string]: unknown };

const EVENT: Schema = {
  type: "object",
  description:
    "One log event (DESIGN.md §3): `event_message`, optional `id` (deduplicated per source; without it an id is " +
    "derived from the content, so a retry stores nothing twice), optional `timestamp` (ISO 8601, no zone = UTC, or " +
    "a unix time in seconds, milliseconds, microseconds or nanoseconds, told apart by size; default the arrival " +
    "time), `metadata` and any other keys, nested at will.",
  properties: {
    id: { oneOf: [{ type: "string", maxLength: 1024 }, { type: "number" }] },
    timestamp: { oneOf: [{ type: "string", format: "date-time" }, { type: "number" }] },
    event_message: { type: "string" },
    metadata: { type: "object", additionalProperties: true },
  },
  additionalProperties: true,
};

/** `POST /api/logs` (DESIGN.md §10) */
export function ingestPath(maxBytes: number): Schema {
  return {
    "/api/logs": {
      post: {
        operationId: "ingestLogs",
        summary: "Send log events to a source",
        description:
          "Takes events from log shippers (Vector's `http` sink with `codec: json` posts here). The body is a JSON " +
          'array of events, one event, `{"batch": [...]}`, or NDJSON (`Content-Type: application/x-ndjson`; under ' +
          "`application/json`, several JSON texts one after another are one event each), " +
          `optionally compressed (gzip, deflate, snappy), at most ${maxBytes} bytes after decompression. A request is all or nothing; ` +
          "the answer comes after the events are committed. Needs an ingest token (QES_INGEST_KEYS) or a JWT with " +
          "the scope `ingest` or `ingest:<source>`; query tokens are refused (403).",
        // the api_key parameter too: the reference platform's shippers send their token in it
        security: [{ apiKey: [] }, { bearer: [] }, { apiKeyQuery: [] }],
        parameters: [
          {
            name: "source_name",
            in: "query",
            required: true,
            description: "the source the events belong to; created on first ingest",
            schema: { type: "string", minLength: 1, maxLength: 200 },
          },
          {
            name: "Content-Encoding",
            in: "header",
            required: false,
            description:
              "`gzip`, `deflate` (zlib) or `snappy` (one block of its raw format, as Vector and Fluent Bit send it) " +
              "when the body is compressed",
            schema: { type: "string", enum: ["gzip", "x-gzip", "deflate", "snappy", "identity"] },
          },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                oneOf: [
                  { type: "array", items: EVENT },
                  {
                    type: "object",
                    properties: { batch: { type: "array", items: EVENT } },
                    required: ["batch"],
                    additionalProperties: false,
                  },
                  EVENT,
                ],
              },
            },
            "application/x-ndjson": {
              schema: { type: "string", description: "one JSON event per line; blank lines are skipped" },
            },
          },
        },
        responses: {
          "200": {
            description: "every event is committed (duplicates of stored ids count as accepted)",
            headers: { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } },
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { accepted: { type: "integer", minimum: 0 } },
                  required: ["accepted"],
                },
              },
            },
          },
          "400": errorResponse(
            "invalid_event (names the event's 0-based index and the reason; nothing of the request is stored), " +
              "missing_parameter or invalid_parameter (source_name; Content-Encoding when the body is not valid " +
              "data of that coding)",
          ),
          "401": errorResponse("unauthorized"),
          "403": errorResponse("forbidden: the token may not ingest, or not into this source"),
          "413": errorResponse(
            "request_too_large: the body is larger than QES_INGEST_MAX_BYTES after decompression",
          ),
          "415": errorResponse(
            "unsupported_media_type: a Content-Type other than JSON or NDJSON, or a Content-Encoding other than " +
              "gzip, deflate or snappy (zstd, br); `param` names the header, `allowed` lists what is read",
            { "Accept-Encoding": { description: "the content codings read", schema: { type: "string" } } },
          ),
          "429": errorResponse("too_many_requests: the ingest queue is full; send again after Retry-After", {
            "Retry-After": { description: "seconds to wait", schema: { type: "integer" } },
          }),
          "503": errorResponse("backend_unavailable: nothing was stored; send again"),
        },
      },
    },
  };
}
