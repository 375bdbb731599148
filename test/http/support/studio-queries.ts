import {
  type CteName,
  datetimeWire,
  desc,
  EventStore,
  field,
  groupBy,
  hasRecord,
  isoMicros,
  type LogEvent,
  quantile,
  type Row,
  sortBy,
  trunc,
  type Wire,
} from "../../conformance/support/oracle.ts";
import { shippedEvents } from "./shipped-events.ts";

/**
 * Supabase Studio's log queries (the SQL text it builds) with the rows the shipped events say they
 * answer: the table of ../ingest-studio-queries.test.ts.
 */

export const EVENTS = shippedEvents();
/** the oracle's lines: each event with a stand-in id `<source>@<µs>` */
const ORACLE_LINES = Object.fromEntries(
  Object.entries(EVENTS).map(([source, events]) => [
    source,
    events.map((e) => JSON.stringify({ ...e, id: `${source}@${isoMicros(String(e.timestamp))}` })),
  ]),
);
export const STORE = new EventStore(ORACLE_LINES);
export const PARAMS = { project: "default" };
/** Studio's time range picker: the last few hours, start exclusive, end inclusive */
const RANGE = {
  project: "default",
  iso_timestamp_start: "2025-01-15T08:30:00Z",
  iso_timestamp_end: "2025-01-15T11:15:00.5Z",
};
/** the reports' date picker: a start, no end (Studio sends the empty string) */
const REPORT_RANGE = {
  project: "default",
  iso_timestamp_start: "2025-01-15T09:00:00.000Z",
  iso_timestamp_end: "",
};
/** the chart's start, as Studio's calcChartStart extends it */
const CHART_START = "2025-01-15T06:00:00.000Z";
const CHART_START_MICROS = isoMicros(CHART_START)!;

type Params = Record<string, string>;
export interface StudioCase {
  name: string;
  sql: string;
  params?: Params;
  /** rows the events say, in Studio's order when `ordered` */
  expected: () => Row[];
  /** groups ordered by a count with ties: compared as a set, and checked non-increasing by this column */
  orderedBy?: string;
  ordered?: boolean;
}

export const ts = (e: LogEvent): number => Number(e.timestamp);
export const rows = (cte: CteName, params: Params = PARAMS) => STORE.cte(cte, params as typeof PARAMS);
const has = (e: LogEvent, ...paths: string[]) => paths.every((p) => hasRecord(e, p));
const f = (e: LogEvent, path: string) => {
  const v = field(e, path);
  return typeof v === "bigint" ? Number(v) : v;
};
const num = (e: LogEvent, path: string): number | null => {
  const v = f(e, path);
  return v === null ? null : Number(v);
};
const between = (v: number | null, lo: number, hi: number) => v !== null && v >= lo && v <= hi;
/** `select key…, count(*) as <name> … group by key…` */
function counts(events: LogEvent[], keys: Record<string, (e: LogEvent) => Wire>, name: string): Row[] {
  const groups = groupBy(events, (e) => JSON.stringify(Object.values(keys).map((k) => k(e))));
  return [...groups.values()].map((es) => ({
    ...Object.fromEntries(Object.entries(keys).map(([n, k]) => [n, k(es[0]!)])),
    [name]: es.length,
  }));
}
/**
 * Studio's chart: per bucket, ok / error / warning counts (CASE WHEN … THEN 1 END). Every event
 * charted here carries what its conditions read (a status code, a severity, or IFNULL around
 * it), so no condition is NULL and ok is neither error nor warning.
 */
function chart(
  events: LogEvent[],
  unit: "minute" | "hour" | "day",
  isError: (e: LogEvent) => boolean,
  isWarning: (e: LogEvent) => boolean,
): Row[] {
  const inRange = events.filter((e) => e.timestamp > CHART_START_MICROS);
  const buckets = groupBy(inRange, (e) => trunc(e.timestamp, unit));
  return sortBy(
    [...buckets.entries()].map(([b, es]) => ({
      timestamp: Number(b),
      ok_count: es.filter((e) => !isError(e) && !isWarning(e)).length,
      error_count: es.filter(isError).length,
      warning_count: es.filter(isWarning).length,
    })),
    (r) => r.timestamp as number,
  );
}

const EDGE_JOINS = `cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response`;
const PG_JOINS = `cross join unnest(metadata) as m
  cross join unnest(m.parsed) as parsed`;
const FN_EDGE_JOINS = `cross join unnest(metadata) as m
  cross join unnest(m.response) as response
  cross join unnest(m.request) as request`;
const edgeRows = (params: Params = PARAMS) =>
  rows("edge_logs", params).filter((e) => has(e, "metadata.request", "metadata.response"));
