import type { PeerOrder, PlainClickhouse, PlainDuckdb, PlainPostgres } from "./plain-peers.ts";

/**
 * The two endpoints as a person would write them by hand on each plain peer's layout: the
 * obvious filter, ORDER BY … LIMIT, date_trunc, count(*) FILTER, a regex match of the project
 * pattern on the URL and LIKE for the fixed path texts. No extra indexes, no rewrites: this is the
 * baseline qes must beat. Each returns its rows in a normal form (see `normalRows`) so a peer's
 * answer can be checked equal to qes's before anything is timed.
 */

export type Interval = "hourly" | "daily" | "minutely";
const UNIT = { hourly: "hour", daily: "day", minutely: "minute" } as const;
const SPAN = { hourly: "1 hour", daily: "7 days", minutely: "60 minutes" } as const;

export type PeerRequest = { endpoint: "logs.all" } | { endpoint: "usage.api-counts"; interval: Interval };

export interface Peer {
  /** the hand-written SQL for a request (for the report) */
  sql(request: PeerRequest): string;
  /** runs the request and returns its rows in normal form */
  run(request: PeerRequest, project: string, nowIso: string): Promise<string[]>;
}

const counters = (path: string) =>
  ["rest", "storage", "auth", "realtime"]
    .map((area) => `count(*) FILTER (WHERE ${path} LIKE '%/${area}%') AS ${area}`)
    .join(",\n  ");

export function duckdbPeer(db: PlainDuckdb, order: PeerOrder): Peer {
  const table = db.tables[order];
  const sql = (r: PeerRequest) =>
    r.endpoint === "logs.all"
      ? `SELECT id, "timestamp", event_message, metadata
FROM ${table}
WHERE project = $1
ORDER BY "timestamp" DESC
LIMIT 100`
      : `SELECT date_trunc('${UNIT[r.interval]}', "timestamp") AS bucket,
  ${counters("metadata.request.path")}
FROM ${table}
WHERE "timestamp" >= $2::TIMESTAMP - INTERVAL ${SPAN[r.interval]}
  AND regexp_matches(metadata.request.url, $1)
GROUP BY bucket
ORDER BY bucket`;
  return {
    sql,
    run: async (r, project, nowIso) => {
      const params = r.endpoint === "logs.all" ? [project] : [project, nowIso.replace(/Z$/, "")];
      const reader = await db.conn.runAndReadAll(sql(r), params);
      // JSON-ready values, as a server would have to produce them
      return normalRows(r, reader.getRowObjectsJson() as Record<string, unknown>[]);
    },
  };
}

export function postgresPeer(db: PlainPostgres, order: PeerOrder): Peer {
  const table = db.tables[order];
  const sql = (r: PeerRequest) =>
    r.endpoint === "logs.all"
      ? `SELECT id, "timestamp", event_message, body->'metadata' AS metadata
FROM ${table}
WHERE body->>'project' = $1
ORDER BY "timestamp" DESC
LIMIT 100`
      : `SELECT date_trunc('${UNIT[r.interval]}', "timestamp", 'UTC') AS bucket,
  ${counters("body#>>'{metadata,request,path}'")}
FROM ${table}
WHERE "timestamp" >= $2::timestamptz - interval '${SPAN[r.interval]}'
  AND body#>>'{metadata,request,url}' ~ $1
GROUP BY bucket
ORDER BY bucket`;
  return {
    sql,
    run: async (r, project, nowIso) => {
      const params = r.endpoint === "logs.all" ? [project] : [project, nowIso];
      return normalRows(r, (await db.client.query(sql(r), params)).rows);
    },
  };
}

const CH_UNIT = { hourly: "toStartOfHour", daily: "toStartOfDay", minutely: "toStartOfMinute" } as const;
const CH_SPAN = { hourly: "1 HOUR", daily: "7 DAY", minutely: "60 MINUTE" } as const;

export function clickhousePeer(db: PlainClickhouse, order: PeerOrder): Peer {
  const table = db.tables[order];
  const sql = (r: PeerRequest) =>
    r.endpoint === "logs.all"
      ? `SELECT id, timestamp, event_message, metadata
FROM ${table}
WHERE project = {project:String}
ORDER BY timestamp DESC
LIMIT 100`
      : `SELECT ${CH_UNIT[r.interval]}(timestamp) AS bucket,
  ${["rest", "storage", "auth", "realtime"]
    .map((area) => `countIf(metadata.request.path::String LIKE '%/${area}%') AS ${area}`)
    .join(",\n  ")}
FROM ${table}
WHERE timestamp >= parseDateTime64BestEffort({now:String}, 6, 'UTC') - INTERVAL ${CH_SPAN[r.interval]}
  AND match(metadata.request.url::String, {project:String})
GROUP BY bucket
ORDER BY bucket`;
  return {
    sql,
    run: async (r, project, nowIso) => normalRows(r, await db.query(sql(r), { project, now: nowIso })),
  };
}

/**
 * Rows in a form both sides share: logs.all as its ids in order (ids are unique, so the same ids
 * in the same order are the same newest 100); usage as `bucket-epoch-ms|rest|storage|auth|realtime`.
 * Works on a peer's rows (columns by position) and on qes's wire rows alike.
 */
export function normalRows(r: PeerRequest, rows: Record<string, unknown>[]): string[] {
  if (r.endpoint === "logs.all") return rows.map((row) => String(row.id));
  return rows.map((row) => {
    const [bucket, ...counts] = Object.values(row);
    return [epochMs(bucket), ...counts.map((c) => Number(c))].join("|");
  });
}

/** a timestamp from any of the drivers or the wire: Date, ISO text with or without a zone */
function epochMs(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const text = String(v).replace(" ", "T");
  return Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
}
