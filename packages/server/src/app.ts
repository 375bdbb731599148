import type { RequestListener } from "node:http";
import {
  type Backend,
  type EndpointRegistry,
  type IngestBatch,
  isQesError,
  type LogEvent,
  type LogSchema,
  QesError,
} from "@qes/core";
import express, { type NextFunction, type Request, type Response } from "express";
import type { Logger } from "pino";
import { type RefusalPacing, refusalKey } from "./admission/refusal-pacing.ts";
import type { ApiKeyVerifier } from "./auth/api-keys.ts";
import type { JwtVerifier } from "./auth/jwt.ts";
import type { Clock } from "./clock.ts";
import { type ErrorFormat, toHttpError } from "./errors/http-errors.ts";
import type { AnsweredThroughCache, CacheHitPath } from "./http/cache-hit-path.ts";
import { cors } from "./http/cors.ts";
import { requestId } from "./http/request-id.ts";
import { QUERY_ROUTE_PREFIX, requestLabels } from "./http/request-labels.ts";
import type { BatchAdmission } from "./ingest/batch-admission.ts";
import type { StoreDays } from "./ingest/day-limit.ts";
import type { GroupCommitQueue } from "./ingest/group-commit-queue.ts";
import type { IngestWorkers } from "./ingest/ingest-workers.ts";
import { requestLog } from "./logging/request-log.ts";
import type { CacheOutcome, Metrics } from "./observability/metrics.ts";
import type { QueryService } from "./query/query-service.ts";
import type { RedisConnection } from "./redis/redis-connection.ts";
import { ingestLogsRoute, ingestOtherMethodsRoute, ingestProbeRoute } from "./routes/ingest-logs.ts";
import { queryEndpointRoute } from "./routes/query-endpoint.ts";
import { type RetentionRunDeps, retentionRunRoute } from "./routes/retention-run.ts";
import { healthRoute, metricsRoute, openApiRoute, readyRoute } from "./routes/service-routes.ts";

export interface AppDeps {
  backend: Backend;
  registry: EndpointRegistry;
  verifier: ApiKeyVerifier;
  jwt?: JwtVerifier;
  logger: Logger;
  clock: Clock;
  errorFormat: ErrorFormat;
  queries: QueryService;
  metrics: Metrics;
  redis?: RedisConnection;
  cacheKind: "redis" | "memory" | "off";
  /** SHA-256 of `QES_METRICS_TOKEN`: when present, `/metrics` needs `Authorization: Bearer <it>` */
  metricsToken?: Buffer;
  corsOrigins: readonly string[];
  /** service version shown in the OpenAPI document */
  version: string;
  /** the path answering repeated cache hits in front of this app; told about each cached answer */
  hits?: CacheHitPath;
  /** group commit of `POST /api/logs` */
  queue: GroupCommitQueue<LogEvent, IngestBatch>;
  /** `QES_INGEST_MAX_BYTES` */
  ingestMaxBytes: number;
  /** what a batch may do to the store's schema (sources, fields, served stored queries) */
  ingestAdmission: BatchAdmission;
  /** the store's schema, as the route checks a request against it */
  schema: () => Promise<LogSchema>;
  /** the days of the past a source always takes on a store that bounds its days (`Backend.sourceDayLimit`) */
  storeDays?: StoreDays;
  /** where ingest bodies are parsed and their rows encoded, when the backend encodes ahead */
  ingestWorkers?: IngestWorkers;
  /** told where each ingest body was parsed (metrics) */
  onIngestParsed?: (thread: "worker" | "main") => void;
  /** `QES_REFUSALS_PER_SECOND`; absent: refusals are sent at once */
  refusals?: RefusalPacing;
  /** `POST /api/retention` for `qes retention` on an embedded store this server holds */
  retentionRun?: RetentionRunDeps;
}

/** largest POST body (consumer SQL and parameters) */
const BODY_LIMIT = "1mb";

/**
 * The express application: request id → request log and metrics → CORS → routes → errors in
 * the shape of DESIGN.md §7.
 */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("query parser", false);
  app.use(requestId);
  app.use(requestLog(deps.logger));
  app.use(requestMetrics(deps.metrics, deps.backend.name));
  if (deps.hits) app.use(rememberCacheAnswers(deps.hits));
  if (deps.corsOrigins.length > 0) app.use(cors(deps.corsOrigins));

  app.get("/health", healthRoute());
  app.get("/ready", readyRoute(deps));
  app.get("/metrics", metricsRoute(deps));
  app.get("/api/openapi.json", openApiRoute(deps));
  const query = queryEndpointRoute(deps);
  app.get(`${QUERY_ROUTE_PREFIX}:idOrName`, query);
  // any content type: a browser's simple request sends text/plain
  app.post(
    `${QUERY_ROUTE_PREFIX}:idOrName`,
    express.json({ limit: BODY_LIMIT, strict: false, type: () => true }),
    query,
  );

  // the body is read by the route itself: decompressed within QES_INGEST_MAX_BYTES, after auth
  app.post(
    "/api/logs",
    standardErrors,
    ingestLogsRoute({ ...deps, workers: deps.ingestWorkers, onParsed: deps.onIngestParsed }),
  );
  app.head("/api/logs", ingestProbeRoute());
  app.all("/api/logs", standardErrors, ingestOtherMethodsRoute());

  if (deps.retentionRun) app.post("/api/retention", standardErrors, retentionRunRoute(deps.retentionRun));

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new QesError("endpoint_not_found", `Nothing is served at ${req.method} ${req.path}.`));
  });
  app.use(errorHandler(deps.logger, deps.errorFormat, deps.refusals));
  return app;
}

