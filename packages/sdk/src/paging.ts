import type { QueryOptions, QueryResult } from "./client.ts";
import { microsToIso, timestampParam } from "./time.ts";
import type { LogRow, LogsAllParams } from "./types.ts";

/** What `logs.all` returns per call without consumer SQL (its query says `limit 100`). */
export const LOGS_ALL_PAGE = 100;
/** `logs.all`'s `maxRows`: no page can be larger. */
export const LOGS_ALL_MAX_ROWS = 1000;

export interface IterateLogsOptions {
  /**
   * Rows per request, 1–1,000. Default 100: plain `logs.all`. Any other size (or `where`) asks
   * `logs.all` with consumer SQL over its `edge_logs` CTE, which returns up to 1,000 rows.
   */
  pageSize?: number | undefined;
  /** a SQL condition over `edge_logs` columns (`regexp_contains(event_message, 'POST')`), checked by the server's sandbox */
  where?: string | undefined;
  redactPii?: boolean | undefined;
  /** stops the iteration: the pending `next()` rejects with the signal's reason */
  signal?: AbortSignal | undefined;
}

type LogsAllCall = (params: LogsAllParams, options: QueryOptions) => Promise<QueryResult<LogRow>>;

/**
 * Every edge log row of `params.project` in the range of `params` (start exclusive, end inclusive),
 * newest first, without gaps or repeats, a page per request.
 *
 * How it walks: each page asks for the newest rows up to `iso_timestamp_end`; the next page ends at
 * the oldest timestamp T of the page. The end is inclusive, so rows at T come again: the iterator
 * keeps the ids it returned at T and drops them from the next page. Rows newer than the first page
 * (arriving while it walks) are not returned; the bounds of `params` are honoured throughout.
 *
 * More than a page of rows in one microsecond: a full page whose rows all share one microsecond T
 * cannot be walked past with `iso_timestamp_end` — every request ending at T answers with the same
 * `pageSize` rows of T, in no fixed order. Rather than skip the rest of T (a silent gap) or fail,
 * the iterator then reads T on its own: consumer SQL on `logs.all` with `iso_timestamp_start` = T−1µs
 * (exclusive) and `iso_timestamp_end` = T, ordered by `id`, in LIMIT/OFFSET pages until a short one,
 * dropping the ids it already returned; then it goes on from T−1µs. This needs `logs.all` to accept
 * consumer SQL (it is sandboxable); a server that refuses it rejects with `QesApiError`
 * `invalid_parameter` (param `sql`). Rows written into T while it is read by offset may be missed or
 * seen twice by offset, never returned twice (ids are kept).
 */
export async function* iterateLogs(
  call: LogsAllCall,
  params: LogsAllParams,
  options: IterateLogsOptions = {},
): AsyncGenerator<LogRow, void, undefined> {
  const pageSize = options.pageSize ?? LOGS_ALL_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > LOGS_ALL_MAX_ROWS) {
    throw new RangeError(`pageSize must be a whole number from 1 to ${LOGS_ALL_MAX_ROWS}, not ${pageSize}`);
  }
  const where = options.where?.trim() ? `where (${options.where})` : "";
  const plain = pageSize === LOGS_ALL_PAGE && where === "";
  const pageSql = plain
    ? undefined
    : `select id, timestamp, event_message, metadata from edge_logs ${where} order by timestamp desc limit ${pageSize}`;
  const callOptions = (sql: string | undefined): QueryOptions => ({
    sql,
    redactPii: options.redactPii,
    signal: options.signal,
  });

  const start = params.isoTimestampStart === undefined ? undefined : timestampParam(params.isoTimestampStart);
  let end = params.isoTimestampEnd === undefined ? undefined : timestampParam(params.isoTimestampEnd);
  /** the microsecond the current `end` points at, and the ids returned there */
  let boundary: number | undefined;
  let seenAtBoundary = new Set<string>();

  for (;;) {
    const { rows } = await call(
      { project: params.project, isoTimestampStart: start, isoTimestampEnd: end },
      callOptions(pageSql),
    );
    for (const row of rows) {
      if (row.timestamp === boundary && seenAtBoundary.has(row.id)) continue;
      yield row;
    }
    if (rows.length < pageSize) return;

    const oldest = rows[rows.length - 1]!.timestamp;
    const newest = rows[0]!.timestamp;
    if (newest !== oldest) {
      // the next page ends at `oldest`, inclusive: remember what this page gave there
      if (oldest !== boundary) seenAtBoundary = new Set();
      for (const row of rows) if (row.timestamp === oldest) seenAtBoundary.add(row.id);
      boundary = oldest;
      end = microsToIso(oldest);
      continue;
    }

    // a full page in one microsecond: read it by id, then go on below it
    const crowded = oldest;
    const seen = crowded === boundary ? seenAtBoundary : new Set<string>();
    for (const row of rows) seen.add(row.id);
    const inside = {
      project: params.project,
      isoTimestampStart: microsToIso(crowded - 1),
      isoTimestampEnd: microsToIso(crowded),
    };
    for (let offset = 0; ; offset += pageSize) {
      const sql = `select id, timestamp, event_message, metadata from edge_logs ${where} order by id limit ${pageSize} offset ${offset}`;
      const page = await call(inside, callOptions(sql));
      for (const row of page.rows) {
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        yield row;
      }
      if (page.rows.length < pageSize) break;
    }
    boundary = undefined;
    seenAtBoundary = new Set();
    end = microsToIso(crowded - 1);
  }
}
