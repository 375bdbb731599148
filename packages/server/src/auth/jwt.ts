import { QesError } from "@qes/core";
import jwt from "jsonwebtoken";
import { hashToken } from "./api-keys.ts";
import { jwtCaller, type Principal } from "./principal.ts";

export interface JwtKeys {
  /** HS256 */
  secret?: string;
  /** PEM: RS256 (RSA) or ES256 (EC P-256) */
  publicKey?: string;
  /** when set, the `aud` claim must name one of these (`QES_JWT_AUDIENCE`) */
  audiences?: string[];
  /** when set, the `iss` claim must be one of these (`QES_JWT_ISSUER`) */
  issuers?: string[];
}

/** a token shaped like a JWT: three base64url parts (static tokens never contain a dot) */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

/**
 * Verifies JWTs (DESIGN.md §8): HS256 with `QES_JWT_SECRET`, RS256/ES256 with
 * `QES_JWT_PUBLIC_KEY`; no other algorithm (never `none`). Claims read:
 * - `scope`: space-separated entries, `query` (every endpoint) or `query:<name or UUID>`, and
 *   `ingest` (any source) or `ingest:<source>` for `POST /api/logs`;
 * - `params`: an object of pinned parameter values (strings; numbers and booleans as their text).
 * `exp` and `nbf` are enforced when present; `aud` and `iss` are required to match when
 * `QES_JWT_AUDIENCE` / `QES_JWT_ISSUER` are set.
 *
 * Returns the principal, `undefined` for a token that does not verify (401), and throws
 * `unauthorized` with a reason a client can act on for an expired or malformed one.
 */
export class JwtVerifier {
  readonly #secret?: Buffer;
  readonly #publicKey?: string;
  readonly #claims: Pick<jwt.VerifyOptions, "audience" | "issuer">;

  constructor(keys: JwtKeys) {
    if (keys.secret !== undefined) this.#secret = Buffer.from(keys.secret, "utf8");
    if (keys.publicKey !== undefined) this.#publicKey = keys.publicKey;
    this.#claims = {
      ...(keys.audiences !== undefined && { audience: keys.audiences as [string, ...string[]] }),
      ...(keys.issuers !== undefined && { issuer: keys.issuers as [string, ...string[]] }),
    };
  }

  get enabled(): boolean {
    return this.#secret !== undefined || this.#publicKey !== undefined;
  }

  verify(token: string): Principal | undefined {
    const header = decodeHeader(token);
    const alg = header?.alg;
    let key: Buffer | string | undefined;
    let algorithms: jwt.Algorithm[];
    if (alg === "HS256") {
      key = this.#secret;
      algorithms = ["HS256"];
    } else if (alg === "RS256" || alg === "ES256") {
      key = this.#publicKey;
      algorithms = [alg];
    } else {
      return undefined;
    }
    if (key === undefined) return undefined;
    let claims: jwt.JwtPayload | string;
    try {
      claims = jwt.verify(token, key, { algorithms, clockTolerance: 5, ...this.#claims });
    } catch (e) {
      // signed by a key this server trusts, but issued for another service: say so (the
      // signature held, so the caller holds a genuine token, only not one for here)
      if (e instanceof jwt.JsonWebTokenError && /^jwt (audience|issuer) invalid/.test(e.message)) {
        const claim = e.message.startsWith("jwt audience") ? "audience (aud)" : "issuer (iss)";
        throw new QesError("unauthorized", `The access token's ${claim} is not one this server accepts.`);
      }
      if (e instanceof jwt.TokenExpiredError) {
        throw new QesError("unauthorized", "The access token has expired.");
      }
      if (e instanceof jwt.NotBeforeError) {
        throw new QesError("unauthorized", "The access token is not valid yet.");
      }
      return undefined;
    }
    if (typeof claims !== "object" || claims === null) return undefined;
    return principalFromClaims(claims, hashToken(token));
  }
}

function decodeHeader(token: string): { alg?: unknown } | undefined {
  const dot = token.indexOf(".");
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString("utf8"));
    return typeof header === "object" && header !== null ? (header as { alg?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

function principalFromClaims(claims: jwt.JwtPayload, tokenHash: Buffer): Principal {
  const malformed = (what: string) => new QesError("unauthorized", `The access token is malformed: ${what}.`);
  const endpoints = new Set<string>();
  let all = false;
  const sources = new Set<string>();
  let anySource = false;
  const scope: unknown = claims.scope;
  const entries =
    typeof scope === "string"
      ? // RFC 6749 §3.3: entries are separated by ASCII spaces (%x20) only; a no-break space or a
        // newline is part of an entry, never a separator
        scope.split(" ").filter((s) => s !== "")
      : Array.isArray(scope) && scope.every((s) => typeof s === "string")
        ? (scope as string[])
        : scope === undefined
          ? []
          : null;
  if (entries === null) throw malformed('"scope" must be a space-separated string');
  for (const entry of entries) {
    if (entry === "query") all = true;
    else if (entry.startsWith("query:") && entry.length > "query:".length) {
      const target = entry.slice("query:".length);
      // UUIDs match in any case, as the route does
      endpoints.add(/^[0-9a-f-]{36}$/i.test(target) ? target.toLowerCase() : target);
    } else if (entry === "ingest") anySource = true;
    else if (entry.startsWith("ingest:") && entry.length > "ingest:".length) {
      sources.add(entry.slice("ingest:".length));
    }
    // other scopes belong to other services: ignored
  }
  const caller = jwtCaller(typeof claims.sub === "string" ? claims.sub : undefined, tokenHash);
  const principal: Principal = all ? { caller } : { caller, endpoints };
  if (anySource) principal.ingest = {};
  else if (sources.size > 0) principal.ingest = { sources };
  if (typeof claims.exp === "number") principal.expiresAtMs = claims.exp * 1000;
  const params: unknown = claims.params;
  if (params !== undefined) {
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      throw malformed('"params" must be an object of parameter values');
    }
    const pinned: Record<string, string> = Object.create(null);
    for (const [name, value] of Object.entries(params)) {
      if (typeof value === "string") pinned[name] = value;
      else if (typeof value === "number" || typeof value === "boolean") pinned[name] = String(value);
      else throw malformed(`"params.${name}" must be a string`);
    }
    principal.pinned = pinned;
  }
  return principal;
}
