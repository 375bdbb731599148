import type { ConformanceCase } from "../../support/case.ts";
import { NOW_MICROS } from "../../support/events.ts";
import {
  desc,
  type EventStore,
  field,
  groupBy,
  hasRecord,
  type LogEvent,
  quantile,
  sortBy,
  trunc,
} from "../../support/oracle.ts";
import { consumer, type LogsAllParams } from "./consumer-case.ts";

// Edge (API gateway) logs as a dashboard reads them: status codes, errors, paths, latency,
// geography, clients, cache, bytes — filters and groupings on nested records.

const HOUR = 3_600_000_000n;
const FROM = `from edge_logs as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as req
  cross join unnest(m.response) as r`;

/** edge rows that survive `cross join unnest` of metadata, request and response */
function requests(events: EventStore, params: LogsAllParams, ...more: string[]): LogEvent[] {
  return events
    .cte("edge_logs", params)
    .filter((e) => ["metadata.request", "metadata.response", ...more].every((p) => hasRecord(e, p)));
}
const status = (e: LogEvent) => field(e, "response.status_code") as number | null;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const edgeCases: ConformanceCase[] = [
  consumer(
    "edge: requests per status code",
    `select r.status_code, count(*) as requests ${FROM}
group by r.status_code
order by requests desc, r.status_code`,
    (events, params) =>
      sortBy(
        [...groupBy(requests(events, params), status).entries()].map(([s, es]) => ({
          status_code: s,
          requests: es.length,
        })),
        (r) => desc(r.requests),
        (r) => r.status_code,
      ),
  ),
  consumer(
    "edge: the newest errors with their paths",
    `select t.id, t.timestamp, r.status_code, req.path ${FROM}
where r.status_code >= 400
order by t.timestamp desc
limit 20`,
    (events, params) =>
      requests(events, params)
        .filter((e) => (status(e) ?? 0) >= 400)
        .slice(0, 20)
        .map((e) => ({
          id: e.id,
          timestamp: Number(e.timestamp),
          status_code: status(e),
          path: field(e, "request.path") as string,
        })),
  ),
  consumer(
    "edge: top 10 paths",
    `select req.path, count(*) as hits ${FROM}
group by req.path
order by hits desc, req.path
limit 10`,
    (events, params) =>
      sortBy(
        [...groupBy(requests(events, params), (e) => field(e, "request.path") as string).entries()].map(
          ([path, es]) => ({
            path,
            hits: es.length,
          }),
        ),
        (r) => desc(r.hits),
        (r) => r.path,
      ).slice(0, 10),
  ),
  consumer(
    "edge: status classes per method with COUNTIF",
    `select req.method,
  countif(r.status_code < 300) as ok,
  countif(r.status_code between 300 and 399) as redirects,
  countif(r.status_code >= 400 and r.status_code < 500) as client_errors,
  countif(r.status_code >= 500) as server_errors
${FROM}
group by req.method
order by req.method`,
    (events, params) =>
      sortBy(
        [...groupBy(requests(events, params), (e) => field(e, "request.method") as string).entries()],
        ([m]) => m,
      ).map(([method, es]) => ({
        method,
        ok: es.filter((e) => (status(e) ?? 999) < 300).length,
        redirects: es.filter((e) => (status(e) ?? 0) >= 300 && (status(e) ?? 0) <= 399).length,
        client_errors: es.filter((e) => (status(e) ?? 0) >= 400 && (status(e) ?? 0) < 500).length,
        server_errors: es.filter((e) => (status(e) ?? 0) >= 500).length,
      })),
  ),
  consumer(
    "edge: latency percentiles with APPROX_QUANTILES",
    `select
  approx_quantiles(r.origin_time, 100)[offset(50)] as p50,
  approx_quantiles(r.origin_time, 100)[offset(95)] as p95,
  approx_quantiles(r.origin_time, 100)[offset(99)] as p99,
  max(r.origin_time) as max_ms,
  count(r.origin_time) as n
${FROM}`,
    (events, params) => {
      const xs = requests(events, params).map((e) => num(field(e, "response.origin_time")));
      const present = xs.filter((x) => x !== null);
      return [
        {
          p50: quantile(xs, 0.5),
          p95: quantile(xs, 0.95),
          p99: quantile(xs, 0.99),
          max_ms: present.length ? Math.max(...(present as number[])) : null,
          n: present.length,
        },
      ];
    },
  ),
  consumer(
    "edge: p95 latency and average per hour over the last day",
    `select timestamp_trunc(t.timestamp, hour) as hour,
  approx_quantiles(r.origin_time, 100)[offset(95)] as p95,
  avg(r.origin_time) as avg_ms
${FROM}
where t.timestamp > timestamp_sub(current_timestamp(), interval 1 day)
group by hour
order by hour`,
    (events, params) => {
      const rows = requests(events, params).filter((e) => e.timestamp > NOW_MICROS - 24n * HOUR);
      return sortBy([...groupBy(rows, (e) => trunc(e.timestamp, "hour")).entries()], ([h]) => h).map(
        ([h, es]) => {
          const xs = es.map((e) => num(field(e, "response.origin_time")));
          const present = xs.filter((x): x is number => x !== null);
          return {
            hour: Number(h),
            p95: quantile(xs, 0.95),
            avg_ms: present.length ? present.reduce((a, b) => a + b, 0) / present.length : null,
          };
        },
      );
    },
  ),
  consumer(
    "edge: requests per country (three levels of records)",
    `select cf.country, count(*) as requests ${FROM}
  cross join unnest(req.cf) as cf
group by cf.country
order by requests desc, cf.country`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            requests(events, params, "metadata.request.cf"),
            (e) => field(e, "request.cf.country") as string | null,
          ).entries(),
        ].map(([country, es]) => ({ country, requests: es.length })),
        (r) => desc(r.requests),
        (r) => r.country as string,
      ),
  ),
  consumer(
    "edge: suspected bots (four levels of records, a BOOL field)",
    `select count(*) as n, countif(bm.verifiedBot) as verified, min(bm.score) as lowest
${FROM}
  cross join unnest(req.cf) as cf
  cross join unnest(cf.botManagement) as bm
where bm.score < 30`,
    (events, params) => {
      const rows = requests(events, params, "metadata.request.cf.botManagement").filter(
        (e) => (num(field(e, "request.cf.botManagement.score")) ?? 999) < 30,
      );
      const scores = rows.map((e) => num(field(e, "request.cf.botManagement.score"))!);
      return [
        {
          n: rows.length,
          verified: rows.filter((e) => field(e, "request.cf.botManagement.verifiedBot") === true).length,
          lowest: scores.length ? Math.min(...scores) : null,
        },
      ];
    },
  ),
  consumer(
    "edge: top browser user agents",
    `select h.user_agent, count(*) as n ${FROM}
  cross join unnest(req.headers) as h
where h.user_agent like 'Mozilla%'
group by h.user_agent
order by n desc, h.user_agent
limit 5`,
    (events, params) => {
      const rows = requests(events, params, "metadata.request.headers").filter((e) =>
        String(field(e, "request.headers.user_agent") ?? "").startsWith("Mozilla"),
      );
      return sortBy(
        [...groupBy(rows, (e) => field(e, "request.headers.user_agent") as string).entries()].map(
          ([ua, es]) => ({
            user_agent: ua,
            n: es.length,
          }),
        ),
        (r) => desc(r.n),
        (r) => r.user_agent,
      ).slice(0, 5);
    },
  ),
  consumer(
    "edge: client libraries from x_client_info with SPLIT and OFFSET",
    `select split(h.x_client_info, '/')[offset(0)] as client, count(*) as n ${FROM}
  cross join unnest(req.headers) as h
where h.x_client_info is not null
group by client
order by n desc, client`,
    (events, params) => {
      const rows = requests(events, params, "metadata.request.headers").filter(
        (e) => field(e, "request.headers.x_client_info") !== null,
      );
      return sortBy(
        [
          ...groupBy(rows, (e) => String(field(e, "request.headers.x_client_info")).split("/")[0]!).entries(),
        ].map(([client, es]) => ({ client, n: es.length })),
        (r) => desc(r.n),
        (r) => r.client,
      );
    },
  ),
  consumer(
    "edge: requests and server errors per minute over the last hour",
    `select timestamp_trunc(t.timestamp, minute) as minute, count(*) as requests, countif(r.status_code >= 500) as errors
${FROM}
where t.timestamp >= timestamp_sub(current_timestamp(), interval 60 minute)
group by minute
order by minute`,
    (events, params) => {
      const rows = requests(events, params).filter((e) => e.timestamp >= NOW_MICROS - HOUR);
      return sortBy([...groupBy(rows, (e) => trunc(e.timestamp, "minute")).entries()], ([m]) => m).map(
        ([m, es]) => ({
          minute: Number(m),
          requests: es.length,
          errors: es.filter((e) => (status(e) ?? 0) >= 500).length,
        }),
      );
    },
  ),
  consumer(
    "edge: distinct client addresses per hour with APPROX_COUNT_DISTINCT",
    `select timestamp_trunc(t.timestamp, hour) as hour, approx_count_distinct(h.x_real_ip) as clients
${FROM}
  cross join unnest(req.headers) as h
where t.timestamp > timestamp_sub(current_timestamp(), interval 12 hour)
group by hour
order by hour desc`,
    (events, params) => {
      const rows = requests(events, params, "metadata.request.headers").filter(
        (e) => e.timestamp > NOW_MICROS - 12n * HOUR,
      );
      return sortBy([...groupBy(rows, (e) => trunc(e.timestamp, "hour")).entries()], ([h]) => desc(h)).map(
        ([h, es]) => ({
          hour: Number(h),
          clients: new Set(es.map((e) => field(e, "request.headers.x_real_ip")).filter((x) => x !== null))
            .size,
        }),
      );
    },
  ),
  consumer(
    "edge: writes to the REST API (regular expression on a nested path, IN list)",
    `select t.id, req.method, req.path ${FROM}
where regexp_contains(req.path, '^/rest/v1/') and req.method in ('POST', 'PATCH', 'DELETE')
order by t.timestamp desc
limit 15`,
    (events, params) =>
      requests(events, params)
        .filter(
          (e) =>
            /^\/rest\/v1\//.test(String(field(e, "request.path"))) &&
            ["POST", "PATCH", "DELETE"].includes(String(field(e, "request.method"))),
        )
        .slice(0, 15)
        .map((e) => ({
          id: e.id,
          method: field(e, "request.method") as string,
          path: field(e, "request.path") as string,
        })),
  ),
  consumer(
    "edge: severity labels with CASE",
    `select case when r.status_code >= 500 then 'error' when r.status_code >= 400 then 'warning' else 'ok' end as severity,
  count(*) as n
${FROM}
group by severity
order by severity`,
    (events, params) => {
      const label = (e: LogEvent) => {
        const s = status(e);
        return s !== null && s >= 500 ? "error" : s !== null && s >= 400 ? "warning" : "ok";
      };
      return sortBy([...groupBy(requests(events, params), label).entries()], ([l]) => l).map(
        ([severity, es]) => ({
          severity,
          n: es.length,
        }),
      );
    },
  ),
  consumer(
    "edge: cache status of responses",
    `select rh.cf_cache_status, count(*) as n ${FROM}
  cross join unnest(r.headers) as rh
group by rh.cf_cache_status
order by rh.cf_cache_status`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(requests(events, params, "metadata.response.headers"), (e) =>
            field(e, "response.headers.cf_cache_status"),
          ).entries(),
        ],
        ([s]) => s as string | null,
      ).map(([s, es]) => ({ cf_cache_status: s as string | null, n: es.length })),
  ),
  consumer(
    "edge: bytes sent per path, a header string cast with SAFE_CAST",
    `select req.path, sum(safe_cast(rh.content_length as int64)) as bytes, count(*) as n ${FROM}
  cross join unnest(r.headers) as rh
group by req.path
order by bytes desc, req.path
limit 5`,
    (events, params) => {
      const rows = requests(events, params, "metadata.response.headers");
      const bytes = (e: LogEvent) => {
        const v = field(e, "response.headers.content_length");
        return v !== null && /^-?\d+$/.test(String(v)) ? Number(v) : null;
      };
      return sortBy(
        [...groupBy(rows, (e) => field(e, "request.path") as string).entries()].map(([path, es]) => {
          const present = es.map(bytes).filter((b): b is number => b !== null);
          return { path, bytes: present.length ? present.reduce((a, b) => a + b, 0) : null, n: es.length };
        }),
        (r) => desc(r.bytes),
        (r) => r.path,
      ).slice(0, 5);
    },
  ),
  consumer(
    "edge: LEFT JOIN UNNEST keeps a request without headers",
    `select t.id, req.path, h.x_real_ip
from edge_logs as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as req
  left join unnest(req.headers) as h on true
order by t.id`,
    (events, params) =>
      sortBy(
        events.cte("edge_logs", params).filter((e) => hasRecord(e, "metadata.request")),
        (e) => e.id,
      ).map((e) => ({
        id: e.id,
        path: field(e, "request.path") as string,
        x_real_ip: field(e, "request.headers.x_real_ip") as string | null,
      })),
    {
      params: { project: "wire" },
      rule: "DESIGN §3: LEFT JOIN UNNEST(...) ON TRUE keeps the row with NULLs",
    },
  ),
  consumer(
    "edge: CROSS JOIN UNNEST drops a request without headers",
    `select t.id, h.x_real_ip
from edge_logs as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as req
  cross join unnest(req.headers) as h
order by t.id`,
    () => [],
    { params: { project: "wire" }, rule: "DESIGN §3: CROSS JOIN UNNEST over a missing field drops the row" },
  ),
  consumer(
    "edge: subscripted paths without UNNEST",
    `select id, metadata[offset(0)].request[offset(0)].path as path, metadata[safe_offset(0)].response[safe_offset(0)].status_code as status
from edge_logs
order by timestamp desc
limit 10`,
    (events, params) =>
      events
        .cte("edge_logs", params)
        .slice(0, 10)
        .map((e) => ({ id: e.id, path: field(e, "request.path") as string | null, status: status(e) })),
    { rule: "DESIGN §3: repeated records of one element, subscripts" },
  ),
  consumer(
    "edge: IPv6 clients (STRPOS on a header)",
    `select count(*) as n, countif(strpos(h.cf_connecting_ip, ':') > 0) as ipv6 ${FROM}
  cross join unnest(req.headers) as h`,
    (events, params) => {
      const rows = requests(events, params, "metadata.request.headers");
      return [
        {
          n: rows.length,
          ipv6: rows.filter((e) => String(field(e, "request.headers.cf_connecting_ip") ?? "").includes(":"))
            .length,
        },
      ];
    },
  ),
  consumer(
    "edge: 4xx by the text of the status code",
    `select count(*) as n ${FROM}
where cast(r.status_code as string) like '4%'`,
    (events, params) => [
      { n: requests(events, params).filter((e) => String(status(e) ?? "").startsWith("4")).length },
    ],
  ),
  consumer(
    "edge: status counts over a bounded window of another project",
    `select r.status_code as status, count(*) as n ${FROM}
group by status
order by status`,
    (events, params) =>
      sortBy([...groupBy(requests(events, params), status).entries()], ([s]) => s).map(([s, es]) => ({
        status: s,
        n: es.length,
      })),
    {
      params: {
        project: "beta",
        iso_timestamp_start: "2025-01-14T00:00:00Z",
        iso_timestamp_end: "2025-01-15T06:00:00Z",
      },
    },
  ),
];
