import { hash } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { EndpointDefinition } from "@qes/core";
import type { Logger } from "pino";
import type { Principal } from "../auth/principal.ts";
import { ageSeconds, type CacheEntry } from "../cache/cache-entry.ts";
import type { ResultCache } from "../cache/result-cache.ts";
import { loggableUrl } from "../logging/request-log.ts";
import type { Metrics } from "../observability/metrics.ts";
import { REDACTION_HEADERS } from "../redaction/redaction-header.ts";
import { corsPolicy, type HeaderPairs } from "./cors.ts";
import { requestIdFor } from "./request-id.ts";
import { QUERY_ROUTE_PREFIX, requestLabels, requestLineFields } from "./request-labels.ts";
import { answerHeaders, ignoredParamsHeader } from "./send-answer.ts";

export interface CacheHitPathDeps {
  cache: ResultCache;
  /** notes a request of a warmed endpoint, as the full path does on every cached answer */
  /** notes a hit of a warmed endpoint's key; `storedAtMs` is the served entry's */
  trackWarmKey(endpoint: EndpointDefinition, spec: string, storedAtMs: number, caller: string): void;
  logger: Logger;
  metrics: Metrics;
  backendName: string;
  corsOrigins: readonly string[];
  /** most requests remembered (default 10 000) */
  maxRoutes?: number;
}

/** what the full path decided for one request, kept to answer its repeats */
interface HitRoute {
  endpoint: EndpointDefinition;
  key: string;
  spec: string;
  ignoredHeader: string | undefined;
  /** the credential's end (a JWT's `exp`); the full path decides again after it */
  expiresAtMs: number;
  /** characters this route holds in the map key, for the memory bound */
  chars: number;
  /** the request logger with this route's constant fields bound once (pino serialises them once) */
  log: Logger;
  latency: { observe(seconds: number): void };
  /** `qes_cache_requests_total{outcome="HIT"}` and `qes_cache_fast_hits_total`, summed until scraped */
  hits: { inc(): void };
  /** when this path last noted the request for warming (recency counts to the second) */
  trackedAtMs: number;
  /** who asked (`Principal.caller`): warming refreshes the key on its behalf */
  caller: string;
  /** the headers last sent, for the entry and `Age` they were built for */
  sent?: { entry: CacheEntry; age: number; headers: string[] };
}

/** what the full path reports after answering a request through the cache */
export interface AnsweredThroughCache {
  endpoint: EndpointDefinition;
  principal: Principal;
  key: string;
  spec: string;
  ignored: readonly string[];
  /** the query string has an `api_key` parameter, as the full path parsed it */
  urlHasToken: boolean;
}

/** the parts of a request (express's, with the URL before routing) that decide its answer */
export type RememberedRequest = Pick<IncomingMessage, "method" | "rawHeaders"> & { originalUrl: string };

/** a repeat within this long is not noted for warming again */
const RETRACK_MS = 1000;
const DEFAULT_MAX_ROUTES = 10_000;
/** URLs carry consumer SQL: bound the remembered characters as well as the count */
const MAX_ROUTE_CHARS = 16 * 1024 * 1024;

/**
 * Answers repeated cache hits in front of the router. The full path (express: auth, endpoint
 * lookup, authorisation, parameter validation, compile, cache key) is deterministic in the request
 * line and the credential and redaction headers, so once it has answered a request through the
 * cache, this path remembers its outcome (the cache key and the headers to send) under a memo key
 * of exactly those inputs: `GET`, the raw URL and the SHA-256 of the values of the `X-API-KEY`,
 * `Authorization` and redaction headers (no token is kept in memory; a URL carrying one is not
 * remembered). A repeat whose entry is still stored is answered here with the stored bytes and the
 * same headers, metrics and log line; anything else (a first request, a miss, an expired entry or
 * JWT, POST, a token in the URL, a request without a credential header) goes the full way.
 *
 * Tokens: the memo holds SHA-256 digests of credential headers, never a token, and a lookup
 * compares digests, so its timing says nothing usable about a presented token (the full path's
 * own comparison is constant-time). A credential the full path refused has no digest in the
 * memo and goes the full way; a JWT's route ends at its `exp`.
 *
 * What it cannot see: a compile that would now fail after a schema change still answers from the
 * entry stored before it, until the entry expires (the full path does the same for a request that
 * still compiles, and loads only widen schemas).
 */
