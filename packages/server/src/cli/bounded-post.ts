/**
 * A POST whose answer is bounded in time and size, for `qes load` sending events to a server it
 * does not control (`--url`, or the address in the file beside a database). Plain `fetch` waited
 * up to 300 s for response headers and as long for each piece of a body (undici's defaults, and a
 * load retried a silent server 30 times: hours without a word), read any body whole (a server
 * answering with an endless stream grew the load past 900 MB in 12 s), and followed redirects
 * to any host, sending the ingest token (`X-API-KEY` is not a header fetch drops on a redirect)
 * and the events there.
 */
export interface PostBounds {
  /** the whole exchange: sending, the answer's headers and its body */
  withinMs: number;
  /** the most bytes of an answer's body read */
  maxBytes: number;
}

export type BoundedAnswer =
  | { kind: "answer"; status: number; retryAfter: string | null; text: string }
  /** a 3xx: never followed; `location` as the server sent it (it may be any text) */
  | { kind: "redirect"; status: number; location: string | null }
  /** no complete answer within `withinMs` */
  | { kind: "no_answer" }
  /** a body past `maxBytes` (the rest is not read) */
  | { kind: "too_large" };

/**
 * POSTs `body` and reads the answer within the bounds. Rejects only when the server cannot be
 * reached or the connection breaks (what a caller retries); every other outcome is a value.
 */
export async function postBounded(
  url: string,
  init: { headers: Record<string, string>; body: string },
  bounds: PostBounds,
): Promise<BoundedAnswer> {
  const signal = AbortSignal.timeout(bounds.withinMs);
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", ...init, redirect: "manual", signal });
  } catch (e) {
    if (signal.aborted) return { kind: "no_answer" };
    throw e;
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    return { kind: "redirect", status: res.status, location: res.headers.get("location") };
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = res.body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (next === undefined || next.done) break;
      bytes += next.value.byteLength;
      if (bytes > bounds.maxBytes) {
        await reader?.cancel().catch(() => undefined);
        return { kind: "too_large" };
      }
      chunks.push(next.value);
    }
  } catch (e) {
    if (signal.aborted) return { kind: "no_answer" };
    throw e;
  }
  return {
    kind: "answer",
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    text: Buffer.concat(chunks).toString("utf8"),
  };
}
