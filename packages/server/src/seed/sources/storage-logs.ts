import { type EventBody, type EventContext, USER_AGENTS } from "./event-context.ts";

/** `storage.logs.prod.2`: storage-api's pino lines; the project is in metadata */
export function storageLogEvent({ rng, project }: EventContext): EventBody {
  const bucket = rng.pick(["avatars", "public-assets", "uploads"]);
  const object = `${rng.hex(8)}.${rng.pick(["png", "jpg", "pdf", "webp"])}`;
  const method = rng.weighted([
    ["GET", 70],
    ["POST", 15],
    ["PUT", 5],
    ["DELETE", 5],
    ["HEAD", 5],
  ] as const);
  const status = rng.weighted([
    [method === "POST" ? 201 : 200, 85],
    [400, 4],
    [403, 3],
    [404, 6],
    [500, 2],
  ] as const);
  const ip = rng.ip(0.3);
  const url = `/object/${method === "GET" ? "public/" : ""}${bucket}/${object}`;
  const metadata: Record<string, unknown> = {
    context: { host: `storage-${project}`, pid: rng.int(1, 400) },
    level: status >= 500 ? "error" : status >= 400 ? "warn" : "info",
    project,
    reqId: `req-${rng.int(1, 99_999).toString(36)}`,
    tenantId: project,
    req: {
      headers: { accept: "*/*", user_agent: rng.pick(USER_AGENTS), x_forwarded_for: ip, x_real_ip: ip },
      hostname: `${project}.supabase.co`,
      method,
      remoteAddress: ip,
      remotePort: rng.int(30_000, 65_000),
      url,
    },
    res: {
      statusCode: status,
      headers: { content_length: String(rng.int(0, 2_000_000)), content_type: "application/json" },
    },
    responseTime: Math.round(rng.next() * 50_000) / 100 + 0.5,
  };
  if (status >= 500)
    metadata.rawError = `S3ServiceException: We encountered an internal error (bucket ${bucket})`;
  const message =
    status >= 400
      ? `${method} ${url} ${status}: ${status === 404 ? "Object not found" : "Request failed"}`
      : rng.pick(["request completed", "incoming request", `${method} | ${status} | ${ip} | ${url}`]);
  return { event_message: message, metadata };
}
