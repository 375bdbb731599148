import type { IncomingHttpHeaders } from "node:http";
import type { NextFunction, Request, Response } from "express";
import { REDACTION_HEADERS } from "../redaction/redaction-header.ts";

const ALLOW_HEADERS = [
  "X-API-KEY",
  "Authorization",
  "Content-Type",
  // a browser that gzips what it posts to /api/logs
  "Content-Encoding",
  "X-Request-Id",
  ...REDACTION_HEADERS.map((h) => h.toUpperCase()),
].join(", ");
// Retry-After is not CORS-safelisted: without it a browser client sees a 429 but not when to retry
const EXPOSE_HEADERS = "X-Request-Id, X-Cache, Age, Retry-After, QES-Ignored-Params, QES-Row-Limit-Reached";

/** header name and value pairs, in the order they are sent */
export type HeaderPairs = readonly (readonly [string, string])[];

export interface CorsDecision {
  /** an `OPTIONS` preflight: answered 204 with `headers`, never routed */
  preflight: boolean;
  headers: HeaderPairs;
}

/**
 * CORS for `QES_CORS_ORIGINS` (exact origins, or `*`). A listed origin gets
 * `Access-Control-Allow-Origin` and the headers a browser client reads; preflights (`OPTIONS`
 * with `Access-Control-Request-Method`) are answered 204. Credentials are headers, never cookies,
 * so `Allow-Credentials` is not sent. Other origins get no CORS headers (the browser refuses
 * them); the request itself is still authenticated as any other. Shared by the express middleware
 * and the cache-hit path so both answer alike.
 */
export function corsPolicy(
  origins: readonly string[],
): (method: string, headers: IncomingHttpHeaders) => CorsDecision {
  const any = origins.includes("*");
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  const none: CorsDecision = { preflight: false, headers: [] };
  const refusedPreflight: CorsDecision = { preflight: true, headers: [] };
  const anyRequest: CorsDecision = {
    preflight: false,
    headers: [
      ["Access-Control-Allow-Origin", "*"],
      ["Access-Control-Expose-Headers", EXPOSE_HEADERS],
    ],
  };
  return (method, headers) => {
    const origin = headers.origin;
    const preflight = method === "OPTIONS" && headers["access-control-request-method"] !== undefined;
    if (origin === undefined || (!any && !allowed.has(origin.toLowerCase()))) {
      return preflight ? refusedPreflight : none;
    }
    if (!preflight && any) return anyRequest;
    const out: [string, string][] = [["Access-Control-Allow-Origin", any ? "*" : origin]];
    if (!any) out.push(["Vary", "Origin"]);
    if (preflight) {
      out.push(
        ["Access-Control-Allow-Methods", "GET, POST, OPTIONS"],
        ["Access-Control-Allow-Headers", ALLOW_HEADERS],
        ["Access-Control-Max-Age", "600"],
      );
    } else {
      out.push(["Access-Control-Expose-Headers", EXPOSE_HEADERS]);
    }
    return { preflight, headers: out };
  };
}

/** the express middleware of `corsPolicy` */
export function cors(origins: readonly string[]) {
  const decide = corsPolicy(origins);
  return (req: Request, res: Response, next: NextFunction): void => {
    const { preflight, headers } = decide(req.method, req.headers);
    for (const [name, value] of headers) res.setHeader(name, value);
    if (preflight) {
      res.status(204).end();
      return;
    }
    next();
  };
}
