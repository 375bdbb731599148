import type { Request } from "express";

/**
 * The token a request presents: `X-API-KEY`, else `Authorization: Bearer <token>`, else the
 * `api_key` query parameter (accepted for existing clients; stripped from logged URLs).
 */
export function requestToken(req: Request, query: Record<string, string>): string | undefined {
  const header = req.get("x-api-key");
  if (header !== undefined && header !== "") return header.trim();
  const authorization = req.get("authorization");
  if (authorization !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m) return m[1];
  }
  const param = query.api_key;
  return param === undefined || param === "" ? undefined : param;
}
