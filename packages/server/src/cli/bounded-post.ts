import type { IncomingHttpHeaders } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * A POST whose answer is bounded in time and size, for the commands that talk to a server: `qes
 * load` sending events (`--url`, or the address in the file beside a database) and `qes
 * retention` asking the serving qes for a run. Plain `fetch` waited up to 300 s for response
 * headers and as long for each piece of a body (undici's defaults, and a load retried a silent
 * server 30 times: hours without a word), read any body whole (a server answering with an endless
 * stream grew the load past 900 MB in 12 s), followed redirects to any host, sending the ingest
 * token (`X-API-KEY` is not a header fetch drops on a redirect) and the events there, refused the
 * ports browsers block (a qes on port 6000 or 6666 took no load: "fetch failed" after 50 s of
 * retries) and said "fetch failed" for every network error. Node's own client does none of that.
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
 * POSTs `body` (none when absent) and reads the answer within the bounds. Rejects only when the
 * server cannot be reached or the connection breaks, with Node's error (`connect ECONNREFUSED
 * 127.0.0.1:4000`): what a caller may retry. Every other outcome is a value.
 */
export function postBounded(
  url: string,
  init: { headers: Record<string, string>; body?: string },
  bounds: PostBounds,
): Promise<BoundedAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    /** the first outcome stands; the connection goes with it (one request per connection) */
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outcome();
      req.destroy();
    };
    const send = new URL(url).protocol === "https:" ? httpsRequest : httpRequest;
    const headers =
      init.body === undefined
        ? init.headers
        : { ...init.headers, "Content-Length": String(Buffer.byteLength(init.body)) };
    const req = send(url, { method: "POST", headers, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        settle(() => resolve({ kind: "redirect", status, location: res.headers.location ?? null }));
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > bounds.maxBytes) settle(() => resolve({ kind: "too_large" }));
        else chunks.push(chunk);
      });
      res.on("end", () =>
        settle(() =>
          resolve({
            kind: "answer",
            status,
            retryAfter: retryAfterOf(res.headers),
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        ),
      );
      // the connection broke before the answer's end
      res.on("error", (e) => settle(() => reject(e)));
    });
    const deadline = setTimeout(() => settle(() => resolve({ kind: "no_answer" })), bounds.withinMs);
    req.on("error", (e) => settle(() => reject(e)));
    req.end(init.body);
  });
}

function retryAfterOf(headers: IncomingHttpHeaders): string | null {
  const value = headers["retry-after"];
  return value === undefined ? null : String(value);
}
