import type { ConformanceCase } from "../../support/case.ts";
import { NOW_MICROS } from "../../support/events.ts";
import {
  CTE_NAMES,
  type CteName,
  desc,
  type EventStore,
  field,
  groupBy,
  hasRecord,
  type LogEvent,
  sortBy,
  trunc,
} from "../../support/oracle.ts";
import { consumer, type LogsAllParams } from "./consumer-case.ts";

// Views that put two sources side by side: two CTEs of the consumer's own, joined on a time
// bucket or a key, unions over several sources.

const HOUR = 3_600_000_000n;
const perBucket = (
  rows: LogEvent[],
  unit: "minute" | "hour",
  count: (es: LogEvent[]) => number = (es) => es.length,
) =>
  new Map(
    [...groupBy(rows, (e) => trunc(e.timestamp, unit)).entries()].map(([b, es]) => [b, count(es)] as const),
  );
const edgeWith = (events: EventStore, params: LogsAllParams) =>
  events
    .cte("edge_logs", params)
    .filter((e) => hasRecord(e, "metadata.request") && hasRecord(e, "metadata.response"));

export const joinCases: ConformanceCase[] = [
  consumer(
    "join: edge requests and auth failures per minute (LEFT JOIN of two CTEs)",
    `with requests as (
  select timestamp_trunc(timestamp, minute) as minute, count(*) as requests
  from edge_logs
  where timestamp >= timestamp_sub(current_timestamp(), interval 1 hour)
  group by minute
),
failures as (
  select timestamp_trunc(t.timestamp, minute) as minute, count(*) as failures
  from auth_logs as t cross join unnest(t.metadata) as m
  where m.status >= 400
  group by minute
)
select r.minute, r.requests, coalesce(f.failures, 0) as failures
from requests as r left join failures as f on r.minute = f.minute
order by r.minute`,
    (events, params) => {
      const requests = perBucket(
        events.cte("edge_logs", params).filter((e) => e.timestamp >= NOW_MICROS - HOUR),
        "minute",
      );
      const failures = perBucket(
        events
          .cte("auth_logs", params)
          .filter((e) => hasRecord(e, "metadata") && Number(field(e, "status") ?? 0) >= 400),
        "minute",
      );
      return sortBy([...requests.entries()], ([m]) => m).map(([m, n]) => ({
        minute: Number(m),
        requests: n,
        failures: failures.get(m) ?? 0,
      }));
    },
  ),
  consumer(
    "join: function invocations and their error logs per function",
    `with calls as (
  select m.function_id, count(*) as calls
  from function_edge_logs as t cross join unnest(t.metadata) as m
  group by m.function_id
),
errors as (
  select m.function_id, countif(m.level = 'error') as errors
  from function_logs as t cross join unnest(t.metadata) as m
  group by m.function_id
)
select c.function_id, c.calls, coalesce(e.errors, 0) as errors
from calls as c left join errors as e on c.function_id = e.function_id
order by c.function_id`,
    (events, params) => {
      const calls = groupBy(
        events.cte("function_edge_logs", params).filter((e) => hasRecord(e, "metadata")),
        (e) => field(e, "function_id") as string | null,
      );
      const errors = groupBy(
        events.cte("function_logs", params).filter((e) => hasRecord(e, "metadata")),
        (e) => field(e, "function_id") as string | null,
      );
      return sortBy([...calls.entries()], ([f]) => f).map(([f, es]) => ({
        function_id: f,
        calls: es.length,
        errors: f === null ? 0 : (errors.get(f) ?? []).filter((e) => field(e, "level") === "error").length,
      }));
    },
  ),
  consumer(
    "join: rows per source (UNION ALL of nine CTEs)",
    CTE_NAMES.map((cte) => `select '${cte}' as source, count(*) as n from ${cte}`).join("\nunion all\n") +
      "\norder by source",
    (events, params) =>
      sortBy(
        CTE_NAMES.map((cte) => ({ source: cte, n: events.cte(cte, params).length })),
        (r) => r.source,
      ),
  ),
  consumer(
    "join: gateway 5xx and database errors per hour (FULL OUTER JOIN)",
    `with gateway as (
  select timestamp_trunc(t.timestamp, hour) as hour, countif(r.status_code >= 500) as gateway_errors
  from edge_logs as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
  where t.timestamp > timestamp_sub(current_timestamp(), interval 12 hour)
  group by hour
),
db as (
  select timestamp_trunc(t.timestamp, hour) as hour, count(*) as db_errors
  from postgres_logs as t cross join unnest(t.metadata) as m cross join unnest(m.parsed) as p
  where p.error_severity in ('ERROR', 'FATAL') and t.timestamp > timestamp_sub(current_timestamp(), interval 12 hour)
  group by hour
)
select coalesce(g.hour, d.hour) as hour, coalesce(g.gateway_errors, 0) as gateway_errors, coalesce(d.db_errors, 0) as db_errors
from gateway as g full outer join db as d on g.hour = d.hour
order by hour`,
    (events, params) => {
      const since = NOW_MICROS - 12n * HOUR;
      const gateway = perBucket(
        events
          .cte("edge_logs", params)
          .filter((e) => hasRecord(e, "metadata.response") && e.timestamp > since),
        "hour",
        (es) => es.filter((e) => Number(field(e, "response.status_code") ?? 0) >= 500).length,
      );
      const db = perBucket(
        events
          .cte("postgres_logs", params)
          .filter(
            (e) =>
              hasRecord(e, "metadata.parsed") &&
              ["ERROR", "FATAL"].includes(String(field(e, "parsed.error_severity"))) &&
              e.timestamp > since,
          ),
        "hour",
      );
      const hours = new Set([...gateway.keys(), ...db.keys()]);
      return sortBy([...hours], (h) => h).map((h) => ({
        hour: Number(h),
        gateway_errors: gateway.get(h) ?? 0,
        db_errors: db.get(h) ?? 0,
      }));
    },
  ),
  consumer(
    "join: storage requests seen by the gateway and by storage, per hour (INNER JOIN)",
    `with gateway as (
  select timestamp_trunc(t.timestamp, hour) as hour, count(*) as via_gateway
  from edge_logs as t cross join unnest(t.metadata) as m cross join unnest(m.request) as req
  where starts_with(req.path, '/storage/')
  group by hour
),
storage as (
  select timestamp_trunc(timestamp, hour) as hour, count(*) as in_storage
  from storage_logs
  group by hour
)
select g.hour, g.via_gateway, s.in_storage
from gateway as g join storage as s on g.hour = s.hour
order by g.hour desc
limit 24`,
    (events, params) => {
      const gateway = perBucket(
        events
          .cte("edge_logs", params)
          .filter(
            (e) =>
              hasRecord(e, "metadata.request") &&
              String(field(e, "request.path") ?? "").startsWith("/storage/"),
          ),
        "hour",
      );
      const storage = perBucket(events.cte("storage_logs", params), "hour");
      return sortBy(
        [...gateway.entries()].filter(([h]) => storage.has(h)),
        ([h]) => desc(h),
      )
        .slice(0, 24)
        .map(([h, n]) => ({ hour: Number(h), via_gateway: n, in_storage: storage.get(h)! }));
    },
  ),
  consumer(
    "join: the newest 20 rows across all sources",
    `${CTE_NAMES.map((cte) => `select id, timestamp, '${cte}' as source from ${cte}`).join("\nunion all\n")}
order by timestamp desc, id
limit 20`,
    (events, params) =>
      sortBy(
        CTE_NAMES.flatMap((cte: CteName) =>
          events.cte(cte, params).map((e) => ({ id: e.id, timestamp: e.timestamp, source: cte as string })),
        ),
        (r) => desc(r.timestamp),
        (r) => r.id,
      )
        .slice(0, 20)
        .map((r) => ({ id: r.id, timestamp: Number(r.timestamp), source: r.source })),
  ),
  consumer(
    "join: auth API calls at the gateway beside auth server events, per hour",
    `with gateway as (
  select datetime(timestamp_trunc(t.timestamp, hour)) as hour, count(*) as calls
  from edge_logs as t cross join unnest(t.metadata) as m cross join unnest(m.request) as req
  where regexp_contains(req.path, '^/auth/v1/') and t.timestamp > timestamp_sub(current_timestamp(), interval 6 hour)
  group by hour
),
auth as (
  select datetime(timestamp_trunc(timestamp, hour)) as hour, count(*) as events
  from auth_logs
  where timestamp > timestamp_sub(current_timestamp(), interval 6 hour)
  group by hour
)
select a.hour, ifnull(g.calls, 0) as calls, a.events
from auth as a left join gateway as g using (hour)
order by a.hour`,
    (events, params) => {
      const since = NOW_MICROS - 6n * HOUR;
      const gateway = perBucket(
        events
          .cte("edge_logs", params)
          .filter(
            (e) =>
              hasRecord(e, "metadata.request") &&
              /^\/auth\/v1\//.test(String(field(e, "request.path") ?? "")) &&
              e.timestamp > since,
          ),
        "hour",
      );
      const auth = perBucket(
        events.cte("auth_logs", params).filter((e) => e.timestamp > since),
        "hour",
      );
      return sortBy([...auth.entries()], ([h]) => h).map(([h, n]) => ({
        hour: new Date(Number(h / 1000n)).toISOString().slice(0, 19),
        calls: gateway.get(h) ?? 0,
        events: n,
      }));
    },
  ),
  consumer(
    "join: minutes where realtime logged and the gateway saw websocket upgrades",
    `with ws as (
  select timestamp_trunc(t.timestamp, minute) as minute, count(*) as upgrades
  from edge_logs as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
  where r.status_code = 101
  group by minute
),
rt as (
  select timestamp_trunc(timestamp, minute) as minute, count(*) as logs
  from realtime_logs
  group by minute
)
select ws.minute, ws.upgrades, rt.logs
from ws join rt on ws.minute = rt.minute
order by ws.minute`,
    (events, params) => {
      const ws = perBucket(
        edgeWith(events, params).filter((e) => field(e, "response.status_code") === 101),
        "minute",
      );
      const rt = perBucket(events.cte("realtime_logs", params), "minute");
      return sortBy(
        [...ws.entries()].filter(([m]) => rt.has(m)),
        ([m]) => m,
      ).map(([m, n]) => ({
        minute: Number(m),
        upgrades: n,
        logs: rt.get(m)!,
      }));
    },
    { params: { project: "alpha", iso_timestamp_start: "2025-01-15T11:00:00Z" } },
  ),
];
