import { request } from "node:http";

/**
 * A POST without a body to the local `qes serve` (its URL from the file beside the store: plain
 * HTTP on loopback), answered however long the answer takes. Node's fetch gives up after 300 s
 * without response headers (undici's headersTimeout), and a retention run on a large store, which
 * also waits for running queries before its checkpoint, can take longer: the command then failed
 * while the run went on.
 */
export function postAndWait(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
