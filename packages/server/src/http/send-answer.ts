import type { Response } from "express";
import { ageSeconds, type CacheEntry } from "../cache/cache-entry.ts";
import type { CacheOutcome } from "../observability/metrics.ts";
import type { Answer } from "../query/query-service.ts";
import type { HeaderPairs } from "./cors.ts";
import { headerList } from "./request-params.ts";

/** `QES-Ignored-Params` for the request parameters an endpoint does not declare; undefined for none */
export function ignoredParamsHeader(ignored: readonly string[]): string | undefined {
  return ignored.length > 0 ? headerList(ignored) : undefined;
}

/** an endpoint answer's headers besides the request's own (X-Request-Id, CORS) */
export function answerHeaders(
  entry: CacheEntry,
  cache: CacheOutcome,
  ignoredHeader: string | undefined,
  nowMs = Date.now(),
): HeaderPairs {
  const out: [string, string][] = [
    ["Content-Type", "application/json; charset=utf-8"],
    ["Content-Length", String(entry.body.length)],
    ["X-Cache", cache],
  ];
  if (cache !== "BYPASS") out.push(["Age", String(ageSeconds(entry, nowMs))]);
  if (ignoredHeader !== undefined) out.push(["QES-Ignored-Params", ignoredHeader]);
  if (entry.rowLimitReached) out.push(["QES-Row-Limit-Reached", "true"]);
  return out;
}

/** Sends an endpoint's answer: the stored bytes as they are, with the cache and row headers. */
export function sendAnswer(res: Response, answer: Answer): void {
  res.statusCode = 200;
  const headers = answerHeaders(answer.entry, answer.cache, ignoredParamsHeader(answer.ignored));
  for (const [name, value] of headers) res.setHeader(name, value);
  res.end(answer.entry.body);
}
