import type { Response } from "express";
import { ageSeconds } from "../cache/cache-entry.ts";
import type { Answer } from "../query/query-service.ts";
import { headerList } from "./request-params.ts";

/** Sends an endpoint's answer: the stored bytes as they are, with the cache and row headers. */
export function sendAnswer(res: Response, answer: Answer): void {
  const { entry } = answer;
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", entry.body.length);
  res.setHeader("X-Cache", answer.cache);
  if (answer.cache !== "BYPASS") res.setHeader("Age", ageSeconds(entry));
  if (answer.ignored.length > 0) res.setHeader("QES-Ignored-Params", headerList(answer.ignored));
  if (entry.rowLimitReached) res.setHeader("QES-Row-Limit-Reached", "true");
  res.end(entry.body);
}
