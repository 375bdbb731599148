import type { ConformanceCase } from "../../support/case.ts";
import { NOW_MICROS } from "../../support/events.ts";
import {
  type CteName,
  desc,
  type EventStore,
  field,
  groupBy,
  hasRecord,
  int64Wire,
  type LogEvent,
  quantile,
  type Row,
  sortBy,
  trunc,
} from "../../support/oracle.ts";
import { consumer, type LogsAllParams } from "./consumer-case.ts";

// Database, auth, functions, realtime, storage, REST and pooler logs as their dashboard pages
// read them: severities, statuses, durations, per-function and per-module views.

const HOUR = 3_600_000_000n;
const rowsWith = (events: EventStore, cte: CteName, params: LogsAllParams, ...paths: string[]): LogEvent[] =>
  events.cte(cte, params).filter((e) => ["metadata", ...paths].every((p) => hasRecord(e, p)));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** `select <key>, count(*) as n … group by <key> order by n desc, <key>` */
function countsDesc(rows: LogEvent[], key: (e: LogEvent) => string | number | null, name: string): Row[] {
  return sortBy(
    [...groupBy(rows, key).entries()].map(([k, es]) => ({ [name]: k, n: es.length }) as Row),
    (r) => desc(r.n as number),
    (r) => r[name] as string | number | null,
  );
}

const PG = `from postgres_logs as t cross join unnest(t.metadata) as m cross join unnest(m.parsed) as p`;

const postgresCases: ConformanceCase[] = [
  consumer(
    "postgres: counts per severity",
    `select p.error_severity, count(*) as n ${PG} group by p.error_severity order by n desc, p.error_severity`,
    (events, params) =>
      countsDesc(
        rowsWith(events, "postgres_logs", params, "metadata.parsed"),
        (e) => field(e, "parsed.error_severity") as string,
        "error_severity",
      ),
  ),
  consumer(
    "postgres: the newest errors",
    `select t.id, t.timestamp, p.error_severity, p.sql_state_code, t.event_message ${PG}
where p.error_severity in ('ERROR', 'FATAL', 'PANIC')
order by t.timestamp desc`,
    (events, params) =>
      rowsWith(events, "postgres_logs", params, "metadata.parsed")
        .filter((e) => ["ERROR", "FATAL", "PANIC"].includes(String(field(e, "parsed.error_severity"))))
        .map((e) => ({
          id: e.id,
          timestamp: Number(e.timestamp),
          error_severity: field(e, "parsed.error_severity") as string,
          sql_state_code: field(e, "parsed.sql_state_code") as string | null,
          event_message: e.event_message,
        })),
  ),
  consumer(
    "postgres: sessions per database user",
    `select p.user_name, count(*) as n ${PG} where p.user_name is not null group by p.user_name order by n desc, p.user_name`,
    (events, params) =>
      countsDesc(
        rowsWith(events, "postgres_logs", params, "metadata.parsed").filter(
          (e) => field(e, "parsed.user_name") !== null,
        ),
        (e) => field(e, "parsed.user_name") as string,
        "user_name",
      ),
  ),
  consumer(
    "postgres: errors and warnings per hour",
    `select timestamp_trunc(t.timestamp, hour) as hour,
  countif(p.error_severity = 'ERROR') as errors, countif(p.error_severity = 'WARNING') as warnings
${PG}
where t.timestamp > timestamp_sub(current_timestamp(), interval 24 hour)
group by hour order by hour`,
    (events, params) => {
      const rows = rowsWith(events, "postgres_logs", params, "metadata.parsed").filter(
        (e) => e.timestamp > NOW_MICROS - 24n * HOUR,
      );
      return sortBy([...groupBy(rows, (e) => trunc(e.timestamp, "hour")).entries()], ([h]) => h).map(
        ([h, es]) => ({
          hour: Number(h),
          errors: es.filter((e) => field(e, "parsed.error_severity") === "ERROR").length,
          warnings: es.filter((e) => field(e, "parsed.error_severity") === "WARNING").length,
        }),
      );
    },
  ),
  consumer(
    "postgres: cron runs with REGEXP_EXTRACT",
    `select t.id, regexp_extract(t.event_message, 'cron job (\\\\d+)') as job
from postgres_logs as t
where t.event_message like '%cron job%'
order by t.timestamp desc`,
    (events, params) =>
      events
        .cte("postgres_logs", params)
        .filter((e) => (e.event_message ?? "").includes("cron job"))
        .map((e) => ({ id: e.id, job: /cron job (\d+)/.exec(e.event_message!)?.[1] ?? null })),
  ),
  consumer(
    "postgres: a field no event carries is NULL",
    `select count(*) as n, count(p.detail) as with_detail, countif(p.hint is null) as without_hint ${PG}`,
    (events, params) => {
      const rows = rowsWith(events, "postgres_logs", params, "metadata.parsed");
      return [{ n: rows.length, with_detail: 0, without_hint: rows.length }];
    },
    { rule: "DESIGN §3: a field the schema does not know evaluates to NULL" },
  ),
];

