import type { EndpointDefinition } from "@qes/core";

/**
 * Who a request runs as, once authenticated. Every kind of credential (static tokens of
 * `QES_API_KEYS`, JWTs, and later ingest tokens) produces one; authorisation, pinned parameters,
 * the cache-hit path and admission control read it and nothing else about the credential.
 */
export interface Principal {
  /**
   * The caller, as admission control and rate limits count it: `key:<hex SHA-256 of the static
   * token>` or `jwt:<subject>` (a JWT without `sub` counts as its own caller: `jwt#<hash of the
   * token>`). Never the token itself.
   */
  caller: string;
  /** endpoint names (and, from JWT scopes, lower-case UUIDs) this principal may run; absent = all */
  endpoints?: ReadonlySet<string>;
  /** parameter values fixed by a JWT `params` claim: a request may omit or repeat them, not change them */
  pinned?: Readonly<Record<string, string>>;
  /** when the credential stops being valid (a JWT's `exp`, unix ms); absent = never */
  expiresAtMs?: number;
  /**
   * the right to send events to `POST /api/logs` (an ingest token of `QES_INGEST_KEYS`, a JWT scope
   * `ingest` or `ingest:<source>`): `sources` absent = any source. Absent = no ingest at all.
   */
  ingest?: IngestRight;
}

export interface IngestRight {
  sources?: ReadonlySet<string>;
}

/** may this principal send events to `source`? */
export function principalMayIngest(principal: Principal, source: string): boolean {
  const right = principal.ingest;
  return right !== undefined && (right.sources === undefined || right.sources.has(source));
}

/** the caller id of a static token, from its SHA-256 */
export function staticKeyCaller(hash: Buffer): string {
  return `key:${hash.toString("hex")}`;
}

/** the caller id of a JWT: its subject, else the token's own hash (each such token is a caller) */
export function jwtCaller(subject: string | undefined, tokenHash: Buffer): string {
  return subject !== undefined && subject !== "" ? `jwt:${subject}` : `jwt#${tokenHash.toString("hex")}`;
}

export function principalAllows(principal: Principal, endpoint: EndpointDefinition): boolean {
  return (
    principal.endpoints === undefined ||
    principal.endpoints.has(endpoint.name) ||
    principal.endpoints.has(endpoint.id.toLowerCase())
  );
}
