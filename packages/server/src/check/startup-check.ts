import {
  type Backend,
  type EndpointDefinition,
  lookalikeSource,
  missingSources,
  QesError,
  withEmptySources,
} from "@qes/core";
import type { Logger } from "pino";
import { sourcesPastLimitWarning } from "../ingest/source-limit.ts";
import { checkEndpoints, type EndpointProblem, formatProblem } from "./check-endpoints.ts";

/**
 * What `qes serve` does with its stored queries before it serves: checks every one (a bad one
 * stops start-up with file, line and column), creating first, empty, the sources they read that
 * the store does not hold yet (`missingSources`): a query may then be written before its shippers
 * send anything, and answers no rows until they do. Each created source is named in the log,
 * since a misspelt one is created too. Nothing is created unless every definition passes against
 * the store with those sources, as `qes check` checks them: a start-up refused for another
 * definition left them behind, and a misspelt name fixed with it stayed a source for good.
 * `QES_INGEST_MAX_SOURCES` bounds what ingest creates, not what the operator's own queries read:
 * they are created past it, with a warning that ingest now creates none.
 */
export async function checkAtStartup(
  definitions: readonly EndpointDefinition[],
  backend: Backend,
  logger: Logger,
  maxSources: number,
): Promise<void> {
  const stored = await backend.schema();
  const missing = missingSources(definitions, stored, backend.dialect);
  if (missing.length > 0) {
    refuse(checkEndpoints(definitions, withEmptySources(stored, missing), backend.dialect));
    await backend.ingest(missing.map((source) => ({ source, events: [] })));
    for (const source of missing) {
      const lookalike = lookalikeSource(source, stored);
      logger.warn(
        { source, ...(lookalike !== undefined ? { lookalike } : {}) },
        `created the source ${JSON.stringify(source)}, empty: a stored query reads it and the store did not hold it ` +
          `(its events arrive through POST /api/logs?source_name=${encodeURIComponent(source)} or qes load)` +
          misspelling(lookalike),
      );
    }
  }
  const schema = await backend.schema();
  if (missing.length > 0) {
    const warning = sourcesPastLimitWarning(schema, maxSources);
    if (warning !== undefined) logger.warn(warning);
  }
  refuse(checkEndpoints(definitions, schema, backend.dialect));
}

/** what start-up and `qes check` add to a created source's name when the store holds a near miss */
export function misspelling(lookalike: string | undefined): string {
  return lookalike === undefined
    ? ""
    : `; the store holds ${JSON.stringify(lookalike)}, which differs only by case or punctuation (source names are case-sensitive): a misspelling?`;
}

function refuse(problems: readonly EndpointProblem[]): void {
  const first = problems[0];
  if (first === undefined) return;
  throw new QesError("invalid_config", problems.map(formatProblem).join("\n"), {
    file: first.file,
    ...(first.line !== undefined ? { line: first.line } : {}),
    ...(first.column !== undefined ? { column: first.column } : {}),
  });
}
