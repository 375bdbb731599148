import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A tiny HTTP server on a free loopback port that records every request and answers with
 * `handler(request, attemptNumber)` (1-based over the server's life). A handler that returns
 * "hang" never answers; "destroy" resets the connection.
 */
export async function startFakeServer(
  handler: (req: RecordedRequest, n: number, res: ServerResponse) => "hang" | "destroy" | undefined,
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      requests.push(recorded);
      const outcome = handler(recorded, requests.length, res);
      if (outcome === "destroy") req.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** answers like qes: a status and `{"error": {...}}`, or `{"result": rows}` */
export function answer(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "X-Request-Id": "fake-request-id",
    ...headers,
  });
  res.end(text);
}

export function qesError(code: string, message = code) {
  return { error: { code, message, requestId: "fake-request-id" } };
}

/** a loopback port nothing listens on */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
