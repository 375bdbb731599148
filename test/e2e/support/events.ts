/**
 * Hand-made events for the end-to-end tests, placed around a pinned `now` so every window of
 * `usage.api-counts` is predictable.
 */
export const TEST_NOW = "2025-01-15T12:00:00Z";

/** `2025-01-15T12:00:00Z` minus a number of seconds, as ISO with µs */
export function before(seconds: number, micros = 0): string {
  const ms = Date.parse(TEST_NOW) - seconds * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(micros).padStart(6, "0")}Z`;
}

function edge(id: string, timestamp: string, project: string, path: string, status = 200): string {
  const url = `https://${project}.supabase.co${path}`;
  return JSON.stringify({
    id,
    timestamp,
    project,
    event_message: `GET | ${status} | 203.0.113.7 | ray | ${url} | curl/8.5.0`,
    metadata: {
      request: {
        method: "GET",
        path,
        url,
        headers: { x_real_ip: "203.0.113.7", cf_connecting_ip: "2001:db8::7" },
      },
      response: { status_code: status },
    },
  });
}

/** edge events: alpha has five (one in every interesting window), beta one */
export const EDGE_EVENTS = [
  edge("e-alpha-1", before(30, 123456), "alpha", "/rest/v1/todos"),
  edge("e-alpha-2", before(110), "alpha", "/storage/v1/object/public/a.png"),
  edge("e-alpha-3", before(1800), "alpha", "/auth/v1/token", 401),
  edge("e-alpha-4", before(7200), "alpha", "/realtime/v1/websocket", 101),
  edge("e-alpha-5", before(86_400 + 3600), "alpha", "/functions/v1/hello"),
  edge("e-beta-1", before(60), "beta", "/rest/v1/todos"),
];

function auth(id: string, timestamp: string, project: string, status: number | null, path: string): string {
  const line: Record<string, unknown> = {
    level: status !== null && status >= 400 ? "warning" : "info",
    path,
    msg: "m",
  };
  if (status !== null) line.status = status;
  if (status !== null && status >= 400) line.error = `${status}: failed`;
  return JSON.stringify({ id, timestamp, project, event_message: JSON.stringify(line), metadata: line });
}

export const AUTH_EVENTS = [
  auth("a-alpha-ok", before(10), "alpha", 200, "/token"),
  auth("a-alpha-401", before(20), "alpha", 401, "/user"),
  auth("a-alpha-bg", before(25), "alpha", null, ""),
  auth("a-alpha-500", before(40), "alpha", 500, "/token"),
  auth("a-alpha-422", before(5), "alpha", 422, "/signup"),
  auth("a-beta-400", before(15), "beta", 400, "/token"),
];
