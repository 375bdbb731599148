import { QesError, type QesErrorDetails } from "@qes/core";

/**
 * 400 `invalid_event` naming an event of a request by its 0-based index and, when the body gave
 * its events one per line (NDJSON), its line (in the message and as `line`), as every refusal of
 * an ingest request names the event it refuses.
 */
export function eventRefusal(
  index: number,
  line: number | undefined,
  reason: string,
  details: Pick<QesErrorDetails, "logged"> = {},
): QesError {
  return new QesError(
    "invalid_event",
    `event ${index}${line === undefined ? "" : ` (line ${line})`}: ${reason}`,
    {
      ...details,
      ...(line === undefined ? {} : { line }),
    },
  );
}
