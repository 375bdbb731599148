import type { ConformanceCase } from "../support/case.ts";
import { datetimeWire, dateWire, field, hasRecord, int64Wire, type Row } from "../support/oracle.ts";
import { logsAll } from "./logs-all.ts";

// DESIGN.md §4 (wire values) and §5 (max rows, QES-Row-Limit-Reached).

export const wireCases: ConformanceCase[] = [
  {
    name: "wire: µs timestamps, INT64 beyond 2^53 as strings, floats, booleans, arrays, repeated records, no metadata",
    rule: "DESIGN §4",
    endpoint: "logs.all",
    params: { project: "wire" },
    oracle: (events) => ({ rows: logsAll(events, { project: "wire" }) }),
  },
  {
    name: "wire: DATETIME with and without a fraction, DATE, TIMESTAMP",
    rule: "DESIGN §4: DATETIME `.ffffff` only when not zero",
    endpoint: "logs.all",
    params: { project: "wire" },
    sql: "select id, datetime(timestamp) as dt, date(timestamp) as d, timestamp from edge_logs order by timestamp desc",
    oracle: (events) => ({
      rows: events.cte("edge_logs", { project: "wire" }).map((e) => ({
        id: e.id,
        dt: datetimeWire(e.timestamp),
        d: dateWire(e.timestamp),
        timestamp: Number(e.timestamp),
      })),
      columns: ["id", "dt", "d", "timestamp"],
    }),
  },
  {
    name: "wire: INT64 fields selected by consumer SQL keep every digit",
    rule: "DESIGN §4: INT64 a string only beyond ±2^53",
    endpoint: "logs.all",
    params: { project: "wire" },
    sql: `select t.id, m.counter, m.negative, m.small, m.ratio, m.flag, m.tags, m.hops
from edge_logs as t cross join unnest(t.metadata) as m where m.counter is not null`,
    oracle: () => ({
      rows: [
        {
          id: "w-big",
          counter: "9007199254740993",
          negative: "-9007199254740993",
          small: 9007199254740991,
          ratio: 0.25,
          flag: true,
          tags: ["a", "b"],
          hops: [
            { ip: "192.0.2.1", ms: 3 },
            { ip: "192.0.2.2", ms: 5 },
          ],
        },
      ],
    }),
  },
  {
    name: "wire: 64-bit query ids of postgres logs",
    rule: "DESIGN §4: INT64 beyond 2^53 as strings",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: `select t.id, p.query_id, p.process_id from postgres_logs as t
  cross join unnest(t.metadata) as m cross join unnest(m.parsed) as p
order by t.timestamp desc limit 30`,
    oracle: (events) => ({
      rows: events
        .cte("postgres_logs", { project: "alpha" })
        .filter((e) => hasRecord(e, "metadata.parsed"))
        .slice(0, 30)
        .map((e) => {
          const q = field(e, "parsed.query_id");
          const p = field(e, "parsed.process_id");
          return {
            id: e.id,
            query_id: q === null ? null : int64Wire(q as number | bigint),
            process_id: p === null ? null : int64Wire(p as number | bigint),
          };
        }),
    }),
  },
  {
    name: "wire: counts are JSON numbers",
    rule: "DESIGN §4: INT64 → JSON number",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: "select count(*) as n, countif(timestamp > timestamp_sub(current_timestamp(), interval 1 hour)) as last_hour from edge_logs",
    oracle: (events) => {
      const rows = events.cte("edge_logs", { project: "alpha" });
      const hourAgo = 1_736_942_400_000_000n - 3_600_000_000n;
      return { rows: [{ n: rows.length, last_hour: rows.filter((e) => e.timestamp > hourAgo).length }] };
    },
  },
];

/** the first `n` rows of a CTE as (id, µs timestamp) */
function idsAndTimes(rows: { id: string; timestamp: bigint }[]): Row[] {
  return rows.map((e) => ({ id: e.id, timestamp: Number(e.timestamp) }));
}

export const rowLimitCases: ConformanceCase[] = [
  {
    name: "max rows: a consumer query over 1000 rows is cut to 1000 and says so",
    rule: "SPEC §8 max rows 1000; DESIGN §5 QES-Row-Limit-Reached",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: "select id, timestamp from edge_logs order by timestamp desc",
    oracle: (events) => ({
      rows: idsAndTimes(events.cte("edge_logs", { project: "alpha" }).slice(0, 1000)),
      headers: { "qes-row-limit-reached": "true" },
    }),
  },
  {
    name: "max rows: the CTE's order is kept when the consumer query does not restate it",
    rule: "DESIGN §3: a final SELECT over a CTE ending in ORDER BY keeps that order; §5 row cap",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: "select id, timestamp from edge_logs",
    oracle: (events) => ({
      rows: idsAndTimes(events.cte("edge_logs", { project: "alpha" }).slice(0, 1000)),
      headers: { "qes-row-limit-reached": "true" },
    }),
  },
  {
    name: "max rows: exactly 1000 rows is not over the limit",
    rule: "DESIGN §5: results beyond maxRows are cut",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: "select id, timestamp from edge_logs order by timestamp desc limit 1000",
    oracle: (events) => ({
      rows: idsAndTimes(events.cte("edge_logs", { project: "alpha" }).slice(0, 1000)),
      headers: { "qes-row-limit-reached": null },
    }),
  },
  {
    name: "max rows: 1001 rows asked, 1000 given",
    rule: "DESIGN §5",
    endpoint: "logs.all",
    params: { project: "alpha" },
    sql: "select id, timestamp from edge_logs order by timestamp asc limit 1001",
    oracle: (events) => ({
      rows: idsAndTimes(events.cte("edge_logs", { project: "alpha" }).reverse().slice(0, 1000)),
      headers: { "qes-row-limit-reached": "true" },
    }),
  },
  {
    name: "max rows: the stored query's 100 rows are under the endpoint's limit",
    rule: "SPEC §4.2.2: 100 is what the query yields",
    endpoint: "logs.all",
    params: { project: "alpha" },
    oracle: (events) => ({
      rows: logsAll(events, { project: "alpha" }),
      headers: { "qes-row-limit-reached": null },
    }),
  },
];
