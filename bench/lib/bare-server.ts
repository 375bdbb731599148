/**
 * The HTTP baseline: a bare node:http server answering every request with the same bytes qes sent
 * for the benchmarked request: its body and its headers (X-Request-Id, X-Cache, Age, …; Node adds
 * Date, Connection and Keep-Alive to both). Run as its own process:
 *   BODY_FILE=… HEADERS_FILE=… PORT=… node bench/lib/bare-server.ts
 * HEADERS_FILE holds a JSON list of [name, value] pairs; without it only Content-Type is sent.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const body = readFileSync(process.env.BODY_FILE!);
const pairs: [string, string][] = process.env.HEADERS_FILE
  ? JSON.parse(readFileSync(process.env.HEADERS_FILE, "utf8"))
  : [["Content-Type", "application/json; charset=utf-8"]];
const headers = pairs.filter(([name]) => name.toLowerCase() !== "content-length").flat();
headers.push("Content-Length", String(body.length));
const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : ""}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
