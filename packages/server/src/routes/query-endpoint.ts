import { type EndpointRegistry, QesError } from "@qes/core";
import type { Request, Response } from "express";
import type { ApiKeyVerifier } from "../auth/api-keys.ts";
import { applyPinned, authenticateRequest, authorize } from "../auth/authenticate.ts";
import type { JwtVerifier } from "../auth/jwt.ts";
import type { Clock } from "../clock.ts";
import { mergeBodyParams } from "../http/body-params.ts";
import type { AnsweredThroughCache } from "../http/cache-hit-path.ts";
import { refuseNulBytes } from "../http/refuse-nul-bytes.ts";
import { queryStringParams } from "../http/request-params.ts";
import { sendAnswer } from "../http/send-answer.ts";
import type { QueryService } from "../query/query-service.ts";
import { redactionRequested } from "../redaction/redaction-header.ts";

export interface QueryEndpointDeps {
  registry: EndpointRegistry;
  verifier: ApiKeyVerifier;
  jwt?: JwtVerifier;
  clock: Clock;
  queries: QueryService;
}

/**
 * `GET|POST /api/endpoints/query/:idOrName` (SPEC.md §4.1, DESIGN.md §7): authenticate (401),
 * find the endpoint by UUID or name and authorise (403 for a token that may not run what it
 * asked for, whether the name exists or not; 404 for a token allowed every endpoint), apply
 * pinned JWT parameters (403), then
 * answer from the cache or the backend: `200 {"result": [...]}`.
 */
export function queryEndpointRoute(deps: QueryEndpointDeps) {
  return async (req: Request<{ idOrName: string }>, res: Response): Promise<void> => {
    const nowMicros = deps.clock();
    const query = queryStringParams(req.originalUrl);
    const given = req.method === "POST" ? mergeBodyParams(query, req.body) : query;
    refuseNulBytes(given);

    const principal = authenticateRequest(req.headers, query, deps.verifier, deps.jwt);
    // refusals are paced per caller from here on (admission/refusal-pacing.ts)
    res.locals.caller = principal.caller;
    const endpoint = authorize(principal, req.params.idOrName, deps.registry.get(req.params.idOrName));
    res.locals.endpointName = endpoint.name;
    const params = applyPinned(principal, given);

    const sql = params.sql;
    if (sql !== undefined && sql !== "" && !endpoint.sandboxable) {
      // DESIGN.md §5: an endpoint without query sandboxing refuses consumer SQL (422).
      throw new QesError(
        "sql_not_allowed",
        `The endpoint "${endpoint.name}" does not accept consumer SQL: its query sandboxing is disabled.`,
        { param: "sql" },
      );
    }
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const answer = await deps.queries.answer({
      endpoint,
      params,
      ...(sql !== undefined && sql !== "" ? { consumerSql: sql } : {}),
      redact: endpoint.redactPii || redactionRequested(req.headers),
      caller: principal.caller,
      nowMicros,
      signal: controller.signal,
      requestId: String(res.locals.requestId),
    });
    res.locals.cache = answer.cache;
    sendAnswer(res, answer);
    if (answer.cached) {
      // for the cache-hit path the app registers in front of the router (app.ts)
      res.locals.answeredThroughCache = {
        endpoint,
        principal,
        ignored: answer.ignored,
        urlHasToken: query.api_key !== undefined,
        ...answer.cached,
      } satisfies AnsweredThroughCache;
    }
  };
}
