import { createHash } from "node:crypto";
import type { EndpointDefinition } from "@qes/core";

/**
 * What a cached response depends on besides the endpoint: the declared parameters after
 * validation (`bindRequestParams`' `canonical`, pinned JWT values included; unknown parameters
 * never), the consumer SQL and the redaction flag. It is also what warming stores to run the
 * request again.
 */
export interface CacheSpec {
  canonical: Record<string, string | null>;
  consumerSql: string | null;
  redact: boolean;
}

/** the spec as one string: the member of the warm set, and the hashed part of the key */
export function specText(spec: CacheSpec): string {
  return JSON.stringify([spec.canonical, spec.consumerSql, spec.redact]);
}

export function parseSpecText(text: string): CacheSpec | undefined {
  try {
    const [canonical, consumerSql, redact] = JSON.parse(text) as unknown[];
    if (typeof canonical !== "object" || canonical === null) return undefined;
    if (consumerSql !== null && typeof consumerSql !== "string") return undefined;
    if (typeof redact !== "boolean") return undefined;
    return { canonical: canonical as Record<string, string | null>, consumerSql, redact };
  } catch {
    return undefined;
  }
}

/**
 * `<prefix>cache:<endpoint id>:<sha256 of version and spec>`: a new endpoint version never reads
 * an old version's rows, and a redacting request never reads unredacted bytes.
 */
export function cacheKey(prefix: string, endpoint: EndpointDefinition, spec: string): string {
  const hash = createHash("sha256").update(endpoint.version).update("\0").update(spec).digest("base64url");
  return `${prefix}cache:${endpoint.id}:${hash}`;
}

/** the parameters to bind again from a spec (warming): absent ones stay absent */
export function paramsOfSpec(spec: CacheSpec): Record<string, string> {
  const params: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(spec.canonical)) if (value !== null) params[name] = value;
  return params;
}