export class CacheHitPath {
  readonly #deps: CacheHitPathDeps;
  readonly #routes = new Map<string, HitRoute>();
  readonly #maxRoutes: number;
  readonly #cors: ReturnType<typeof corsPolicy>;
  #chars = 0;

  constructor(deps: CacheHitPathDeps) {
    this.#deps = deps;
    this.#maxRoutes = deps.maxRoutes ?? DEFAULT_MAX_ROUTES;
    this.#cors = corsPolicy(deps.corsOrigins);
  }

  /** a request listener that answers remembered hits and hands everything else to `next` */
  before(next: RequestListener): RequestListener {
    return (req, res) => {
      let answered: boolean | Promise<boolean>;
      try {
        answered = this.#tryAnswer(req, res);
      } catch (e) {
        answered = this.#failed(e, res);
      }
      if (answered === true) return;
      if (answered === false) {
        next(req, res);
        return;
      }
      answered.then(
        (ok) => (ok ? undefined : next(req, res)),
        (e: unknown) => (this.#failed(e, res) ? undefined : next(req, res)),
      );
    };
  }

  /**
   * The full path answered `req` through the cache: remember how, for its repeats. A URL with an
   * `api_key` parameter (in any encoding: the caller passes what it parsed) is not remembered, so
   * no token is kept in the memo's keys.
   */
  remember(req: RememberedRequest, answered: AnsweredThroughCache): void {
    if (answered.urlHasToken) return;
    const url = req.originalUrl;
    const id = memoKey(req.method, url, hitHeaders(req.rawHeaders));
    if (id === undefined) return;
    if (this.#routes.get(id)?.key === answered.key) return;
    this.#forget(id);
    const { endpoint } = answered;
    const { metrics, backendName } = this.#deps;
    const route: HitRoute = {
      endpoint,
      key: answered.key,
      spec: answered.spec,
      ignoredHeader: ignoredParamsHeader(answered.ignored),
      log: this.#deps.logger.child(requestLineFields("GET", loggableUrl(url), 200, endpoint.name)),
      expiresAtMs: answered.principal.expiresAtMs ?? Number.POSITIVE_INFINITY,
      chars: id.length,
      trackedAtMs: 0,
      caller: answered.principal.caller,
      latency: metrics.httpRequestSeconds.series(requestLabels(url, endpoint.name, backendName, 200, "HIT")),
      hits: metrics.fastHitCounters(endpoint.name),
    };
    this.#routes.set(id, route);
    this.#chars += route.chars;
    // oldest first out: a route dropped too early only costs one trip through the full path
    for (const [oldest] of this.#routes) {
      if (this.#routes.size <= this.#maxRoutes && this.#chars <= MAX_ROUTE_CHARS) break;
      this.#forget(oldest);
    }
  }

  /** requests remembered now */
  get size(): number {
    return this.#routes.size;
  }

  #tryAnswer(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
    const started = performance.now();
    const headers = hitHeaders(req.rawHeaders);
    const id = memoKey(req.method, req.url ?? "", headers);
    if (id === undefined) return false;
    const route = this.#routes.get(id);
    if (route === undefined) return false;
    const nowMs = Date.now();
    if (route.expiresAtMs <= nowMs) {
      this.#forget(id);
      return false;
    }
    const found = this.#deps.cache.peek(route.key);
    if (found === undefined) return false;
    if (!(found instanceof Promise)) return this.#send(req, res, headers, route, found, started, nowMs);
    return found.then(
      (entry) => entry !== undefined && this.#send(req, res, headers, route, entry, started, Date.now()),
    );
  }

  #send(
    req: IncomingMessage,
    res: ServerResponse,
    headers: HitHeaders,
    route: HitRoute,
    entry: CacheEntry,
    started: number,
    nowMs: number,
  ): true {
    const requestId = requestIdFor(headers.requestId);
    const cors = headers.origin ? this.#cors("GET", req.headers).headers : [];
    let sent: string[];
    if (cors.length === 0) {
      // the same entry in the same second sends the same headers but for the request id: reuse them
      const age = ageSeconds(entry, nowMs);
      if (route.sent?.entry !== entry || route.sent.age !== age) {
        route.sent = {
          entry,
          age,
          headers: flatHeaders(
            [["X-Request-Id", ""]],
            answerHeaders(entry, "HIT", route.ignoredHeader, nowMs),
          ),
        };
      }
      sent = route.sent.headers;
      sent[1] = requestId;
    } else {
      sent = flatHeaders(
        [["X-Request-Id", requestId], ...cors],
        answerHeaders(entry, "HIT", route.ignoredHeader, nowMs),
      );
    }
    res.writeHead(200, sent);
    res.end(entry.body);
    if (nowMs - route.trackedAtMs >= RETRACK_MS) {
      route.trackedAtMs = nowMs;
      this.#deps.trackWarmKey(route.endpoint, route.spec, entry.storedAtMs, route.caller);
    }
    const ms = performance.now() - started;
    route.latency.observe(ms / 1000);
    route.hits.inc();
    route.log.info({ requestId, ms: Math.round(ms * 100) / 100 }, "request");
    return true;
  }

  /** an error here must not lose the request: the full path answers unless bytes were sent */
  #failed(e: unknown, res: ServerResponse): boolean {
    this.#deps.logger.error({ err: e }, "cache-hit path failed");
    return res.headersSent;
  }

