import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { requestLineFields } from "../http/request-labels.ts";

/** query parameters that carry credentials and never reach a log line */
const SECRET_PARAMS = new Set(["api_key"]);

/** The URL as logged: path plus query string without credential parameters. */
export function loggableUrl(originalUrl: string): string {
  const q = originalUrl.indexOf("?");
  if (q === -1) return originalUrl;
  const params = new URLSearchParams(originalUrl.slice(q + 1));
  for (const key of [...params.keys()]) {
    if (SECRET_PARAMS.has(key.toLowerCase())) params.delete(key);
  }
  const rest = params.toString();
  return rest === "" ? originalUrl.slice(0, q) : `${originalUrl.slice(0, q)}?${rest}`;
}

/** what one request log line says; `url` already passed through `loggableUrl` */
export interface RequestLine {
  requestId: string;
  method: string;
  url: string;
  status: number;
  /** time to answer, ms */
  ms: number;
  endpoint?: string;
}

/** writes one request log line (the express middleware and the cache-hit path write the same shape) */
export function logRequest(logger: Logger, line: RequestLine): void {
  if (!logger.isLevelEnabled("info")) return;
  logger.info({ ...line, ms: Math.round(line.ms * 100) / 100 }, "request");
}

/** One log line per finished request: id, method, URL (credentials stripped), status, time. */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.on("finish", () => {
      logRequest(logger, {
        requestId: res.locals.requestId,
        ...requestLineFields(
          req.method,
          loggableUrl(req.originalUrl),
          res.statusCode,
          res.locals.endpointName,
        ),
        ms: performance.now() - started,
      });
    });
    next();
  };
}
