import { timingSafeEqual } from "node:crypto";
import { type Backend, compileEndpoint, type EndpointRegistry, type OutputColumn, QesError } from "@qes/core";
import type { Request, Response } from "express";
import { type ApiKeyVerifier, hashToken } from "../auth/api-keys.ts";
import { authenticateRequest } from "../auth/authenticate.ts";
import type { JwtVerifier } from "../auth/jwt.ts";
import { type Principal, principalAllows } from "../auth/principal.ts";
import { bearerToken } from "../auth/request-token.ts";
import { queryStringParams } from "../http/request-params.ts";
import type { Metrics } from "../observability/metrics.ts";
import { openApiDocument } from "../openapi/openapi-document.ts";
import type { RedisConnection } from "../redis/redis-connection.ts";

export interface ServiceRoutesDeps {
  backend: Backend;
  registry: EndpointRegistry;
  verifier: ApiKeyVerifier;
  jwt?: JwtVerifier;
  metrics: Metrics;
  redis?: RedisConnection;
  cacheKind: "redis" | "memory" | "off";
  version: string;
  /** `QES_INGEST_MAX_BYTES`, stated in the document */
  ingestMaxBytes: number;
  /** SHA-256 of `QES_METRICS_TOKEN` */
  metricsToken?: Buffer;
}

/** `GET /health`: the process is up. */
export function healthRoute() {
  return (_req: Request, res: Response): void => {
    res.json({ status: "ok" });
  };
}

/**
 * `GET /ready`: 200 when the backend answers, 503 `backend_unavailable` (error shape) when not.
 * Redis being down is not a reason to take the instance out of rotation — it answers from the
 * backend — so it is reported in the body only (and in `qes_redis_up`).
 */
export function readyRoute(deps: ServiceRoutesDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    await deps.backend.health();
    res.json({
      status: "ready",
      backend: deps.backend.name,
      redis: deps.redis ? (deps.redis.up ? "up" : "down") : "disabled",
      cache: deps.cacheKind,
    });
  };
}

/**
 * `GET /metrics`: Prometheus text format. Its labels name every endpoint, so it is not for anyone
 * who can reach the port: with `QES_METRICS_TOKEN`, only `Authorization: Bearer <it>` (compared by
 * hash in constant time); without, a query token that may run every endpoint (a scoped token
 * would learn of endpoints its OpenAPI document hides: 403).
 */
export function metricsRoute(deps: ServiceRoutesDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.metricsToken !== undefined) {
      const presented = bearerToken(req.headers.authorization);
      if (presented === undefined || !timingSafeEqual(hashToken(presented), deps.metricsToken)) {
        throw new QesError("unauthorized", "/metrics needs Authorization: Bearer <QES_METRICS_TOKEN>.");
      }
    } else {
      const principal = authenticateRequest(
        req.headers,
        queryStringParams(req.originalUrl),
        deps.verifier,
        deps.jwt,
      );
      if (principal.endpoints !== undefined) {
        throw new QesError(
          "forbidden",
          "/metrics names every endpoint: it needs a token that may run them all.",
        );
      }
    }
    if (deps.redis) deps.metrics.redisUp.set(deps.redis.up ? 1 : 0);
    const text = await deps.metrics.registry.metrics();
    res.setHeader("Content-Type", deps.metrics.registry.contentType);
    res.end(text);
  };
}

/**
 * `GET /api/openapi.json`: the OpenAPI document of the endpoints the caller's token may run (it
 * needs a token, as the endpoints do: the document names them and their parameters).
 */
export function openApiRoute(deps: ServiceRoutesDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal: Principal = authenticateRequest(
      req.headers,
      queryStringParams(req.originalUrl),
      deps.verifier,
      deps.jwt,
    );
    const endpoints = deps.registry.list().filter((e) => principalAllows(principal, e));
    const columns = new Map<string, readonly OutputColumn[]>();
    const schema = await deps.backend.schema();
    for (const endpoint of endpoints) {
      try {
        columns.set(
          endpoint.id,
          compileEndpoint(endpoint, { schema, dialect: deps.backend.dialect }).columns,
        );
      } catch {
        // described without a row schema
      }
    }
    const body = Buffer.from(
      JSON.stringify(
        openApiDocument({ endpoints, columns, version: deps.version, ingestMaxBytes: deps.ingestMaxBytes }),
      ),
    );
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", body.length);
    res.end(body);
  };
}
