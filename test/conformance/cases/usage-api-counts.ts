import type { ConformanceCase } from "../support/case.ts";
import { NOW_MICROS } from "../support/events.ts";
import {
  datetimeWire,
  type EventStore,
  field,
  groupBy,
  hasRecord,
  type Row,
  sortBy,
  trunc,
} from "../support/oracle.ts";

// SPEC.md §4.3: usage.api-counts, every rule.

export const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";

const WINDOWS = {
  hourly: { micros: 3_600_000_000n, unit: "hour" },
  daily: { micros: 7n * 86_400_000_000n, unit: "day" },
  minutely: { micros: 60n * 60_000_000n, unit: "minute" },
} as const;
type Interval = keyof typeof WINDOWS;

/** counts per bucket: URL matches the project pattern, window from now − span, four path counters */
export function usageCounts(events: EventStore, interval: Interval, pattern: string): Row[] {
  const { micros, unit } = WINDOWS[interval];
  const start = NOW_MICROS - micros;
  const re = new RegExp(pattern);
  const included = events
    .source("cloudflare.logs.prod")
    .filter((e) => hasRecord(e, "metadata.request"))
    .filter((e) => {
      const url = field(e, "request.url");
      return typeof url === "string" && re.test(url) && e.timestamp >= start;
    });
  const buckets = groupBy(included, (e) => trunc(e.timestamp, unit));
  const count = (es: typeof included, text: string) =>
    es.filter((e) => {
      const path = field(e, "request.path");
      return typeof path === "string" && path.includes(text);
    }).length;
  return sortBy([...buckets.entries()], ([b]) => b).map(([bucket, es]) => ({
    timestamp: datetimeWire(bucket),
    total_rest_requests: count(es, "/rest"),
    total_storage_requests: count(es, "/storage"),
    total_auth_requests: count(es, "/auth"),
    total_realtime_requests: count(es, "/realtime"),
  }));
}

function usageCase(
  name: string,
  rule: string,
  interval: Interval,
  project: string,
  endpoint = "usage.api-counts",
): ConformanceCase {
  return {
    name,
    rule,
    endpoint,
    params: { interval, project },
    oracle: (events) => ({
      rows: usageCounts(events, interval, project),
      columns: [
        "timestamp",
        "total_rest_requests",
        "total_storage_requests",
        "total_auth_requests",
        "total_realtime_requests",
      ],
    }),
  };
}

export const usageCases: ConformanceCase[] = [
  // hand-made events: window edges, a path in two counters, a bucket of zeros, no URL, URL of another project
  usageCase(
    "usage: hourly, hand-made window edges",
    "SPEC §4.3: now − 1 hour, >= start, hour buckets",
    "hourly",
    "usage1",
  ),
  usageCase(
    "usage: daily, hand-made window edges",
    "SPEC §4.3: now − 7 days, day buckets",
    "daily",
    "usage1",
  ),
  usageCase(
    "usage: minutely, a bucket of zeros and a path in two counters",
    "SPEC §4.3.4–5",
    "minutely",
    "usage1",
  ),
  // the generated data: every interval, the project as a pattern
  usageCase("usage: hourly over generated data", "SPEC §4.3", "hourly", "alpha"),
  usageCase("usage: daily over generated data", "SPEC §4.3", "daily", "alpha"),
  usageCase("usage: minutely over generated data", "SPEC §4.3", "minutely", "alpha"),
  usageCase("usage: addressed by UUID", "SPEC §1.3", "hourly", "beta", USAGE_ID),
  usageCase(
    "usage: the project is a pattern matching several projects",
    "SPEC §4.3: regular expression",
    "daily",
    "alpha|gamma",
  ),
  usageCase("usage: a character class", "SPEC §4.3: regular expression", "minutely", "usage[12]"),
  usageCase(
    "usage: an anchored pattern",
    "SPEC §4.3: regular expression, contains a match",
    "hourly",
    "^https://usage2\\.",
  ),
  usageCase(
    "usage: a pattern matching the path part of the URL",
    "SPEC §4.3: the URL, not the project",
    "daily",
    "/rest/v1/rpc/",
  ),
  usageCase(
    "usage: a pattern matching nothing",
    "SPEC §4.3.5: one row per non-empty bucket",
    "daily",
    "nobody",
  ),
  usageCase("usage: the dot in a pattern is a wildcard", "SPEC §4.3: regular expression", "hourly", "gamm."),
];