const AUTH = `from auth_logs as t cross join unnest(t.metadata) as metadata`;
const authStatus = (e: LogEvent) => num(field(e, "status"));

const authCases: ConformanceCase[] = [
  consumer(
    "auth: the dashboard's error preview (`unnest(metadata) as metadata`, numeric status)",
    `select t.id, t.timestamp, metadata.level, metadata.status, metadata.path, metadata.msg, metadata.error
${AUTH}
where metadata.status >= 400
order by t.timestamp desc`,
    (events, params) =>
      rowsWith(events, "auth_logs", params)
        .filter((e) => (authStatus(e) ?? 0) >= 400)
        .map((e) => ({
          id: e.id,
          timestamp: Number(e.timestamp),
          level: field(e, "level") as string | null,
          status: authStatus(e),
          path: field(e, "path") as string | null,
          msg: field(e, "msg") as string | null,
          error: field(e, "error") as string | null,
        })),
  ),
  consumer(
    "auth: counts per level",
    `select metadata.level, count(*) as n ${AUTH} group by metadata.level order by n desc, metadata.level`,
    (events, params) =>
      countsDesc(rowsWith(events, "auth_logs", params), (e) => field(e, "level") as string, "level"),
  ),
  consumer(
    "auth: failures per path with CAST(status AS INT64)",
    `select metadata.path, countif(cast(metadata.status as int64) >= 400) as failures, count(*) as n
${AUTH}
where metadata.path is not null
group by metadata.path
order by failures desc, metadata.path`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            rowsWith(events, "auth_logs", params).filter((e) => field(e, "path") !== null),
            (e) => field(e, "path") as string,
          ).entries(),
        ].map(([path, es]) => ({
          path,
          failures: es.filter((e) => (authStatus(e) ?? 0) >= 400).length,
          n: es.length,
        })),
        (r) => desc(r.failures),
        (r) => r.path,
      ),
  ),
  consumer(
    "auth: messages read from the event text with JSON_VALUE",
    `select json_value(event_message, '$.msg') as msg, count(*) as n
from auth_logs
group by msg
order by n desc, msg
limit 8`,
    (events, params) =>
      countsDesc(
        events.cte("auth_logs", params),
        (e) => {
          const v = JSON.parse(e.event_message ?? "{}").msg;
          return typeof v === "string" ? v : null;
        },
        "msg",
      )
        .map((r) => ({ msg: r.msg as string | null, n: r.n as number }))
        .slice(0, 8),
  ),
  consumer(
    "auth: request duration quartiles (an array of quantiles)",
    `select approx_quantiles(metadata.duration, 4) as quartiles, count(metadata.duration) as n ${AUTH}`,
    (events, params) => {
      const xs = rowsWith(events, "auth_logs", params).map((e) => num(field(e, "duration")));
      return [
        {
          quartiles: [0, 0.25, 0.5, 0.75, 1].map((q) => quantile(xs, q)),
          n: xs.filter((x) => x !== null).length,
        },
      ];
    },
  ),
  consumer(
    "auth: a numeric field compared with a string literal compares as text",
    `select count(*) as n ${AUTH} where metadata.status = '200'`,
    (events, params) => [
      { n: rowsWith(events, "auth_logs", params).filter((e) => String(field(e, "status")) === "200").length },
    ],
    { rule: "DESIGN §3: a JSON field compared with a literal of another type is cast to the literal's type" },
  ),
  consumer(
    "auth: events without a status",
    `select countif(metadata.status is null) as no_status, countif(metadata.status is not null) as with_status ${AUTH}`,
    (events, params) => {
      const rows = rowsWith(events, "auth_logs", params);
      return [
        {
          no_status: rows.filter((e) => authStatus(e) === null).length,
          with_status: rows.filter((e) => authStatus(e) !== null).length,
        },
      ];
    },
  ),
];

const FN = `from function_edge_logs as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as req
  cross join unnest(m.response) as r`;