  #forget(id: string): void {
    const route = this.#routes.get(id);
    if (route === undefined) return;
    this.#routes.delete(id);
    this.#chars -= route.chars;
  }
}

/**
 * The request headers this path reads, taken from `rawHeaders`: Node builds `req.headers` on first
 * use, and building it costs a hit more than the rest of its own work. Values of a repeated header
 * are kept in order, so the memo key is a function of every value the full path could read.
 */
interface HitHeaders {
  /** `X-API-KEY`, `Authorization` and the redaction headers, each value prefixed by its name's index */
  deciding: string;
  /** `X-Request-Id` as `req.headers` would give it: repeated values joined by ", " */
  requestId: string | undefined;
  origin: boolean;
  /** an `X-API-KEY` or `Authorization` header is present */
  credential: boolean;
}

const DECIDING = ["x-api-key", "authorization", ...REDACTION_HEADERS] as const;
const READ_LENGTHS = new Set([...DECIDING, "x-request-id", "origin"].map((name) => name.length));

function hitHeaders(raw: readonly string[]): HitHeaders {
  let deciding = "";
  let requestId: string | undefined;
  let origin = false;
  let credential = false;
  for (let i = 0; i < raw.length; i += 2) {
    const length = raw[i]!.length;
    // most headers (Host, Accept, User-Agent, …) are passed over on their length alone
    if (!READ_LENGTHS.has(length)) continue;
    const name = raw[i]!.toLowerCase();
    const which = DECIDING.indexOf(name as (typeof DECIDING)[number]);
    if (which !== -1) {
      deciding += `${which}:${raw[i + 1]}\n`;
      if (which < 2) credential = true;
    } else if (name === "x-request-id")
      requestId = requestId === undefined ? raw[i + 1] : `${requestId}, ${raw[i + 1]}`;
    else if (name === "origin") origin = true;
  }
  return { deciding, requestId, origin, credential };
}

/**
 * The memo key of a request, or undefined when it may not take this path: the redaction headers,
 * the credential headers (by their SHA-256, so no token is kept in memory) and the URL.
 */
function memoKey(method: string | undefined, url: string, headers: HitHeaders): string | undefined {
  if (method !== "GET" || !url.startsWith(QUERY_ROUTE_PREFIX)) return undefined;
  // no credential: the full path answers 401
  if (!headers.credential) return undefined;
  return hash("sha256", headers.deciding, "base64") + url;
}

/** header pairs as the flat name, value, … list `writeHead` takes */
function flatHeaders(...lists: HeaderPairs[]): string[] {
  const out: string[] = [];
  for (const list of lists) for (const [name, value] of list) out.push(name, value);
  return out;
}
