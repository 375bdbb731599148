import { randomBytes } from "node:crypto";
import type { NextFunction, Request, Response } from "express";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Generated ids keep the UUID shape clients and log tooling expect (RFC 9562 version 8, the
 * custom layout): random hex digits fixed per process, then a 12-digit counter. Unique within the process by the counter and across
 * processes by the random part, at the cost of an increment instead of `randomUUID()` per request.
 */
const PROCESS_PART = (() => {
  const hex = randomBytes(10).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((Number.parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-`;
})();
let counter = 0;

/** the caller's `X-Request-Id` when it is a safe value, else a new id */
export function requestIdFor(incoming: string | string[] | undefined): string {
  if (typeof incoming === "string" && SAFE_ID.test(incoming)) return incoming;
  counter = (counter + 1) % 0x1000000000000;
  return PROCESS_PART + counter.toString(16).padStart(12, "0");
}

/** Every response carries `X-Request-Id`: the caller's, when it is a safe value, else a new one. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdFor(req.headers["x-request-id"]);
  res.locals.requestId = id;
  res.setHeader("X-Request-Id", id);
  next();
}
