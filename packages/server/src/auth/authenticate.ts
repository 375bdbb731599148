import type { IncomingHttpHeaders } from "node:http";
import { type EndpointDefinition, QesError } from "@qes/core";
import type { ApiKeyVerifier } from "./api-keys.ts";
import { type JwtVerifier, looksLikeJwt } from "./jwt.ts";
import { type Principal, principalAllows, principalMayIngest } from "./principal.ts";
import { otherAuthorizationScheme, requestToken } from "./request-token.ts";

/** `authenticate` of the token a request presents (request-token.ts), with its query-string `params` */
export function authenticateRequest(
  headers: IncomingHttpHeaders,
  params: Record<string, string>,
  keys: ApiKeyVerifier,
  jwts: JwtVerifier | undefined,
): Principal {
  return authenticate(requestToken(headers, params), keys, jwts, otherAuthorizationScheme(headers));
}

/**
 * Who presents `token`: a static API key (hash compared in constant time) or, when JWTs are
 * configured, a verified JWT. Throws 401 `unauthorized` for a missing, malformed, expired or
 * unknown token. Messages never repeat the token.
 */
export function authenticate(
  token: string | undefined,
  keys: ApiKeyVerifier,
  jwts: JwtVerifier | undefined,
  /** the scheme of an `Authorization` header that held no token (request-token.ts), named in the 401 */
  otherScheme?: string,
): Principal {
  if (token === undefined || token === "") {
    throw new QesError(
      "unauthorized",
      otherScheme === undefined
        ? "An access token is required: X-API-KEY header, Authorization: Bearer, or api_key parameter."
        : `Authorization: ${otherScheme} is not accepted: send the access token in the X-API-KEY header, ` +
            "Authorization: Bearer, or the api_key parameter.",
    );
  }
  const principal = jwts?.enabled && looksLikeJwt(token) ? jwts.verify(token) : keys.verify(token);
  if (!principal) throw new QesError("unauthorized", "The access token is not valid.");
  return principal;
}

/**
 * 403 `forbidden` for a principal that may run no endpoint at all (an ingest token), before the
 * endpoint is looked up: a 404 for an unknown name beside a 403 for a served one told an ingest
 * token which stored queries exist.
 */
export function authorizeQuerying(principal: Principal): void {
  if (principal.endpoints?.size !== 0) return;
  throw new QesError(
    "forbidden",
    principal.ingest !== undefined
      ? "This is an ingest token: it may send events to POST /api/logs, not run endpoints."
      : "This access token may not run any endpoint.",
  );
}

/**
 * 403 `forbidden` unless the principal may run the endpoint the request names as `asked` (its
 * name or UUID), found as `endpoint` or not found at all. A token scoped to some endpoints gets
 * the same 403, naming what it asked for, whether the name exists or not: a 404 beside a 403 told
 * it which other stored queries exist, and naming the endpoint found by UUID told it their names.
 * A token that may run every endpoint gets 404 `endpoint_not_found` for a name that does not
 * exist.
 */
export function authorize(
  principal: Principal,
  asked: string,
  endpoint: EndpointDefinition | undefined,
): EndpointDefinition {
  authorizeQuerying(principal);
  if (endpoint === undefined ? principal.endpoints !== undefined : !principalAllows(principal, endpoint)) {
    throw new QesError("forbidden", `This access token may not run the endpoint "${asked}".`);
  }
  if (endpoint === undefined) {
    throw new QesError("endpoint_not_found", `No endpoint has the id or name "${asked}".`);
  }
  return endpoint;
}

/** 403 `forbidden` unless the principal may send events to `source` (DESIGN.md §10). */
export function authorizeIngest(principal: Principal, source: string): void {
  if (principalMayIngest(principal, source)) return;
  throw new QesError(
    "forbidden",
    principal.ingest === undefined
      ? "This access token may not send events: ingest needs a token of QES_INGEST_KEYS or a JWT with the scope ingest or ingest:<source>."
      : `This access token may not send events to the source "${source}".`,
    { param: "source_name" },
  );
}

/**
 * Applies a JWT's pinned parameters to the request's: an absent value takes the pinned one, the
 * same value is fine, another value is 403 `forbidden`. Returns the parameters to bind.
 */
export function applyPinned(principal: Principal, params: Record<string, string>): Record<string, string> {
  const pinned = principal.pinned;
  if (pinned === undefined) return params;
  const out: Record<string, string> = Object.assign(Object.create(null), params);
  for (const [name, value] of Object.entries(pinned)) {
    const given = params[name];
    if (given !== undefined && given !== value) {
      throw new QesError(
        "forbidden",
        `Parameter "${name}" is fixed by the access token; this request gives another value.`,
        { param: name },
      );
    }
    out[name] = value;
  }
  return out;
}
