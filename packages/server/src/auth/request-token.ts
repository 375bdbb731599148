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
  const bearer = bearerToken(headers.authorization);
  if (bearer !== undefined) return bearer;
  const param = query.api_key;
  return param === undefined || param === "" ? undefined : param;
}

/** the token of an `Authorization: Bearer <token>` header */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
}
