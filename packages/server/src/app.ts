import { type Backend, type EndpointRegistry, QesError } from "@qes/core";
import express, { type NextFunction, type Request, type Response } from "express";
import type { Logger } from "pino";
import type { ApiKeyVerifier } from "./auth/api-keys.ts";
import type { Clock } from "./clock.ts";
import { type ErrorFormat, toHttpError } from "./errors/http-errors.ts";
import { requestId } from "./http/request-id.ts";
import { requestLog } from "./logging/request-log.ts";
import { queryEndpointRoute } from "./routes/query-endpoint.ts";

export interface AppDeps {
  backend: Backend;
  registry: EndpointRegistry;
  verifier: ApiKeyVerifier;
  logger: Logger;
  clock: Clock;
  queryTimeoutMs: number;
  errorFormat: ErrorFormat;
}

/** The express application: request id → request log → routes → errors in the shape of DESIGN.md §7. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("query parser", false);
  app.use(requestId);
  app.use(requestLog(deps.logger));

  app.get("/health", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/ready", async (_req, res) => {
    await deps.backend.health();
    res.json({ status: "ready", backend: deps.backend.name });
  });
  app.get("/api/endpoints/query/:idOrName", queryEndpointRoute(deps));

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new QesError("endpoint_not_found", `Nothing is served at ${req.method} ${req.path}.`));
  });
  app.use(errorHandler(deps.logger, deps.errorFormat));
  return app;
}

function errorHandler(logger: Logger, format: ErrorFormat) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const requestId = String(res.locals.requestId);
    const http = toHttpError(fromExpressError(err), requestId, format);
    if (http.unexpected) logger.error({ err, requestId }, "request failed");
    const body = Buffer.from(JSON.stringify(http.body), "utf8");
    res.status(http.status).setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", body.length);
    res.end(body);
  };
}

/** express's own 4xx errors (a malformed percent-encoding in the path, …) as our codes */
function fromExpressError(err: unknown): unknown {
  if (err instanceof QesError || typeof err !== "object" || err === null) return err;
  const status = (err as { status?: unknown }).status;
  if (status === 413) return new QesError("request_too_large", "The request is too large.");
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new QesError("invalid_parameter", "The request is malformed.");
  }
  return err;
}
