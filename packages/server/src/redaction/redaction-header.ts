import type { IncomingHttpHeaders } from "node:http";

/** the request headers that switch redaction on (SPEC.md §4.1: `SVC` is `QES`; `LF` for existing clients) */
export const REDACTION_HEADERS = [
  "qes-endpoint-redact-pii",
  "svc-endpoint-redact-pii",
  "lf-endpoint-redact-pii",
] as const;

/**
 * true when any value of any redaction header is `true` (any case). A header given twice arrives
 * as its values joined by ", ", so each part counts. Only switches on: no value of any header turns
 * off an endpoint whose `redactPii` is set.
 */
export function redactionRequested(headers: IncomingHttpHeaders): boolean {
  for (const name of REDACTION_HEADERS) {
    const value = headers[name];
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (values.some((v) => v.split(",").some((part) => part.trim().toLowerCase() === "true"))) return true;
  }
  return false;
}
