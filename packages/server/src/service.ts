import { type Backend, type EndpointRegistry, QesError } from "@qes/core";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { type ApiKey, ApiKeyVerifier } from "./auth/api-keys.ts";
import { checkEndpoints, formatProblem } from "./check/check-endpoints.ts";
import { requestClock } from "./clock.ts";
import type { QesConfig } from "./config.ts";
import { loadServedEndpoints } from "./endpoint-dirs.ts";
import { listen } from "./http/listen.ts";
import { createLogger } from "./logging/logger.ts";

export interface StartServiceOptions {
  config: QesConfig;
  /** an opened, initialised backend; the service does not close it */
  backend: Backend;
  /** hashes of the accepted tokens (auth/configured-keys.ts) */
  keys: ApiKey[];
  logger?: Logger;
  /** default 0.0.0.0 */
  host?: string;
}

export interface RunningService {
  url: string;
  port: number;
  registry: EndpointRegistry;
  logger: Logger;
  /** stops accepting requests and waits for those in flight */
  close(): Promise<void>;
}

/**
 * Loads the endpoints, compiles and sandbox-checks every one against the backend (a bad one stops
 * start-up with file, line and column), then serves HTTP on `config.port`.
 */
export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const { config, backend } = opts;
  const logger = opts.logger ?? createLogger();
  const registry = await loadServedEndpoints(config.endpointDirs);
  const problems = checkEndpoints(registry.list(), await backend.schema(), backend.dialect);
  const first = problems[0];
  if (first) {
    throw new QesError("invalid_config", problems.map(formatProblem).join("\n"), {
      file: first.file,
      ...(first.line !== undefined ? { line: first.line } : {}),
      ...(first.column !== undefined ? { column: first.column } : {}),
    });
  }
  const app = createApp({
    backend,
    registry,
    verifier: new ApiKeyVerifier(opts.keys),
    logger,
    clock: requestClock(config.testNowMicros),
    queryTimeoutMs: config.queryTimeoutMs,
    errorFormat: config.errorFormat,
  });
  const server = await listen(app, config.port, opts.host);
  logger.info({ url: server.url, backend: backend.name, endpoints: registry.size }, "listening");
  return { url: server.url, port: server.port, registry, logger, close: () => server.close() };
}
