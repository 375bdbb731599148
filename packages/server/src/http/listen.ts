import type { RequestListener } from "node:http";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { requestIdFor } from "./request-id.ts";

export interface ListeningServer {
  server: Server;
  /** `http://host:port` */
  url: string;
  port: number;
  /** stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the rest */
  close(graceMs?: number): Promise<void>;
}

/**
 * How long an idle keep-alive connection is kept: longer than the idle pools of the clients that
 * post here — Vector's (hyper, 90 s), Fluent Bit's (30 s), a load balancer's (AWS ALB, 60 s) — so
 * that the client closes an idle connection first. With Node's default (5 s) the server closed it
 * while a shipper's next batch could be on its way: hyper answers that race with "connection
 * closed before message completed" and does not retry a POST itself, so the batch waited for the
 * shipper's backoff. An idle connection costs a socket and no thread; headers and requests keep
 * their own timeouts (an idle connection is not timed by them).
 */
export const KEEP_ALIVE_MS = 95_000;

/**
 * Listens on `host:port` (port 0 = any free port). Requests Node refuses before they reach the
 * app (headers or URL too large, malformed HTTP) are answered in the error shape of DESIGN.md §7.
 */
export async function listen(app: RequestListener, port: number, host = "0.0.0.0"): Promise<ListeningServer> {
  const server = createServer(app);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    server,
    port: address.port,
    url: `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${address.port}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        // a connection whose response ends during the grace is kept alive (KEEP_ALIVE_MS) by
        // its client: closed as soon as it is idle, not at the end of the grace
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        idle.unref();
        server.close(() => {
          clearTimeout(force);
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === "HPE_HEADER_OVERFLOW" || err.code === "HPE_URI_OVERFLOW";
  const status = tooLarge ? "413 Payload Too Large" : "400 Bad Request";
  const requestId = requestIdFor(undefined);
  const body = JSON.stringify({
    error: tooLarge
      ? { code: "request_too_large", message: "The request line or headers are too large.", requestId }
      : { code: "invalid_parameter", message: "The request is not valid HTTP.", requestId },
  });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
