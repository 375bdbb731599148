import type { IncomingHttpHeaders } from "node:http";

/**
 * The token a request presents: `X-API-KEY`, else `Authorization: Bearer <token>`, else the
 * `api_key` query parameter (accepted for existing clients; stripped from logged URLs).
 */
export function requestToken(
  headers: IncomingHttpHeaders,
  query: Record<string, string>,
): string | undefined {
  const header = headers["x-api-key"];
  if (typeof header === "string" && header !== "") return header.trim();
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m) return m[1];
  }
  const param = query.api_key;
  return param === undefined || param === "" ? undefined : param;
}
