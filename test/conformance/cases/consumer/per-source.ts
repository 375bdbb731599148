import type { ConformanceCase } from "../../support/case.ts";
import { before, NOW_MICROS } from "../../support/events.ts";
import {
  CTE_NAMES,
  type CteName,
  datetimeWire,
  dateWire,
  desc,
  type EventStore,
  groupBy,
  type Row,
  sortBy,
  trunc,
} from "../../support/oracle.ts";
import { consumer, type LogsAllParams } from "./consumer-case.ts";

// The queries a log explorer sends for every source: totals, the newest rows, charts per minute,
// hour and day, message searches, bounded windows, raw metadata. One family per kind, one case
// per CTE of logs.all.

const HOUR = 3_600_000_000n;

/** a term that occurs in each source's messages (the generated shapes) */
const SEARCH: Record<CteName, string> = {
  edge_logs: "^POST \\| 20[01]",
  postgres_logs: "connection (received|authorized)",
  function_edge_logs: "^OPTIONS",
  function_logs: "Processing request for",
  auth_logs: '"level":"(warning|error)"',
  realtime_logs: "joined channel",
  storage_logs: "request completed",
  postgrest_logs: "Schema cache|Listening",
  pgbouncer_logs: "login attempt",
};

/** a lower-case substring for LIKE searches */
const LIKE: Record<CteName, string> = {
  edge_logs: "supabase.co/rest/v1/",
  postgres_logs: "cron job",
  function_edge_logs: "functions/v1/send",
  function_logs: "error",
  auth_logs: "request completed",
  realtime_logs: "billing metrics",
  storage_logs: "object/public",
  postgrest_logs: "connect",
  pgbouncer_logs: "stats:",
};

function perSource(
  kind: string,
  sql: (cte: CteName) => string,
  oracle: (cte: CteName, events: EventStore, params: LogsAllParams) => Row[],
  opts: Parameters<typeof consumer>[3] = {},
): ConformanceCase[] {
  return CTE_NAMES.map((cte) =>
    consumer(`${cte}: ${kind}`, sql(cte), (events, params) => oracle(cte, events, params), opts),
  );
}

export const perSourceCases: ConformanceCase[] = [
  ...perSource(
    "total count",
    (cte) => `select count(*) as count from ${cte}`,
    (cte, events, params) => [{ count: events.cte(cte, params).length }],
  ),
  ...perSource(
    "the newest 10 rows",
    (cte) => `select id, timestamp, event_message from ${cte} order by timestamp desc limit 10`,
    (cte, events, params) =>
      events
        .cte(cte, params)
        .slice(0, 10)
        .map((e) => ({ id: e.id, timestamp: Number(e.timestamp), event_message: e.event_message })),
  ),
  ...perSource(
    "events per minute over the last hour",
    (cte) => `select timestamp_trunc(timestamp, minute) as minute, count(*) as count
from ${cte}
where timestamp >= timestamp_sub(current_timestamp(), interval 1 hour)
group by minute
order by minute`,
    (cte, events, params) => {
      const rows = events.cte(cte, params).filter((e) => e.timestamp >= NOW_MICROS - HOUR);
      const g = groupBy(rows, (e) => trunc(e.timestamp, "minute"));
      return sortBy([...g.entries()], ([m]) => m).map(([m, es]) => ({ minute: Number(m), count: es.length }));
    },
  ),
  ...perSource(
    "events per hour over the last day, newest hour first",
    (cte) => `select datetime(timestamp_trunc(timestamp, hour)) as hour, count(*) as events
from ${cte}
where timestamp > timestamp_sub(current_timestamp(), interval 24 hour)
group by hour
order by hour desc`,
    (cte, events, params) => {
      const rows = events.cte(cte, params).filter((e) => e.timestamp > NOW_MICROS - 24n * HOUR);
      const g = groupBy(rows, (e) => trunc(e.timestamp, "hour"));
      return sortBy([...g.entries()], ([h]) => desc(h)).map(([h, es]) => ({
        hour: datetimeWire(h),
        events: es.length,
      }));
    },
  ),
  ...perSource(
    "events per day",
    (cte) => `select date(timestamp) as day, count(*) as n from ${cte} group by day order by day`,
    (cte, events, params) => {
      const g = groupBy(events.cte(cte, params), (e) => dateWire(e.timestamp));
      return sortBy([...g.entries()], ([d]) => d).map(([day, es]) => ({ day, n: es.length }));
    },
  ),
  ...perSource(
    "regular-expression search in the message",
    (cte) =>
      `select id, timestamp, event_message from ${cte}
where regexp_contains(event_message, '${SEARCH[cte].replaceAll("\\", "\\\\")}')
order by timestamp desc
limit 25`,
    (cte, events, params) => {
      const re = new RegExp(SEARCH[cte]);
      return events
        .cte(cte, params)
        .filter((e) => e.event_message !== null && re.test(e.event_message))
        .slice(0, 25)
        .map((e) => ({ id: e.id, timestamp: Number(e.timestamp), event_message: e.event_message }));
    },
  ),
  ...perSource(
    "case-insensitive LIKE search",
    (cte) => `select id, event_message from ${cte}
where lower(event_message) like '%${LIKE[cte]}%'
order by timestamp desc, id
limit 20`,
    (cte, events, params) =>
      events
        .cte(cte, params)
        .filter((e) => (e.event_message ?? "").toLowerCase().includes(LIKE[cte]))
        .slice(0, 20)
        .map((e) => ({ id: e.id, event_message: e.event_message })),
  ),
  ...perSource(
    "a bounded window: count, first and last",
    (cte) => `select count(*) as n, min(timestamp) as first_seen, max(timestamp) as last_seen from ${cte}`,
    (cte, events, params) => {
      const rows = events.cte(cte, params);
      return [
        {
          n: rows.length,
          first_seen: rows.length ? Number(rows[rows.length - 1]!.timestamp) : null,
          last_seen: rows.length ? Number(rows[0]!.timestamp) : null,
        },
      ];
    },
    { params: { project: "alpha", iso_timestamp_start: before(6 * 3600), iso_timestamp_end: before(1800) } },
  ),
  ...perSource(
    "the newest rows with their metadata",
    (cte) => `select id, timestamp, metadata from ${cte} limit 5`,
    (cte, events, params) =>
      events
        .cte(cte, params)
        .slice(0, 5)
        .map((e) => ({ id: e.id, timestamp: Number(e.timestamp), metadata: events.wireMetadata(e) })),
    { params: { project: "beta" } },
  ),
];
