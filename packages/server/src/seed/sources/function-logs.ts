import { EDGE_REGIONS, type EventBody, type EventContext, USER_AGENTS } from "./event-context.ts";

const FUNCTIONS = [
  ["hello-world", "5f1c4b0e-3d2a-4c6b-9e8f-0a1b2c3d4e5f"],
  ["stripe-webhook", "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"],
  ["send-email", "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"],
  ["resize-image", "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"],
] as const;

/** `deno-relay-logs`: one line per function invocation at the edge relay */
export function functionEdgeLogEvent({ rng, project, micros }: EventContext): EventBody {
  const [name, functionId] = rng.pick(FUNCTIONS);
  const method = rng.pick(["POST", "POST", "GET", "OPTIONS"]);
  const status = rng.weighted([
    [200, 85],
    [400, 4],
    [401, 3],
    [404, 2],
    [500, 4],
    [546, 2],
  ] as const);
  const search = rng.chance(0.3) ? `?id=${rng.int(1, 999)}` : "";
  const host = `${project}.supabase.co`;
  const url = `https://${host}/functions/v1/${name}${search}`;
  const version = rng.int(1, 30);
  return {
    event_message: `${method} | ${status} | ${url}`,
    metadata: {
      deployment_id: `${project}_${functionId}_${version}`,
      execution_time_ms: rng.int(4, 2_500),
      function_id: functionId,
      project_ref: project,
      request_id: rng.uuid(),
      version: String(version),
      request: {
        headers: {
          accept: "*/*",
          accept_encoding: "gzip, br",
          content_length: String(rng.int(0, 4096)),
          host,
          user_agent: rng.pick(USER_AGENTS),
          x_forwarded_for: rng.ip(0.3),
        },
        host,
        method,
        pathname: `/functions/v1/${name}`,
        protocol: "https:",
        search,
        url,
      },
      response: {
        headers: {
          content_length: String(rng.int(2, 20_000)),
          content_type: "application/json",
          date: new Date(Number(micros) / 1000).toUTCString(),
          server: "deno/gcp-europe-west3",
          vary: "Accept-Encoding",
          x_sb_edge_region: rng.pick(EDGE_REGIONS),
        },
        status_code: status,
      },
    },
  };
}

/** `deno-subhosting-events`: console output and lifecycle events of the function runtime */
export function functionLogEvent({ rng, project, iso }: EventContext): EventBody {
  const [name, functionId] = rng.pick(FUNCTIONS);
  const [eventType, level, message] = rng.weighted([
    [["log", "info", `Processing request for ${name}`], 40],
    [["log", "log", `Client ${rng.ip(0.4)} sent payload of ${rng.int(1, 900)} bytes`], 20],
    [["log", "warn", "Retrying upstream call after 502"], 6],
    [["log", "error", "Error: fetch failed: connection reset by peer"], 6],
    [["boot", "log", `booted (time: ${rng.int(15, 400)}ms)`], 14],
    [["shutdown", "log", "shutdown (reason: EarlyDrop)"], 14],
  ] as const);
  return {
    event_message: message,
    metadata: {
      deployment_id: `${project}_${functionId}_${rng.int(1, 30)}`,
      event_type: eventType,
      execution_id: rng.uuid(),
      function_id: functionId,
      level,
      project_ref: project,
      region: rng.pick(["eu-central-1", "us-east-1", "ap-southeast-1"]),
      timestamp: iso,
      version: String(rng.int(1, 30)),
    },
  };
}