const fnRows = (events: EventStore, params: LogsAllParams) =>
  rowsWith(events, "function_edge_logs", params, "metadata.request", "metadata.response");

const functionCases: ConformanceCase[] = [
  consumer(
    "functions: execution time percentiles per function",
    `select m.function_id,
  count(*) as invocations,
  approx_quantiles(m.execution_time_ms, 100)[offset(50)] as p50,
  approx_quantiles(m.execution_time_ms, 100)[offset(95)] as p95
${FN}
group by m.function_id
order by m.function_id`,
    (events, params) =>
      sortBy(
        [...groupBy(fnRows(events, params), (e) => field(e, "function_id") as string).entries()],
        ([f]) => f,
      ).map(([f, es]) => {
        const xs = es.map((e) => num(field(e, "execution_time_ms")));
        return { function_id: f, invocations: es.length, p50: quantile(xs, 0.5), p95: quantile(xs, 0.95) };
      }),
  ),
  consumer(
    "functions: status codes per function (GROUP BY ordinals)",
    `select m.function_id, r.status_code, count(*) as n ${FN} group by 1, 2 order by 1, 2`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            fnRows(events, params),
            (e) => `${field(e, "function_id")}\u0000${field(e, "response.status_code")}`,
          ).entries(),
        ].map(([, es]) => ({
          function_id: field(es[0]!, "function_id") as string,
          status_code: num(field(es[0]!, "response.status_code")),
          n: es.length,
        })),
        (r) => r.function_id,
        (r) => r.status_code,
      ),
  ),
  consumer(
    "functions: invocations per path name",
    `select req.pathname, count(*) as n ${FN} group by req.pathname order by n desc, req.pathname`,
    (events, params) =>
      countsDesc(fnRows(events, params), (e) => field(e, "request.pathname") as string, "pathname"),
  ),
  consumer(
    "functions: the slowest invocations",
    `select t.id, m.execution_time_ms, req.method ${FN}
where m.execution_time_ms > 1000
order by m.execution_time_ms desc, t.id
limit 10`,
    (events, params) =>
      sortBy(
        fnRows(events, params).filter((e) => (num(field(e, "execution_time_ms")) ?? 0) > 1000),
        (e) => desc(num(field(e, "execution_time_ms"))),
        (e) => e.id,
      )
        .slice(0, 10)
        .map((e) => ({
          id: e.id,
          execution_time_ms: num(field(e, "execution_time_ms")),
          method: field(e, "request.method") as string,
        })),
  ),
  consumer(
    "function logs: counts per level",
    `select m.level, count(*) as n from function_logs as t cross join unnest(t.metadata) as m group by m.level order by n desc, m.level`,
    (events, params) =>
      countsDesc(rowsWith(events, "function_logs", params), (e) => field(e, "level") as string, "level"),
  ),
  consumer(
    "function logs: the newest errors with their function",
    `select t.id, t.timestamp, m.function_id, t.event_message
from function_logs as t cross join unnest(t.metadata) as m
where m.level = 'error'
order by t.timestamp desc
limit 10`,
    (events, params) =>
      rowsWith(events, "function_logs", params)
        .filter((e) => field(e, "level") === "error")
        .slice(0, 10)
        .map((e) => ({
          id: e.id,
          timestamp: Number(e.timestamp),
          function_id: field(e, "function_id") as string,
          event_message: e.event_message,
        })),
  ),
  consumer(
    "function logs: event types per day",
    `select date(t.timestamp) as day, m.event_type, count(*) as n
from function_logs as t cross join unnest(t.metadata) as m
group by day, m.event_type
order by day, m.event_type`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            rowsWith(events, "function_logs", params),
            (e) =>
              `${new Date(Number(e.timestamp / 1000n)).toISOString().slice(0, 10)} ${field(e, "event_type")}`,
          ).entries(),
        ].map(([k, es]) => ({
          day: k.slice(0, 10),
          event_type: field(es[0]!, "event_type") as string,
          n: es.length,
        })),
        (r) => r.day,
        (r) => r.event_type,
      ),
  ),
];

const RT = `from realtime_logs as t cross join unnest(t.metadata) as m cross join unnest(m.context) as c`;
const rtRows = (events: EventStore, params: LogsAllParams) =>
  rowsWith(events, "realtime_logs", params, "metadata.context");

