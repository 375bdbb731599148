import { parseRetryAfter } from "@qes/sdk";

/**
 * The longest `qes load` waits before sending a refused chunk again, whatever the server's
 * `Retry-After` asks: the value was honoured as given, so a broken or hostile server (or one at
 * `--url` that is not qes) answering 429 with `Retry-After: 259200` put the load to sleep for three
 * days, silently. A qes server asks for 1 s; a minute is long past any wait it means, and with
 * the attempts per chunk bounded, a load that never gets through fails within half an hour.
 */
export const MAX_RETRY_WAIT_SECONDS = 60;
/** the wait when the server gives none, or one that is not delta-seconds or an HTTP date */
const DEFAULT_WAIT_SECONDS = 1;

export interface RetryWait {
  ms: number;
  /** what the terminal is told when the server's value was not taken as it came */
  note?: string;
}

/**
 * How long to wait after a 429 or 503 whose `Retry-After` is `header`: its delta-seconds or HTTP
 * date (the SDK's reading), at least 1 s and at most `MAX_RETRY_WAIT_SECONDS`.
 */
export function retryWait(header: string | null, url: string, now = Date.now()): RetryWait {
  if (header === null || header.trim() === "") return { ms: DEFAULT_WAIT_SECONDS * 1000 };
  // the server's bytes reach the terminal: JSON quoting shows control characters as escapes
  const shown = JSON.stringify(header.slice(0, 64));
  const asked = parseRetryAfter(header, now);
  if (asked === undefined) {
    return {
      ms: DEFAULT_WAIT_SECONDS * 1000,
      note: `the server at ${url} sent Retry-After ${shown}, neither seconds nor an HTTP date: waiting ${DEFAULT_WAIT_SECONDS} s`,
    };
  }
  if (asked > MAX_RETRY_WAIT_SECONDS * 1000) {
    return {
      ms: MAX_RETRY_WAIT_SECONDS * 1000,
      note:
        `the server at ${url} asks to wait ${Math.ceil(asked / 1000)} s (Retry-After ${shown}): ` +
        `waiting ${MAX_RETRY_WAIT_SECONDS} s, the most qes load waits before sending again`,
    };
  }
  return { ms: Math.max(DEFAULT_WAIT_SECONDS * 1000, asked) };
}
