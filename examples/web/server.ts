/**
 * The web example's own tiny server (node:http, no framework, no bundler): it serves the page
 * (index.html, app.js), the SDK as browser modules (its TypeScript source, transpiled on request
 * with `typescript`), and proxies `/api/endpoints/query/*` to qes, adding the API token on the
 * way. The browser never sees the token, and since page and API share one origin no CORS is needed.
 *
 *   npx -y pnpm@10 example web [--port 4100]      # then open http://127.0.0.1:4100
 *
 * QES_URL, QES_API_KEY and QES_PROJECT choose the server, token and default project
 * (examples/connection.ts); WEB_PORT or --port the page's port, WEB_HOST its address (127.0.0.1).
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { connection, flag } from "../connection.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const SDK_SRC = dirname(fileURLToPath(import.meta.resolve("@qes/sdk")));
const QUERY_PREFIX = "/api/endpoints/query/";
/** request headers the page may pass on to qes; the token is added here, never taken from the page */
const FORWARDED_REQUEST = ["accept", "content-type", "x-request-id", "qes-endpoint-redact-pii"];
const FORWARDED_RESPONSE = [
  "content-type",
  "x-request-id",
  "qes-ignored-params",
  "qes-row-limit-reached",
  "retry-after",
];

export interface WebOptions {
  qesUrl: string;
  apiKey: string;
  project: string;
  port?: number;
  host?: string;
}

export interface WebServer {
  url: string;
  close(): Promise<void>;
}

export async function startWebServer(opts: WebOptions): Promise<WebServer> {
  const transpiled = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", `example server: ${String(e)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://page.invalid");
    if (url.pathname.startsWith(QUERY_PREFIX)) return proxy(req, res, `${url.pathname}${url.search}`);
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "GET only");
    if (url.pathname === "/" || url.pathname === "/index.html") {
      return send(res, 200, "text/html; charset=utf-8", await readFile(join(HERE, "index.html"), "utf8"));
    }
    if (url.pathname === "/app.js") {
      return send(res, 200, "text/javascript; charset=utf-8", await readFile(join(HERE, "app.js"), "utf8"));
    }
    if (url.pathname === "/config.json") {
      return send(res, 200, "application/json", JSON.stringify({ project: opts.project }));
    }
    if (url.pathname.startsWith("/sdk/") && url.pathname.endsWith(".js")) {
      const file = normalize(join(SDK_SRC, `${url.pathname.slice("/sdk/".length, -".js".length)}.ts`));
      if (!file.startsWith(SDK_SRC + sep)) return send(res, 404, "text/plain", "not found");
      let js = transpiled.get(file);
      if (js === undefined) {
        const source = await readFile(file, "utf8").catch(() => undefined);
        if (source === undefined) return send(res, 404, "text/plain", "not found");
        js = ts.transpileModule(source, {
          fileName: file,
          compilerOptions: {
            module: ts.ModuleKind.ESNext,
            target: ts.ScriptTarget.ES2022,
            rewriteRelativeImportExtensions: true,
            verbatimModuleSyntax: true,
          },
        }).outputText;
        transpiled.set(file, js);
      }
      return send(res, 200, "text/javascript; charset=utf-8", js);
    }
    send(res, 404, "text/plain", "not found");
  }

  async function proxy(req: IncomingMessage, res: ServerResponse, pathAndQuery: string): Promise<void> {
    const headers: Record<string, string> = { "X-API-KEY": opts.apiKey };
    for (const name of FORWARDED_REQUEST) {
      const v = req.headers[name];
      if (typeof v === "string") headers[name] = v;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    let upstream: Response;
    try {
      upstream = await fetch(`${opts.qesUrl.replace(/\/+$/, "")}${pathAndQuery}`, {
        method: req.method ?? "GET",
        headers,
        ...(body && req.method !== "GET" && req.method !== "HEAD" ? { body } : {}),
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      // qes is down: answer as qes would, so the page's SDK retries and then reports it
      const error = {
        code: "backend_unavailable",
        message: `qes does not answer at ${opts.qesUrl}`,
        requestId: "",
      };
      return send(res, 503, "application/json", JSON.stringify({ error }));
    }
    const out: Record<string, string> = {};
    for (const name of FORWARDED_RESPONSE) {
      const v = upstream.headers.get(name);
      if (v !== null) out[name] = v;
    }
    res.writeHead(upstream.status, out);
    res.end(Buffer.from(await upstream.arrayBuffer()));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

export async function main(argv: string[]): Promise<number> {
  const conn = connection();
  const port = Number(flag(argv, "port", process.env.WEB_PORT?.trim() || "4100"));
  const web = await startWebServer({
    qesUrl: conn.baseUrl,
    apiKey: conn.apiKey,
    project: conn.project,
    port,
    host: process.env.WEB_HOST?.trim() || "127.0.0.1",
  });
  console.log(`Log search and usage chart at ${web.url}  (qes at ${conn.baseUrl}; Ctrl-C stops)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await web.close();
  return 0;
}