const realtimeCases: ConformanceCase[] = [
  consumer(
    "realtime: counts per level",
    `select m.level, count(*) as n from realtime_logs as t cross join unnest(t.metadata) as m group by m.level order by n desc, m.level`,
    (events, params) =>
      countsDesc(rowsWith(events, "realtime_logs", params), (e) => field(e, "level") as string, "level"),
  ),
  consumer(
    "realtime: top modules",
    `select c.module, count(*) as n ${RT} group by c.module order by n desc, c.module limit 5`,
    (events, params) =>
      countsDesc(rtRows(events, params), (e) => field(e, "context.module") as string, "module").slice(0, 5),
  ),
  consumer(
    "realtime: an array of scalars searched with IN UNNEST",
    `select count(*) as n ${RT} where 'elixir' in unnest(c.domain)`,
    (events, params) => [
      {
        n: rtRows(events, params).filter((e) => {
          const d = (e.metadata!.context as Record<string, unknown>).domain;
          return Array.isArray(d) && d.includes("elixir");
        }).length,
      },
    ],
  ),
  consumer(
    "realtime: ARRAY_LENGTH and an element by OFFSET",
    `select t.id, array_length(c.mfa) as arity, c.mfa[safe_offset(1)] as fun ${RT} order by t.timestamp desc limit 10`,
    (events, params) =>
      rtRows(events, params)
        .slice(0, 10)
        .map((e) => {
          const mfa = (e.metadata!.context as Record<string, unknown>).mfa;
          return {
            id: e.id,
            arity: Array.isArray(mfa) ? mfa.length : null,
            fun: Array.isArray(mfa) && mfa.length > 1 ? (mfa[1] as string) : null,
          };
        }),
  ),
  consumer(
    "realtime: warnings and errors per hour",
    `select timestamp_trunc(t.timestamp, hour) as hour, countif(m.level in ('warning', 'error')) as problems, count(*) as n
from realtime_logs as t cross join unnest(t.metadata) as m
group by hour
having problems > 0
order by hour desc`,
    (events, params) =>
      sortBy(
        [...groupBy(rowsWith(events, "realtime_logs", params), (e) => trunc(e.timestamp, "hour")).entries()],
        ([h]) => desc(h),
      )
        .map(([h, es]) => ({
          hour: Number(h),
          problems: es.filter((e) => ["warning", "error"].includes(String(field(e, "level")))).length,
          n: es.length,
        }))
        .filter((r) => r.problems > 0),
  ),
];

const ST = `from storage_logs as t cross join unnest(t.metadata) as m`;
const stRows = (events: EventStore, params: LogsAllParams, ...more: string[]) =>
  rowsWith(events, "storage_logs", params, ...more);

const storageCases: ConformanceCase[] = [
  consumer(
    "storage: responses per status code",
    `select res.statusCode as status, count(*) as n ${ST} cross join unnest(m.res) as res group by status order by status`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(stRows(events, params, "metadata.res"), (e) =>
            num(field(e, "res.statusCode")),
          ).entries(),
        ],
        ([s]) => s,
      ).map(([s, es]) => ({ status: s, n: es.length })),
  ),
  consumer(
    "storage: response time percentiles of a FLOAT64 field",
    `select approx_quantiles(m.responseTime, 100)[offset(50)] as p50, approx_quantiles(m.responseTime, 100)[offset(90)] as p90,
  avg(m.responseTime) as mean, min(m.responseTime) as fastest
${ST}`,
    (events, params) => {
      const xs = stRows(events, params).map((e) => num(field(e, "responseTime")));
      const present = xs.filter((x): x is number => x !== null);
      return [
        {
          p50: quantile(xs, 0.5),
          p90: quantile(xs, 0.9),
          mean: present.length ? present.reduce((a, b) => a + b, 0) / present.length : null,
          fastest: present.length ? Math.min(...present) : null,
        },
      ];
    },
  ),
  consumer(
    "storage: methods with their slowest response",
    `select req.method, count(*) as n, max(m.responseTime) as slowest ${ST} cross join unnest(m.req) as req
group by req.method order by n desc, req.method`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            stRows(events, params, "metadata.req"),
            (e) => field(e, "req.method") as string,
          ).entries(),
        ].map(([method, es]) => {
          const xs = es.map((e) => num(field(e, "responseTime"))).filter((x): x is number => x !== null);
          return { method, n: es.length, slowest: xs.length ? Math.max(...xs) : null };
        }),
        (r) => desc(r.n),
        (r) => r.method,
      ),
  ),
  consumer(
    "storage: warnings and errors with their object",
    `select t.id, m.level, req.url ${ST} cross join unnest(m.req) as req
where m.level in ('warn', 'error')
order by t.timestamp desc`,
    (events, params) =>
      stRows(events, params, "metadata.req")
        .filter((e) => ["warn", "error"].includes(String(field(e, "level"))))
        .map((e) => ({
          id: e.id,
          level: field(e, "level") as string,
          url: field(e, "req.url") as string | null,
        })),
  ),
  consumer(
    "storage: objects per bucket with REGEXP_EXTRACT",
    `select regexp_extract(req.url, '^/object/(?:public/)?([^/]+)/') as bucket, count(*) as n
${ST} cross join unnest(m.req) as req
group by bucket
order by n desc, bucket`,
    (events, params) =>
      countsDesc(
        stRows(events, params, "metadata.req"),
        (e) => /^\/object\/(?:public\/)?([^/]+)\//.exec(String(field(e, "req.url") ?? ""))?.[1] ?? null,
        "bucket",
      ),
  ),
];

