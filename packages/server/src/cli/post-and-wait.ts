import { request } from "node:http";

export interface WaitBounds {
  /** the longest wait for the whole answer (a retention run may take minutes, not for ever) */
  withinMs: number;
  /** the most bytes of an answer read */
  maxBytes: number;
}

/** Why `postAndWait` got no usable answer: none within `withinMs`, or one past `maxBytes`. */
export class UnboundedAnswer extends Error {
  constructor(readonly kind: "no_answer" | "too_large") {
    super(kind === "no_answer" ? "no answer in time" : "an answer too large");
  }
}

/**
 * A POST without a body to the local `qes serve` (its URL from the file beside the store: plain
 * HTTP on loopback), answered however long the answer takes within `withinMs`. Node's fetch gives
 * up after 300 s without response headers (undici's headersTimeout), and a retention run on a
 * large store, which also waits for running queries before its checkpoint, can take longer: the
 * command then failed while the run went on. Unbounded, a server that never answered held a cron
 * line's command for ever, and one whose answer never ended grew it without limit: it rejects
 * with `UnboundedAnswer` then.
 */
export function postAndWait(
  url: string,
  headers: Record<string, string>,
  bounds: WaitBounds,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const fail = (e: Error) => {
      clearTimeout(deadline);
      req.destroy();
      reject(e);
    };
    const deadline = setTimeout(() => fail(new UnboundedAnswer("no_answer")), bounds.withinMs);
    const req = request(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > bounds.maxBytes) fail(new UnboundedAnswer("too_large"));
        else chunks.push(chunk);
      });
      res.on("end", () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end();
  });
}
