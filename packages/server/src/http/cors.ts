import type { NextFunction, Request, Response } from "express";
import { REDACTION_HEADERS } from "../redaction/redaction-header.ts";

const ALLOW_HEADERS = [
  "X-API-KEY",
  "Authorization",
  "Content-Type",
  "X-Request-Id",
  ...REDACTION_HEADERS.map((h) => h.toUpperCase()),
].join(", ");
const EXPOSE_HEADERS = "X-Request-Id, X-Cache, Age, QES-Ignored-Params, QES-Row-Limit-Reached";

/**
 * CORS for `QES_CORS_ORIGINS` (exact origins, or `*`). A listed origin gets
 * `Access-Control-Allow-Origin` and the headers a browser client reads; preflights (`OPTIONS`
 * with `Access-Control-Request-Method`) are answered 204 here. Credentials are headers, never
 * cookies, so `Allow-Credentials` is not sent. Other origins get no CORS headers (the browser
 * refuses them); the request itself is still authenticated as any other.
 */
export function cors(origins: readonly string[]) {
  const any = origins.includes("*");
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    if (origin === undefined || (!any && !allowed.has(origin.toLowerCase()))) {
      if (preflight) {
        res.status(204).end();
        return;
      }
      next();
      return;
    }
    res.setHeader("Access-Control-Allow-Origin", any ? "*" : origin);
    if (!any) res.setHeader("Vary", "Origin");
    if (preflight) {
      res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.setHeader("Access-Control-Allow-Headers", ALLOW_HEADERS);
      res.setHeader("Access-Control-Max-Age", "600");
      res.status(204).end();
      return;
    }
    res.setHeader("Access-Control-Expose-Headers", EXPOSE_HEADERS);
    next();
  };
}
