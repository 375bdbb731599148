import { type Backend, type EndpointRegistry, QesError } from "@qes/core";
import type { Request, Response } from "express";
import { type ApiKeyVerifier, principalAllows } from "../auth/api-keys.ts";
import { requestToken } from "../auth/request-token.ts";
import type { Clock } from "../clock.ts";
import { headerList, queryStringParams } from "../http/request-params.ts";
import { runEndpointQuery } from "../query/run-endpoint-query.ts";

export interface QueryEndpointDeps {
  backend: Backend;
  registry: EndpointRegistry;
  verifier: ApiKeyVerifier;
  clock: Clock;
  queryTimeoutMs: number;
}

/**
 * `GET /api/endpoints/query/:idOrName` (SPEC.md §4.1): authenticate, find the endpoint by UUID
 * or name, run it with the query-string parameters, answer `200 {"result": [...]}`.
 */
export function queryEndpointRoute(deps: QueryEndpointDeps) {
  return async (req: Request<{ idOrName: string }>, res: Response): Promise<void> => {
    const nowMicros = deps.clock();
    const params = queryStringParams(req.originalUrl);

    const principal = deps.verifier.verify(requestToken(req, params));
    if (!principal) {
      throw new QesError("unauthorized", "A valid API token is required in the X-API-KEY header.");
    }
    const endpoint = deps.registry.get(req.params.idOrName);
    if (!endpoint) {
      throw new QesError("endpoint_not_found", `No endpoint has the id or name "${req.params.idOrName}".`);
    }
    if (!principalAllows(principal, endpoint)) {
      throw new QesError("forbidden", `This API token may not run the endpoint "${endpoint.name}".`);
    }
    res.locals.endpointName = endpoint.name;

    const sql = params.sql;
    if (sql !== undefined && sql !== "" && !endpoint.sandboxable) {
      throw new QesError(
        "invalid_parameter",
        `The endpoint "${endpoint.name}" does not accept consumer SQL.`,
        {
          param: "sql",
        },
      );
    }
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const result = await runEndpointQuery(deps.backend, endpoint, {
      params,
      ...(sql !== undefined && sql !== "" ? { consumerSql: sql } : {}),
      nowMicros,
      timeoutMs: deps.queryTimeoutMs,
      signal: controller.signal,
    });

    if (result.ignored.length > 0) res.setHeader("QES-Ignored-Params", headerList(result.ignored));
    if (result.rowLimitReached) res.setHeader("QES-Row-Limit-Reached", "true");
    const body = Buffer.from(JSON.stringify({ result: result.rows }), "utf8");
    res.status(200).setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", body.length);
    res.end(body);
  };
}
