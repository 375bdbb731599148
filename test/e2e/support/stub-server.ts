import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request a stub server got, with its body read whole. */
export interface StubRequest {
  url: string;
  key: string | undefined;
  body: string;
}

/**
 * A plain HTTP server on `host` that is no qes (a proxy, a stranger, a stuck peer): `handle`
 * writes each answer once the request's body is read; `got` lists the requests.
 */
export async function startStub(
  host: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; got: StubRequest[] }> {
  const got: StubRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      got.push({ url: req.url ?? "", key: req.headers["x-api-key"] as string | undefined, body });
      handle(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, got, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/** Closes a stub server and every connection it still holds. */
export function stopStub(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((r) => server.close(() => r()));
}

/** The most an endless answer sends: a bound for the tests only, far past any client's limit. */
const MOST_SENT = 64 * 1024 * 1024;

/**
 * Answers 200 with `head`, then `chunk` again and again (with backpressure) up to 64 MiB, then
 * `tail`. `closedEarly()` tells whether the client hung up before all of it was sent: a client
 * that bounds what it reads does.
 */
export function answerEndlessly(
  res: ServerResponse,
  { head = "", chunk, tail = "" }: { head?: string; chunk: Buffer; tail?: string },
): { closedEarly(): boolean } {
  let sent = 0;
  let closedEarly = false;
  res.writeHead(200, { "Content-Type": "application/json" });
  if (head !== "") res.write(head);
  res.on("close", () => {
    closedEarly = sent < MOST_SENT;
  });
  const pump = () => {
    while (sent < MOST_SENT) {
      sent += chunk.length;
      if (!res.write(chunk)) return;
    }
    res.end(tail);
  };
  res.on("drain", pump);
  pump();
  return { closedEarly: () => closedEarly };
}
