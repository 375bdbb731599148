import { type DestinationStream, type Logger, pino } from "pino";
import { batchedStdout } from "./batched-stdout.ts";

export type { Logger } from "pino";

export interface LoggerOptions {
  level?: string;
  /** where log lines go; stdout by default (tests pass a stream to read them) */
  destination?: DestinationStream;
}

/**
 * Structured JSON logs (pino) to stdout, one write per turn of the event loop (batched-stdout.ts).
 * Nothing that can carry a token is ever passed to it.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options = { level: opts.level ?? process.env.LOG_LEVEL ?? "info", base: { service: "qes" } };
  return pino(options, opts.destination ?? batchedStdout());
}
