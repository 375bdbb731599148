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

/**
 * The scheme of an `Authorization` header that holds no Bearer token (`Basic`, `Digest`): what a
 * shipper's own auth settings send (Vector's `auth.strategy: basic`, Fluent Bit's `http_user` and
 * `http_passwd`, Logstash's `user` and `password`). Named in the 401, which otherwise said only
 * that a token is required to a request that sent credentials.
 */
export function otherAuthorizationScheme(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization === undefined || bearerToken(authorization) !== undefined) return undefined;
  const scheme = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)/.exec(authorization)?.[1];
  // `Bearer` with no token (a shipper's unset variable) is the scheme read here, sent empty
  return scheme === undefined || /^bearer$/i.test(scheme) ? undefined : scheme.slice(0, 20);
}
