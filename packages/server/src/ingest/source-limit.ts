import { type LogSchema, QesError } from "@qes/core";

/**
 * `QES_INGEST_MAX_SOURCES`: ingest creates a source on first use, and each source is a table (or
 * a partitioned set of them) and a set of metric series, so an ingest token could otherwise make
 * the store hold any number of them. A request for a new source beyond the limit is refused with
 * 400 `invalid_parameter` naming `source_name`; existing sources take events as before. Checked
 * before the body is read and again at commit (ingest/batch-admission.ts); instances ingesting
 * into one PostgreSQL at once may pass it by a few.
 */
export function checkSourceLimit(schema: LogSchema, source: string, maxSources: number): void {
  if (Object.hasOwn(schema.sources, source)) return;
  const held = Object.keys(schema.sources).length;
  if (held < maxSources) return;
  throw new QesError(
    "invalid_parameter",
    `source_name ${JSON.stringify(source)} is new, and the store already holds ${held} sources, the most QES_INGEST_MAX_SOURCES allows: send events to an existing source, or raise the limit.`,
    { param: "source_name" },
  );
}

/**
 * Said when start-up created the sources stored queries read past `QES_INGEST_MAX_SOURCES`
 * (check/startup-check.ts): the operator's queries are served, but ingest, which the limit
 * bounds, will refuse every new source until sources go or the limit is raised.
 */
export function sourcesPastLimitWarning(schema: LogSchema, maxSources: number): string | undefined {
  const held = Object.keys(schema.sources).length;
  if (held <= maxSources) return undefined;
  return (
    `the store holds ${held} sources with those the stored queries read, more than QES_INGEST_MAX_SOURCES ` +
    `(${maxSources}): they were created all the same, but ingest creates no new source until the limit is raised`
  );
}
