import type { ConformanceCase } from "../support/case.ts";
import { before } from "../support/events.ts";
import type { EventStore, LogEvent, Row } from "../support/oracle.ts";

// SPEC.md §4.2 and log-event-shapes.md §0: logs.all, every rule.

export const LOGS_ALL_ID = "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19";

/** a logs.all result row: id, µs timestamp, message, metadata as one-element arrays */
export function logRow(events: EventStore, e: LogEvent): Row {
  return {
    id: e.id,
    timestamp: Number(e.timestamp),
    event_message: e.event_message,
    metadata: events.wireMetadata(e),
  };
}

type Bounds = { project: string; iso_timestamp_start?: string; iso_timestamp_end?: string };

/** the stored query's answer: the edge CTE, newest first, 100 rows */
export function logsAll(events: EventStore, params: Bounds): Row[] {
  return events
    .cte("edge_logs", params)
    .slice(0, 100)
    .map((e) => logRow(events, e));
}

function logsAllCase(
  name: string,
  rule: string,
  params: Bounds & Record<string, string>,
  endpoint = "logs.all",
): ConformanceCase {
  return {
    name,
    rule,
    endpoint,
    params,
    oracle: (events) => ({
      rows: logsAll(events, params),
      columns: ["id", "timestamp", "event_message", "metadata"],
      headers: { "qes-row-limit-reached": null },
    }),
  };
}

export const logsAllCases: ConformanceCase[] = [
  logsAllCase(
    "logs.all: the newest 100 edge rows of a busy project",
    "SPEC §4.2: edge source only, newest first, 100 rows",
    {
      project: "alpha",
    },
  ),
  logsAllCase("logs.all addressed by UUID", "SPEC §1.3, §4.1", { project: "alpha" }, LOGS_ALL_ID),
  logsAllCase("logs.all: another project's rows", "SPEC §4.2: project filter", { project: "beta" }),
  logsAllCase("logs.all: a project with fewer than 100 rows", "SPEC §4.2", { project: "gamma" }),
  logsAllCase("logs.all: a project with no rows", "SPEC §4.2: project filter", { project: "nobody" }),
  logsAllCase(
    "logs.all: the project is compared for equality, not as a pattern",
    "SPEC §4.2: equality filter",
    {
      project: "alph.*",
    },
  ),
  logsAllCase(
    "logs.all: start exclusive and end inclusive, to the microsecond",
    "SPEC §4.2: start >, end <=",
    {
      project: "bounds",
      iso_timestamp_start: "2025-01-10T00:00:00.000001Z",
      iso_timestamp_end: "2025-01-10T00:00:10.000005Z",
    },
  ),
  logsAllCase("logs.all: empty bounds are no bounds", "SPEC §4.2: empty = no bound", {
    project: "bounds",
    iso_timestamp_start: "",
    iso_timestamp_end: "",
  }),
  logsAllCase("logs.all: absent bounds are no bounds", "SPEC §4.2: absent = no bound", { project: "bounds" }),
  logsAllCase("logs.all: only a start", "SPEC §4.2", {
    project: "bounds",
    iso_timestamp_start: "2025-01-10T00:00:10.000005Z",
  }),
  logsAllCase("logs.all: only an end", "SPEC §4.2", {
    project: "bounds",
    iso_timestamp_end: "2025-01-10T00:00:00.000002Z",
  }),
  logsAllCase("logs.all: a bound with a zone offset", "SPEC §4.2: ISO 8601", {
    project: "bounds",
    iso_timestamp_end: "2025-01-10T01:00:10.000005+01:00",
  }),
  logsAllCase("logs.all: a bound without a zone is UTC", "DESIGN §5: no zone = UTC", {
    project: "bounds",
    iso_timestamp_start: "2025-01-10T00:00:10.000005",
  }),
  logsAllCase(
    "logs.all: an event stored with an offset is found at its instant",
    "DESIGN §3: ISO 8601 timestamps",
    {
      project: "bounds",
      iso_timestamp_start: "2025-01-10T00:00:20.499999Z",
      iso_timestamp_end: "2025-01-10T00:00:20.5Z",
    },
  ),
  logsAllCase("logs.all: a window in the generated data", "SPEC §4.2", {
    project: "alpha",
    iso_timestamp_start: before(2 * 3600),
    iso_timestamp_end: before(3600),
  }),
  logsAllCase("logs.all: a window wider than 100 rows is cut to the newest 100", "SPEC §4.2: 100 rows", {
    project: "alpha",
    iso_timestamp_start: before(7 * 86_400),
    iso_timestamp_end: before(600),
  }),
  logsAllCase("logs.all: an empty window", "SPEC §4.2", {
    project: "alpha",
    iso_timestamp_start: before(60),
    iso_timestamp_end: before(120),
  }),
  logsAllCase(
    "logs.all: the edge rows only, though other sources have the project in the window",
    "SPEC §4.2.1",
    {
      project: "beta",
      iso_timestamp_start: before(6 * 3600),
    },
  ),
  {
    name: "logs.all: an undeclared parameter is ignored and named",
    rule: "DESIGN §5: QES-Ignored-Params",
    endpoint: "logs.all",
    params: { project: "gamma", colour: "blue" },
    oracle: (events) => ({
      rows: logsAll(events, { project: "gamma" }),
      headers: { "qes-ignored-params": "colour" },
    }),
  },
];