/** function_edge_logs rows that reach through request, response and its headers */
const fnEdgeRows = () =>
  rows("function_edge_logs").filter((e) => has(e, "metadata.request", "metadata.response.headers"));
const pgRows = () => rows("postgres_logs").filter((e) => has(e, "metadata.parsed"));
const AUTH_ERROR = `IFNULL(metadata.level, '') IN ('error', 'fatal') OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500`;
const AUTH_WARNING = `IFNULL(metadata.level, '') = 'warning' OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) BETWEEN 400 AND 499`;
const authError = (e: LogEvent) =>
  ["error", "fatal"].includes(String(f(e, "level"))) || (num(e, "status") ?? 0) >= 500;
const authWarning = (e: LogEvent) => f(e, "level") === "warning" || between(num(e, "status") ?? 0, 400, 499);

export const CASES: StudioCase[] = [
  {
    name: "edge_logs default (self-hosted) with status error|warning and method GET|POST filters",
    sql: `
-- local dev edge_logs query
select id, edge_logs.timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
${EDGE_JOINS}
where (response.status_code between 500 and 599 or response.status_code between 400 and 499) and (request.method = 'GET' or request.method = 'POST')
order by timestamp desc
limit 100;
`,
    expected: () =>
      edgeRows()
        .filter(
          (e) =>
            between(num(e, "response.status_code"), 400, 599) &&
            ["GET", "POST"].includes(String(f(e, "request.method"))),
        )
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          method: f(e, "request.method"),
          path: f(e, "request.path"),
          search: f(e, "request.search"),
          status_code: f(e, "response.status_code"),
        })),
  },
  {
    name: "edge_logs default within a time range, product.storage filter",
    params: RANGE,
    sql: `select id, edge_logs.timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
${EDGE_JOINS}
where (request.path like '/storage/%')
order by timestamp desc
limit 100`,
    expected: () =>
      edgeRows(RANGE)
        .filter((e) => String(f(e, "request.path")).startsWith("/storage/"))
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          method: f(e, "request.method"),
          path: f(e, "request.path"),
          search: f(e, "request.search"),
          status_code: f(e, "response.status_code"),
        })),
  },
  {
    name: "edge_logs 'Recent Errors' search: regexp_contains(event_message, '[Ee]rror|\\s[45][0-9][0-9]\\s')",
    sql: `select id, edge_logs.timestamp, event_message, request.method, request.path, request.search, response.status_code
from edge_logs
${EDGE_JOINS}
where (regexp_contains(event_message, '[Ee]rror|\\s[45][0-9][0-9]\\s'))
order by timestamp desc
limit 100`,
    expected: () =>
      edgeRows()
        .filter((e) => /[Ee]rror|\s[45][0-9][0-9]\s/.test(String(e.event_message)))
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          method: f(e, "request.method"),
          path: f(e, "request.path"),
          search: f(e, "request.search"),
          status_code: f(e, "response.status_code"),
        })),
  },
  {
    name: "edge_logs chart: hourly ok/error/warning counts, trailing comma before FROM, method.get filter",
    sql: `
SELECT
-- log-event-chart
  timestamp_trunc(t.timestamp, hour) as timestamp,
  count(CASE WHEN NOT (response.status_code >= 500 OR response.status_code >= 400 AND response.status_code < 500) THEN 1 END) as ok_count,
  count(CASE WHEN response.status_code >= 500 THEN 1 END) as error_count,
  count(CASE WHEN response.status_code >= 400 AND response.status_code < 500 THEN 1 END) as warning_count,
FROM
  edge_logs t
  ${EDGE_JOINS}
  where (request.method = 'GET') and t.timestamp > '${CHART_START}'
GROUP BY
timestamp
ORDER BY
  timestamp ASC
  `,
    expected: () =>
      chart(
        edgeRows().filter((e) => f(e, "request.method") === "GET"),
        "hour",
        (e) => (num(e, "response.status_code") ?? 0) >= 500,
        (e) => between(num(e, "response.status_code"), 400, 499),
      ),
  },
  {
    name: "edge_logs count with product.database filter",
    sql: `SELECT count(*) as count FROM edge_logs ${EDGE_JOINS} where (request.path like '/rest/%' or request.path like '/graphql/%')`,
    expected: () => [
      { count: edgeRows().filter((e) => /^\/(rest|graphql)\//.test(String(f(e, "request.path")))).length },
    ],
  },
  {
    name: "template 'Top Paths'",
    sql: `select
  r.path as path,
  r.search as params,
  count(timestamp) as c
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as r
group by
  path,
  params
order by
  c desc
limit 100
`,
    orderedBy: "c",
    expected: () =>
      counts(
        rows("edge_logs").filter((e) => has(e, "metadata.request")),
        { path: (e) => f(e, "request.path"), params: (e) => f(e, "request.search") },
        "c",
      ),
  },
  {
    name: "template 'Metadata IP' (left join unnest … on true, cast(timestamp as datetime))",
    sql: `select
  cast(timestamp as datetime) as timestamp,
  h.x_real_ip
from edge_logs
  left join unnest(metadata) as m on true
  left join unnest(m.request) as r on true
  left join unnest(r.headers) as h on true
where h.x_real_ip is not null
`,
    ordered: false,
    expected: () =>
      rows("edge_logs")
        .filter((e) => f(e, "request.headers.x_real_ip") !== null)
        .map((e) => ({ timestamp: datetimeWire(e.timestamp), x_real_ip: f(e, "request.headers.x_real_ip") })),
  },
  {
    name: "template 'Requests by Geography' (NULL country of self-hosted events kept)",
    sql: `select
  cf.country,
  count(*) as count
from edge_logs
  left join unnest(metadata) as m on true
  left join unnest(m.request) as r on true
  left join unnest(r.cf) as cf on true
group by
  cf.country
order by
  count desc
`,
    orderedBy: "count",
    expected: () => counts(rows("edge_logs"), { country: (e) => f(e, "request.cf.country") }, "count"),
  },
  {
    name: "template '500 Request Codes'",
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  r.status_code
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
where
  r.status_code >= 500
order by
  timestamp desc
limit 100
`,
    expected: () =>
      rows("edge_logs")
        .filter((e) => (num(e, "response.status_code") ?? 0) >= 500)
        .slice(0, 100)
        .map((e) => ({
          timestamp: datetimeWire(e.timestamp),
          event_message: e.event_message,
          status_code: f(e, "response.status_code"),
        })),
  },
  {
    name: "template 'Slow Response Time' (origin_time only on hosted-shaped events)",
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  r.origin_time
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
where
  r.origin_time > 1000
order by
  timestamp desc
limit 100
`,
    expected: () =>
      rows("edge_logs")
        .filter((e) => (num(e, "response.origin_time") ?? 0) > 1000)
        .slice(0, 100)
        .map((e) => ({
          timestamp: datetimeWire(e.timestamp),
          event_message: e.event_message,
          origin_time: f(e, "response.origin_time"),
        })),
  },
  {
    name: "template 'Storage Egress Requests' (unqualified `path`, group by 1, 2, 3, a boolean key)",
    sql: `select
  request.method as http_verb,
  request.path as filepath,
  (responseHeaders.cf_cache_status = 'HIT') as cached,
  count(*) as num_requests
from
  edge_logs
  cross join unnest(metadata) as metadata
  cross join unnest(metadata.request) as request
  cross join unnest(metadata.response) as response
  cross join unnest(response.headers) as responseHeaders
where
  (path like '%storage/v1/object/%' or path like '%storage/v1/render/%')
  and request.method = 'GET'
group by 1, 2, 3
order by num_requests desc
limit 100;
`,
    orderedBy: "num_requests",
    expected: () =>
      counts(
        rows("edge_logs").filter(
          (e) =>
            has(e, "metadata.request", "metadata.response.headers") &&
            /storage\/v1\/(object|render)\//.test(String(f(e, "request.path"))) &&
            f(e, "request.method") === "GET",
        ),
        {
          http_verb: (e) => f(e, "request.method"),
          filepath: (e) => f(e, "request.path"),
          cached: (e) => f(e, "response.headers.cf_cache_status") === "HIT",
        },
        "num_requests",
      ),
  },
  {
    name: "template 'Storage Top Cache Misses' (starts_with, IN list, table alias f)",
    sql: `select
  r.path as path,
  r.search as search,
  count(id) as count
from edge_logs f
  cross join unnest(f.metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(m.response) as res
  cross join unnest(res.headers) as h
where starts_with(r.path, '/storage/v1/object')
  and r.method = 'GET'
  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')
group by path, search
order by count desc
limit 100;
`,
    orderedBy: "count",
    expected: () =>
      counts(
        rows("edge_logs").filter(
          (e) =>
            has(e, "metadata.request", "metadata.response.headers") &&
            String(f(e, "request.path")).startsWith("/storage/v1/object") &&
            f(e, "request.method") === "GET" &&
            ["MISS", "NONE/UNKNOWN", "EXPIRED", "BYPASS", "DYNAMIC"].includes(
              String(f(e, "response.headers.cf_cache_status")),
            ),
        ),
        { path: (e) => f(e, "request.path"), search: (e) => f(e, "request.search") },
        "count",
      ),
  },
  {
    name: "postgres_logs default (self-hosted) with severity.error: parsed.detail and hint mostly absent",
    sql: `
select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint
from postgres_logs
${PG_JOINS}
where (parsed.error_severity in ('ERROR', 'FATAL', 'PANIC'))
order by timestamp desc
limit 100
  `,
    expected: () =>
      pgRows()
        .filter((e) => ["ERROR", "FATAL", "PANIC"].includes(String(f(e, "parsed.error_severity"))))
        .slice(0, 100)
        .map((e) => ({
          timestamp: ts(e),
          id: e.id,
          event_message: e.event_message,
          error_severity: f(e, "parsed.error_severity"),
          detail: null,
          hint: f(e, "parsed.hint"),
        })),
  },
  {
    name: "postgres_logs default with severity.noError and a search",
    sql: `select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint
from postgres_logs
${PG_JOINS}
where (regexp_contains(event_message, 'COMMIT|checkpoint')) and (parsed.error_severity not in ('ERROR', 'FATAL', 'PANIC'))
order by timestamp desc
limit 100`,
    expected: () =>
      pgRows()
        .filter(
          (e) =>
            /COMMIT|checkpoint/.test(String(e.event_message)) &&
            !["ERROR", "FATAL", "PANIC"].includes(String(f(e, "parsed.error_severity"))),
        )
        .slice(0, 100)
        .map((e) => ({
          timestamp: ts(e),
          id: e.id,
          event_message: e.event_message,
          error_severity: f(e, "parsed.error_severity"),
          detail: null,
          hint: f(e, "parsed.hint"),
        })),
  },
  {
    name: "postgres_logs chart: hourly, errors and warnings by parsed.error_severity",
    sql: `
SELECT
-- log-event-chart
  timestamp_trunc(t.timestamp, hour) as timestamp,
  count(CASE WHEN NOT (parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC') OR parsed.error_severity IN ('WARNING')) THEN 1 END) as ok_count,
  count(CASE WHEN parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC') THEN 1 END) as error_count,
  count(CASE WHEN parsed.error_severity IN ('WARNING') THEN 1 END) as warning_count,
FROM
  postgres_logs t
  ${PG_JOINS}
  where t.timestamp > '${CHART_START}'
GROUP BY
timestamp
ORDER BY
  timestamp ASC
  `,
    expected: () =>
      chart(
        pgRows(),
        "hour",
        (e) => ["ERROR", "FATAL", "PANIC"].includes(String(f(e, "parsed.error_severity"))),
        (e) => f(e, "parsed.error_severity") === "WARNING",
      ),
  },
  {
    name: "template 'Commits By User' (left join unnest, NULL user of self-hosted events)",
    sql: `select
  p.user_name,
  count(*) as count
from postgres_logs
  left join unnest(metadata) as m on true
  left join unnest(m.parsed) as p on true
where
  regexp_contains(event_message, 'COMMIT')
group by
  p.user_name
  `,
    ordered: false,
    expected: () =>
      counts(
        rows("postgres_logs").filter((e) => /COMMIT/.test(String(e.event_message))),
        { user_name: (e) => f(e, "parsed.user_name") },
        "count",
      ),
  },
  {
    name: "template 'Error Count by User'",
    sql: `select
  count(t.timestamp) as count,
  p.user_name,
  p.error_severity
from postgres_logs as t
  cross join unnest(metadata) as m
  cross join unnest(m.parsed) as p
where
  p.error_severity in ('ERROR', 'FATAL', 'PANIC')
group by
  p.user_name,
  p.error_severity
order by
  count desc
limit 100
`,
    orderedBy: "count",
    expected: () =>
      counts(
        pgRows().filter((e) => ["ERROR", "FATAL", "PANIC"].includes(String(f(e, "parsed.error_severity")))),
        { user_name: (e) => f(e, "parsed.user_name"), error_severity: (e) => f(e, "parsed.error_severity") },
        "count",
      ).map((r) => ({ count: r.count!, user_name: r.user_name!, error_severity: r.error_severity! })),
  },
  {
    name: "pg_cron page (platform form): application_name or regexp_contains 'cron job'",
    sql: `select id, postgres_logs.timestamp, event_message, parsed.error_severity, parsed.query
from postgres_logs
${PG_JOINS}
where ( parsed.application_name = 'pg_cron' or regexp_contains(event_message, 'cron job') )
order by timestamp desc
limit 100
`,
    expected: () =>
      pgRows()
        .filter(
          (e) => f(e, "parsed.application_name") === "pg_cron" || /cron job/.test(String(e.event_message)),
        )
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          error_severity: f(e, "parsed.error_severity"),
          query: null,
        })),
  },
  {
    name: "pg_cron page (self-hosted form): event_message::text LIKE '%cron job%'",
    sql: `select id, postgres_logs.timestamp, event_message, parsed.error_severity, parsed.query
from postgres_logs
${PG_JOINS}
where ( parsed.application_name = 'pg_cron' or event_message::text LIKE '%cron job%' )
order by timestamp desc
limit 100
`,
    expected: () =>
      pgRows()
        .filter(
          (e) =>
            f(e, "parsed.application_name") === "pg_cron" || String(e.event_message).includes("cron job"),
        )
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          error_severity: f(e, "parsed.error_severity"),
          query: null,
        })),
  },
  {
    name: "postgres_logs search for a text with an apostrophe, quoted as Studio quotes it ('')",
    sql: `select postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint
from postgres_logs
${PG_JOINS}
where (regexp_contains(event_message, 'administrator''s command'))
order by timestamp desc
limit 100`,
    expected: () =>
      pgRows()
        .filter((e) => String(e.event_message).includes("administrator's command"))
        .slice(0, 100)
        .map((e) => ({
          timestamp: ts(e),
          id: e.id,
          event_message: e.event_message,
          error_severity: f(e, "parsed.error_severity"),
          detail: null,
          hint: f(e, "parsed.hint"),
        })),
  },
  {
    name: "auth_logs default with severity.error (IFNULL, SAFE_CAST of a sometimes-absent status)",
    sql: `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error from auth_logs
  cross join unnest(metadata) as metadata
  where (${AUTH_ERROR})
  order by timestamp desc
  limit 100
    `,
    expected: () =>
      rows("auth_logs")
        .filter(authError)
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          level: f(e, "level"),
          status: f(e, "status"),
          path: f(e, "path"),
          msg: f(e, "msg"),
          error: f(e, "error"),
        })),
  },
  {
    name: "auth_logs default with endpoints.authentication and status_code.client_error (double-quoted regex)",
    sql: `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error from auth_logs
  cross join unnest(metadata) as metadata
  where (REGEXP_CONTAINS(metadata.path, "/token|/authorize|/callback|/otp|/magiclink")) and (cast(metadata.status as int64) between 400 and 499)
  order by timestamp desc
  limit 100`,
    expected: () =>
      rows("auth_logs")
        .filter(
          (e) =>
            /\/token|\/authorize|\/callback|\/otp|\/magiclink/.test(String(f(e, "path"))) &&
            between(num(e, "status"), 400, 499),
        )
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          level: f(e, "level"),
          status: f(e, "status"),
          path: f(e, "path"),
          msg: f(e, "msg"),
          error: f(e, "error"),
        })),
  },
  {
    name: "auth_logs chart: minutely buckets by the severity conditions",
    sql: `
SELECT
-- log-event-chart
  timestamp_trunc(t.timestamp, minute) as timestamp,
  count(CASE WHEN NOT ((${AUTH_ERROR}) OR (${AUTH_WARNING})) THEN 1 END) as ok_count,
  count(CASE WHEN ${AUTH_ERROR} THEN 1 END) as error_count,
  count(CASE WHEN ${AUTH_WARNING} THEN 1 END) as warning_count,
FROM
  auth_logs t
  cross join unnest(metadata) as metadata
  where t.timestamp > '${CHART_START}'
GROUP BY
timestamp
ORDER BY
  timestamp ASC
  `,
    expected: () => chart(rows("auth_logs"), "minute", authError, authWarning),
  },
  {
    name: "auth_logs count with severity.info (NOT … AND NOT …)",
    sql: `SELECT count(*) as count FROM auth_logs cross join unnest(metadata) as metadata where (NOT (${AUTH_ERROR}) AND NOT (${AUTH_WARNING}))`,
    expected: () => [{ count: rows("auth_logs").filter((e) => !authError(e) && !authWarning(e)).length }],
  },
  {
    name: "template 'Auth Endpoint Events' (an empty alternative, a comment, no ORDER BY)",
    sql: `select
  t.timestamp,
  event_message
from auth_logs as t
where
  regexp_contains(event_message,"level.{3}(info|warning||error|fatal)")
  -- and regexp_contains(event_message,"path.{3}(/token|/recover|/signup|/otp)")
limit 100
`,
    expected: () =>
      rows("auth_logs")
        .filter((e) => /level.{3}(info|warning||error|fatal)/.test(String(e.event_message)))
        .slice(0, 100)
        .map((e) => ({ timestamp: ts(e), event_message: e.event_message })),
  },
  {
    name: "function_logs default with severity.error|warn",
    sql: `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.execution_id, metadata.level from function_logs
  cross join unnest(metadata) as metadata
  where (metadata.level = 'error' or metadata.level = 'warn')
  order by timestamp desc
  limit 100
    `,
    expected: () =>
      rows("function_logs")
        .filter((e) => ["error", "warn"].includes(String(f(e, "level"))))
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          event_type: f(e, "event_type"),
          function_id: f(e, "function_id"),
          execution_id: f(e, "execution_id"),
          level: f(e, "level"),
        })),
  },
  {
    name: "function_edge_logs default (platform) with status_code.warning: m.execution_id never sent",
    sql: `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, request.pathname, m.function_id, m.execution_id, m.execution_time_ms, m.deployment_id, m.version from function_edge_logs
  ${FN_EDGE_JOINS}
  where (response.status_code between 400 and 499)
  order by timestamp desc
  limit 100
  `,
    expected: () =>
      rows("function_edge_logs")
        .filter(
          (e) =>
            has(e, "metadata.request", "metadata.response") &&
            between(num(e, "response.status_code"), 400, 499),
        )
        .slice(0, 100)
        .map((e) => ({
          id: e.id,
          timestamp: ts(e),
          event_message: e.event_message,
          status_code: f(e, "response.status_code"),
          method: f(e, "request.method"),
          pathname: f(e, "request.pathname"),
          function_id: f(e, "function_id"),
          execution_id: null,
          execution_time_ms: f(e, "execution_time_ms"),
          deployment_id: f(e, "deployment_id"),
          version: f(e, "version"),
        })),
  },
  {
    name: "function_edge_logs default (self-hosted): every event, the stdout lines too",
    sql: `
select id, function_edge_logs.timestamp, event_message
from function_edge_logs
order by timestamp desc
limit 100
`,
    expected: () =>
      rows("function_edge_logs")
        .slice(0, 100)
        .map((e) => ({ id: e.id, timestamp: ts(e), event_message: e.event_message })),
  },
  {
    name: "function_edge_logs count with status_code.error",
    sql: `SELECT count(*) as count FROM function_edge_logs ${FN_EDGE_JOINS} where (response.status_code between 500 and 599)`,
    expected: () => [
      {
        count: rows("function_edge_logs").filter(
          (e) =>
            has(e, "metadata.request", "metadata.response") &&
            between(num(e, "response.status_code"), 500, 599),
        ).length,
      },
    ],
  },
  {
    name: "auth report 'errors by status' (edge_logs, response headers of hosted-shaped events)",
    sql: `
        --auth-errors-by-status
  select 
    timestamp_trunc(timestamp, hour) as timestamp,
    count(*) as count,
    response.status_code
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599
    AND response.status_code >= 500
  group by timestamp, status_code
  order by timestamp desc
      `,
    orderedBy: "timestamp",
    expected: () =>
      counts(
        rows("edge_logs").filter(
          (e) =>
            has(e, "metadata.request", "metadata.response.headers") &&
            String(f(e, "request.path")).includes("auth/v1") &&
            between(num(e, "response.status_code"), 500, 599),
        ),
        {
          timestamp: (e) => Number(trunc(e.timestamp, "hour")),
          status_code: (e) => f(e, "response.status_code"),
        },
        "count",
      ),
  },
  {
    // Studio bounds this report with COALESCE(PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', …), TIMESTAMP(…))
    name: "auth report latency: params CTE comma-joined, JSON_VALUE of event_message, APPROX_QUANTILES[OFFSET], JOIN USING",
    sql: `
    -- Auth latency (sign-in + sign-up)
    WITH params AS (
      SELECT
        COALESCE(PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '2025-01-15T09:00:00.000Z'), TIMESTAMP('2025-01-15T09:00:00.000Z')) AS start_ts,
        COALESCE(PARSE_TIMESTAMP('%Y-%m-%dT%H:%M:%E*S%Ez', '2025-01-15T14:30:00+02:30'), TIMESTAMP('2025-01-15T12:00:00.000Z')) AS end_ts
    ),
    base AS (
      SELECT
        TIMESTAMP_TRUNC(timestamp, hour) AS ts,
        CASE COALESCE(JSON_VALUE(event_message, '$.auth_event.action'), JSON_VALUE(event_message, '$.action'))
          WHEN 'login' THEN 'SignInLatency'
          WHEN 'user_signedup' THEN 'SignUpLatency'
          WHEN 'user_signed_up' THEN 'SignUpLatency'
          ELSE NULL
        END AS metric,
        COALESCE(
          SAFE_CAST(JSON_VALUE(event_message, '$.processing_time_ms') AS FLOAT64),
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration_us') AS FLOAT64) / 1000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.duration') AS FLOAT64) / 1000000.0,
          SAFE_CAST(JSON_VALUE(event_message, '$.auth_event.duration') AS FLOAT64) / 1000000.0
        ) AS latency_ms
      FROM auth_logs, params
      WHERE timestamp >= start_ts AND timestamp < end_ts
    ),
    filtered AS (
      SELECT ts, metric, latency_ms FROM base WHERE metric IS NOT NULL
    ),
    basic AS (
      SELECT ts, metric, MIN(latency_ms) AS min, AVG(latency_ms) AS avg, MAX(latency_ms) AS max
      FROM filtered
      GROUP BY ts, metric
    ),
    pct AS (
      SELECT ts, metric, APPROX_QUANTILES(latency_ms, 100) AS q
      FROM filtered
      GROUP BY ts, metric
    )
    SELECT
      b.ts AS timestamp,
      b.metric,
      b.min  AS min_processing_time_ms,
      b.avg  AS avg_processing_time_ms,
      b.max  AS max_processing_time_ms,
      q[OFFSET(50)] AS p50_processing_time_ms,
      q[OFFSET(95)] AS p95_processing_time_ms,
      q[OFFSET(99)] AS p99_processing_time_ms
    FROM basic b
    JOIN pct USING (ts, metric)
    ORDER BY timestamp DESC, metric
  `,
    expected: () => {
      const lo = isoMicros("2025-01-15T09:00:00Z")!;
      const hi = isoMicros("2025-01-15T12:00:00Z")!;
      const metricOf = (e: LogEvent) =>
        ({ login: "SignInLatency", user_signedup: "SignUpLatency" })[String(f(e, "auth_event.action"))] ??
        null;
      const inRange = rows("auth_logs").filter(
        (e) => e.timestamp >= lo && e.timestamp < hi && metricOf(e) !== null,
      );
      const groups = groupBy(inRange, (e) => `${trunc(e.timestamp, "hour")}|${metricOf(e)}`);
      const out = [...groups.values()].map((es) => {
        const ms = es.map((e) => (f(e, "duration") === null ? null : Number(f(e, "duration")) / 1e6));
        const present = ms.filter((v): v is number => v !== null);
        return {
          timestamp: Number(trunc(es[0]!.timestamp, "hour")),
          metric: metricOf(es[0]!),
          min_processing_time_ms: present.length ? Math.min(...present) : null,
          avg_processing_time_ms: present.length ? present.reduce((a, b) => a + b, 0) / present.length : null,
          max_processing_time_ms: present.length ? Math.max(...present) : null,
          p50_processing_time_ms: quantile(ms, 0.5),
          p95_processing_time_ms: quantile(ms, 0.95),
          p99_processing_time_ms: quantile(ms, 0.99),
        } as Row;
      });
      return sortBy(
        out,
        (r) => desc(r.timestamp as number),
        (r) => r.metric as string,
      );
    },
  },
  {
    name: "edge functions report: invocations per function, unqualified function_id, functions and status filters",
    sql: `
--edgefn-report-invocations
select
  timestamp_trunc(timestamp, hour) as timestamp,
  function_id,
  count(*) as count
from
  function_edge_logs
  CROSS JOIN UNNEST(metadata) AS m
  CROSS JOIN UNNEST(m.request) AS request
  CROSS JOIN UNNEST(m.response) AS response
  CROSS JOIN UNNEST(response.headers) AS h
  WHERE function_id IN ('fn-hello','fn-stripe') AND response.status_code >= 400
group by
  timestamp,
  function_id
order by
  timestamp desc;
`,
    orderedBy: "timestamp",
    expected: () =>
      counts(
        fnEdgeRows().filter(
          (e) =>
            ["fn-hello", "fn-stripe"].includes(String(f(e, "function_id"))) &&
            (num(e, "response.status_code") ?? 0) >= 400,
        ),
        { timestamp: (e) => Number(trunc(e.timestamp, "hour")), function_id: (e) => f(e, "function_id") },
        "count",
      ),
  },
  {
    name: "edge functions report: invocations by region (x_sb_edge_region is not null)",
    sql: `
--edgefn-report-invocations-by-region
select
  timestamp_trunc(timestamp, hour) as timestamp,
  h.x_sb_edge_region as region,
  count(*) as count
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.response) as r
  cross join unnest(r.headers) as h
  WHERE m.execution_time_ms > 100
  AND h.x_sb_edge_region is not null
group by
  timestamp,
  region
order by
  timestamp desc
`,
    orderedBy: "timestamp",
    expected: () =>
      counts(
        fnEdgeRows().filter(
          (e) =>
            (num(e, "execution_time_ms") ?? 0) > 100 && f(e, "response.headers.x_sb_edge_region") !== null,
        ),
        {
          timestamp: (e) => Number(trunc(e.timestamp, "hour")),
          region: (e) => f(e, "response.headers.x_sb_edge_region"),
        },
        "count",
      ),
  },
  {
    name: "edge functions report: average execution time per function",
    sql: `
--edgefn-report-execution-time
select
  timestamp_trunc(timestamp, hour) as timestamp,
  function_id,
  avg(m.execution_time_ms) as avg_execution_time
from
  function_edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
  cross join unnest(response.headers) as h
  WHERE h.x_sb_edge_region IN ('us-east-1','eu-central-1')
group by
  timestamp,
  function_id
order by
  timestamp desc
`,
    orderedBy: "timestamp",
    expected: () => {
      const chosen = fnEdgeRows().filter((e) =>
        ["us-east-1", "eu-central-1"].includes(String(f(e, "response.headers.x_sb_edge_region"))),
      );
      const groups = groupBy(chosen, (e) => `${trunc(e.timestamp, "hour")}|${f(e, "function_id")}`);
      return [...groups.values()].map((es) => ({
        timestamp: Number(trunc(es[0]!.timestamp, "hour")),
        function_id: f(es[0]!, "function_id"),
        avg_execution_time: es.reduce((a, e) => a + Number(f(e, "execution_time_ms")), 0) / es.length,
      }));
    },
  },
  {
    name: 'API report network traffic: safe_divide(sum(cast(coalesce(header, "0") as int64))), trailing comma, an open-ended range',
    params: REPORT_RANGE,
    sql: `
        -- reports-api-network-traffic
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as ingress_mb,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(resp_headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as egress_mb,
        FROM
          edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          cross join unnest(response.headers) as resp_headers
          WHERE REGEXP_CONTAINS(request.path, '/storage')
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
    expected: () => {
      const chosen = rows("edge_logs", REPORT_RANGE).filter(
        (e) =>
          has(e, "metadata.request.headers", "metadata.response.headers") &&
          String(f(e, "request.path")).includes("/storage"),
      );
      const sum = (es: LogEvent[], path: string) => es.reduce((a, e) => a + Number(f(e, path) ?? "0"), 0);
      return sortBy(
        [...groupBy(chosen, (e) => trunc(e.timestamp, "hour")).entries()].map(([b, es]) => ({
          timestamp: datetimeWire(b),
          ingress_mb: sum(es, "request.headers.content_length") / 1e6,
          egress_mb: sum(es, "response.headers.content_length") / 1e6,
        })),
        (r) => r.timestamp,
      );
    },
  },
  {
    name: "API report error counts with avg(origin_time) per hour, AND REGEXP_CONTAINS appended",
    params: REPORT_RANGE,
    sql: `
        -- reports-api-error-counts
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          count(t.id) as count,
          avg(response.origin_time) as avg
        FROM edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        WHERE
          response.status_code >= 400
        AND REGEXP_CONTAINS(request.path, '/rest|/auth')
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
    expected: () => {
      const chosen = rows("edge_logs", REPORT_RANGE).filter(
        (e) =>
          has(e, "metadata.request.headers", "metadata.response") &&
          (num(e, "response.status_code") ?? 0) >= 400 &&
          /\/rest|\/auth/.test(String(f(e, "request.path"))),
      );
      return sortBy(
        [...groupBy(chosen, (e) => trunc(e.timestamp, "hour")).entries()].map(([b, es]) => {
          const times = es.map((e) => num(e, "response.origin_time")).filter((v): v is number => v !== null);
          return {
            timestamp: datetimeWire(b),
            count: es.length,
            avg: times.length ? times.reduce((a, v) => a + v, 0) / times.length : null,
          };
        }),
        (r) => r.timestamp,
      );
    },
  },
  ...(["realtime_logs", "storage_logs", "postgrest_logs", "pgbouncer_logs"] as const).map(
    (cte): StudioCase => ({
      name: `${cte} default with a search (project read where the CTE reads it)`,
      params: cte === "storage_logs" ? RANGE : PARAMS,
      sql: `select id, ${cte}.timestamp, event_message from ${cte}
  where (regexp_contains(event_message, 'Error|[Cc]onnect|request'))
  order by timestamp desc
  limit 100
  `,
      expected: () =>
        rows(cte, cte === "storage_logs" ? RANGE : PARAMS)
          .filter((e) => /Error|[Cc]onnect|request/.test(String(e.event_message)))
          .slice(0, 100)
          .map((e) => ({ id: e.id, timestamp: ts(e), event_message: e.event_message })),
    }),
  ),
];