const restAndPoolerCases: ConformanceCase[] = [
  consumer(
    "postgrest: messages per host",
    `select m.host, count(*) as n from postgrest_logs as t cross join unnest(t.metadata) as m group by m.host order by m.host`,
    (events, params) =>
      sortBy(
        [...groupBy(rowsWith(events, "postgrest_logs", params), (e) => field(e, "host") as string).entries()],
        ([h]) => h,
      ).map(([host, es]) => ({ host, n: es.length })),
  ),
  consumer(
    "postgrest: request methods from access lines",
    `select regexp_extract(event_message, '"([A-Z]+) ') as method, count(*) as n
from postgrest_logs
where regexp_contains(event_message, 'HTTP/')
group by method
order by method`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            events.cte("postgrest_logs", params).filter((e) => /HTTP\//.test(e.event_message ?? "")),
            (e) => /"([A-Z]+) /.exec(e.event_message!)?.[1] ?? null,
          ).entries(),
        ],
        ([m]) => m,
      ).map(([method, es]) => ({ method, n: es.length })),
  ),
  consumer(
    "pgbouncer: stats lines per hour of the last day",
    `select format_timestamp('%Y-%m-%d %H:00', timestamp) as hour, count(*) as n
from pgbouncer_logs
where starts_with(event_message, 'LOG stats:') and timestamp > timestamp_sub(current_timestamp(), interval 1 day)
group by hour
order by hour`,
    (events, params) =>
      sortBy(
        [
          ...groupBy(
            events
              .cte("pgbouncer_logs", params)
              .filter(
                (e) =>
                  (e.event_message ?? "").startsWith("LOG stats:") && e.timestamp > NOW_MICROS - 24n * HOUR,
              ),
            (e) =>
              `${new Date(Number(trunc(e.timestamp, "hour") / 1000n)).toISOString().slice(0, 13).replace("T", " ")}:00`,
          ).entries(),
        ],
        ([h]) => h,
      ).map(([hour, es]) => ({ hour, n: es.length })),
  ),
  consumer(
    "pgbouncer: clients per host with their message kinds",
    `select m.host, countif(event_message like '%login attempt%') as logins, countif(event_message like '%closing%') as closings
from pgbouncer_logs as t cross join unnest(t.metadata) as m
group by m.host`,
    (events, params) =>
      [
        ...groupBy(rowsWith(events, "pgbouncer_logs", params), (e) => field(e, "host") as string).entries(),
      ].map(([host, es]) => ({
        host,
        logins: es.filter((e) => (e.event_message ?? "").includes("login attempt")).length,
        closings: es.filter((e) => (e.event_message ?? "").includes("closing")).length,
      })),
    { ordered: false },
  ),
  consumer(
    "postgres: query ids of the newest statements, INT64 beyond 2^53",
    `select t.id, p.query_id ${PG} where p.query_id is not null order by t.timestamp desc limit 5`,
    (events, params) =>
      rowsWith(events, "postgres_logs", params, "metadata.parsed")
        .filter((e) => field(e, "parsed.query_id") !== null)
        .slice(0, 5)
        .map((e) => ({ id: e.id, query_id: int64Wire(field(e, "parsed.query_id") as number | bigint) })),
    { params: { project: "beta" } },
  ),
];

export const serviceCases: ConformanceCase[] = [
  ...postgresCases,
  ...authCases,
  ...functionCases,
  ...realtimeCases,
  ...storageCases,
  ...restAndPoolerCases,
];