/**
 * The service's request listener: the express app, with the cache-hit path (when there is a
 * cache) in front of it, answering repeats of requests the app answered through the cache.
 */
export function createRequestListener(deps: AppDeps): RequestListener {
  const app = createApp(deps);
  return deps.hits ? deps.hits.before(app) : app;
}

/** one latency observation per request: route, endpoint, backend, status, cache outcome */
function requestMetrics(metrics: Metrics, backend: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.on("finish", () => {
      const endpoint = typeof res.locals.endpointName === "string" ? res.locals.endpointName : undefined;
      const cache = typeof res.locals.cache === "string" ? (res.locals.cache as CacheOutcome) : "";
      const labels = requestLabels(req.path, endpoint, backend, res.statusCode, cache);
      metrics.httpRequestSeconds.observe(labels, (performance.now() - started) / 1000);
      if (cache !== "") metrics.cacheRequests.inc({ endpoint: labels.endpoint, outcome: cache });
    });
    next();
  };
}

/**
 * Tells the cache-hit path about each request the query route answered through the cache (the
 * route leaves what it decided in `res.locals.answeredThroughCache`), once the answer is sent.
 */
function rememberCacheAnswers(hits: CacheHitPath) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.on("finish", () => {
      const answered = res.locals.answeredThroughCache as AnsweredThroughCache | undefined;
      if (answered !== undefined && res.statusCode === 200) hits.remember(req, answered);
    });
    next();
  };
}

/**
 * Errors of this request in the standard format whatever `QES_ERROR_FORMAT` says. The legacy
 * format is for dashboards built on the reference platform's query API; a log shipper takes its
 * 200 for a refused or failed ingest request as delivered, and drops the batch; `qes retention`
 * would take a failed run's 200 for a run.
 */
function standardErrors(_req: Request, res: Response, next: NextFunction): void {
  res.locals.errorFormat = "standard" satisfies ErrorFormat;
  next();
}

function errorHandler(logger: Logger, format: ErrorFormat, refusals: RefusalPacing | undefined) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const requestId = String(res.locals.requestId);
    if (res.destroyed || (err as { name?: unknown } | null)?.name === "AbortError") {
      // the client went away and its query was cancelled: nobody to answer, nothing broken
      logger.info({ requestId }, "client closed the request; query cancelled");
      if (!res.destroyed) res.destroy();
      return;
    }
    const http = toHttpError(
      fromExpressError(err),
      requestId,
      (res.locals.errorFormat as ErrorFormat | undefined) ?? format,
    );
    if (http.unexpected) logger.error({ err, requestId }, "request failed");
    else if (isQesError(err) && err.logged !== undefined) {
      logger.warn({ ...err.logged, requestId, code: err.code }, "request refused");
    }
    const send = () => {
      // a refusal held by the pacing whose client gave up meanwhile: nobody to answer
      if (res.destroyed) return;
      const body = Buffer.from(JSON.stringify(http.body), "utf8");
      res.status(http.status).setHeader("Content-Type", "application/json; charset=utf-8");
      res.setHeader("Content-Length", body.length);
      for (const [name, value] of Object.entries(http.headers ?? {})) res.setHeader(name, value);
      res.end(body);
    };
    if (refusals === undefined || !http.refusal) {
      send();
      return;
    }
    void refusals.holdMs(refusalKey(res.locals.caller, req.socket.remoteAddress)).then((ms) => {
      if (ms > 0) setTimeout(send, ms);
      else send();
    });
  };
}

/** express's own 4xx errors (a malformed percent-encoding in the path, a bad body, …) as our codes */
function fromExpressError(err: unknown): unknown {
  if (err instanceof QesError || typeof err !== "object" || err === null) return err;
  const status = (err as { status?: unknown }).status;
  if (status === 413) return new QesError("request_too_large", "The request is too large.");
  const type = (err as { type?: unknown }).type;
  if (type === "entity.parse.failed") {
    return new QesError("invalid_parameter", "The request body is not valid JSON.");
  }
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new QesError("invalid_parameter", "The request is malformed.");
  }
  return err;
}
