/**
 * The HTTP baseline: a bare node:http server answering every request with the same prepared
 * bytes and headers qes sent for the benchmarked request. Run as its own process:
 *   BODY_FILE=… CONTENT_TYPE=… PORT=… node bench/lib/bare-server.ts
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const body = readFileSync(process.env.BODY_FILE!);
const contentType = process.env.CONTENT_TYPE ?? "application/json; charset=utf-8";
const server = createServer((_req, res) => {
  res.writeHead(200, { "Content-Type": contentType, "Content-Length": body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : ""}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
