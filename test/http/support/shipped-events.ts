import { mulberry32 } from "../../support/prng.ts";

/**
 * Events of the nine log sources in the shapes log-event-shapes.md describes — what Supabase's
 * self-hosted Vector configuration produces, mixed with the hosted samples' richer fields — as a
 * shipper posts them: JSON objects with an RFC 3339 `timestamp`. Deterministic (a seeded
 * generator), every timestamp of a source distinct, so `order by timestamp desc limit n` has one
 * answer. Most events belong to project `default` (self-hosted's ref); some to `other`, so the
 * project filter of each of logs.all's CTEs is exercised where that CTE reads it.
 */

export const SHIPPED_NOW = "2025-01-15T12:00:00Z";
const NOW_MS = Date.parse(SHIPPED_NOW);

type Json = Record<string, unknown>;

interface Gen {
  pick<T>(items: readonly T[]): T;
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
}

function gen(seed: number): Gen {
  const next = mulberry32(seed);
  return {
    pick: (items) => items[Math.floor(next() * items.length)]!,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
  };
}

/**
 * The i-th event's instant: i × 41 s before now, less a random part of those 41 s, to the
 * microsecond (RFC 3339 with six digits, as Vector writes them). Distinct within a source.
 */
function instant(g: Gen, i: number): { iso: string; nginx: string; pg: string } {
  const micros = BigInt(NOW_MS) * 1000n - BigInt(i) * 41_000_000n - BigInt(g.int(1, 40_999_999));
  const ms = Number(micros / 1000n);
  const d = new Date(ms);
  const frac = (micros % 1_000_000n).toString().padStart(6, "0");
  const iso = `${d.toISOString().slice(0, 19)}.${frac}Z`;
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const p2 = (n: number) => String(n).padStart(2, "0");
  const nginx = `${p2(d.getUTCDate())}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000`;
  const pg = `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
  return { iso, nginx, pg };
}

const project = (g: Gen) => (g.chance(0.85) ? "default" : "other");

const EDGE_PATHS = [
  "/rest/v1/todos?select=*",
  "/rest/v1/rpc/get_stats",
  "/graphql/v1",
  "/auth/v1/token?grant_type=password",
  "/auth/v1/user",
  "/storage/v1/object/public/avatars/a.png",
  "/storage/v1/object/sign/docs/b.pdf",
  "/storage/v1/render/image/public/c.jpg",
  "/realtime/v1/websocket",
  "/functions/v1/hello",
] as const;
const METHODS = ["GET", "GET", "GET", "POST", "PATCH", "DELETE", "OPTIONS", "PUT"] as const;
const STATUSES = [200, 200, 200, 201, 204, 301, 400, 401, 404, 422, 500, 502, 503] as const;
const AGENTS = ["curl/8.5.0", "supabase-js/2.39.0", "Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0"] as const;

function edgeEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const method = g.pick(METHODS);
  const path = g.pick(EDGE_PATHS);
  const status = g.pick(STATUSES);
  const ip = `198.51.100.${g.int(1, 20)}`;
  const agent = g.pick(AGENTS);
  const kind = g.int(0, 9);
  if (kind < 6) {
    // Vector's kong_logs: the nginx access line, request/response parsed from it
    return {
      timestamp: t.iso,
      project: project(g),
      appname: "supabase-kong",
      event_message: `${ip} - - [${t.nginx}] "${method} ${path} HTTP/1.1" ${status} ${g.int(0, 9999)} "-" "${agent}"`,
      metadata: {
        request: {
          method,
          path,
          protocol: "HTTP/1.1",
          headers: { referer: "-", user_agent: agent, cf_connecting_ip: ip },
        },
        response: { status_code: status },
      },
    };
  }
  if (kind < 7) {
    // Vector's kong_err: an nginx error line, method GET and status 200 set by the transform
    return {
      timestamp: t.iso,
      project: project(g),
      appname: "supabase-kong",
      severity: g.pick(["error", "warn", "crit"]),
      event_message: `${t.iso.slice(0, 19).replace("T", " ")} [error] 1234#0: *${i} upstream timed out, client: ${ip}, request: "GET ${path} HTTP/1.1"`,
      metadata: { request: { method: "GET", path, host: "kong" }, response: { status_code: 200 } },
    };
  }
  // the hosted sample's shape: search, url, headers, cf, response headers and origin time
  const [bare, search] = path.split("?") as [string, string | undefined];
  const ref = project(g);
  const country = g.pick(["US", "DE", "SG", "BR"]);
  return {
    timestamp: t.iso,
    project: ref,
    event_message: `${method} | ${status} | ${ip} | ${i.toString(16)}-SJC | https://${ref}.supabase.co${path} | ${agent}`,
    metadata: {
      logflare_worker: { worker_id: `w${g.int(1, 5)}` },
      request: {
        method,
        path: bare,
        ...(search !== undefined ? { search: `?${search}` } : {}),
        url: `https://${ref}.supabase.co${path}`,
        host: `${ref}.supabase.co`,
        protocol: "https:",
        headers: {
          cf_connecting_ip: ip,
          x_real_ip: ip,
          user_agent: agent,
          cf_ipcountry: country,
          content_length: String(g.int(0, 900)),
        },
        cf: {
          country,
          asn: g.int(1000, 1010),
          city: g.pick(["Berlin", "Austin", null]),
          botManagement: { score: g.int(1, 99), detectionIds: [g.int(1, 9)] },
        },
      },
      response: {
        status_code: status,
        origin_time: g.int(5, 2500),
        headers: {
          cf_cache_status: g.pick(["HIT", "MISS", "DYNAMIC", "BYPASS", "EXPIRED"]),
          content_type: "application/json",
          ...(g.chance(0.7) ? { content_length: String(g.int(0, 2_000_000)) } : {}),
        },
      },
    },
  };
}

const PG_LEVELS = [
  "LOG",
  "LOG",
  "LOG",
  "LOG",
  "INFO",
  "NOTICE",
  "WARNING",
  "ERROR",
  "ERROR",
  "FATAL",
  "PANIC",
] as const;
const PG_MESSAGES = [
  "statement: COMMIT",
  "duration: 0.231 ms",
  'relation "todos" does not exist',
  "cron job 7 starting: vacuum",
  "checkpoint complete: wrote 3 buffers",
  'password authentication failed for user "app"',
  "COMMIT PREPARED 'tx1'",
  "terminating connection due to administrator's command",
] as const;

function postgresEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const level = g.pick(PG_LEVELS);
  const msg = g.pick(PG_MESSAGES);
  const pid = g.int(100, 999);
  const parsed: Json = { timestamp: t.iso, error_severity: level };
  // the hosted sample's fields on some events; self-hosted Vector sets only the two above
  if (g.chance(0.4)) {
    parsed.user_name = g.pick(["postgres", "authenticator", "supabase_admin"]);
    parsed.process_id = pid;
    parsed.sql_state_code = level === "ERROR" ? "42P01" : "00000";
    if (g.chance(0.5)) parsed.application_name = g.pick(["pg_cron", "psql", "postgrest"]);
    if (level === "ERROR" && g.chance(0.5)) parsed.hint = "check the relation name";
  }
  return {
    timestamp: t.iso,
    project: project(g),
    event_message: `${t.pg} [${pid}] ${level}:  ${msg}`,
    metadata: { host: "db-default", parsed },
  };
}

function functionEdgeEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const ref = project(g);
  if (g.chance(0.4)) {
    // self-hosted: the edge runtime's stdout line, nothing but the project ref
    return {
      timestamp: t.iso,
      event_message: `serving the request with /home/deno/functions/${g.pick(["hello", "stripe"])}`,
      metadata: { project_ref: ref },
    };
  }
  const fn = g.pick(["hello", "stripe", "resize"]);
  const method = g.pick(["GET", "POST", "OPTIONS"]);
  const status = g.pick([200, 200, 201, 400, 404, 500, 546]);
  return {
    timestamp: t.iso,
    event_message: `${method} | ${status} | https://${ref}.functions.supabase.co/${fn}`,
    metadata: {
      project_ref: ref,
      deployment_id: `${ref}_${fn}_${g.int(1, 3)}`,
      function_id: `fn-${fn}`,
      execution_time_ms: g.int(2, 3000),
      version: String(g.int(1, 3)),
      request_id: `req-${i}`,
      request: {
        method,
        pathname: `/${fn}`,
        url: `https://${ref}.functions.supabase.co/${fn}`,
        host: `${ref}.functions.supabase.co`,
        protocol: "https:",
        headers: { accept: "*/*", user_agent: "Deno/1.40" },
      },
      response: {
        status_code: status,
        headers: {
          content_type: "application/json",
          server: "cloudflare",
          ...(g.chance(0.8)
            ? { x_sb_edge_region: g.pick(["us-east-1", "eu-central-1", "ap-southeast-1"]) }
            : {}),
        },
      },
    },
  };
}

function functionEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const level = g.pick(["log", "log", "info", "debug", "warn", "error"]);
  return {
    timestamp: t.iso,
    event_message: g.pick([
      "booted (time: 31ms)",
      "Listening on http://localhost:9999/",
      "Error: boom",
      "shutdown",
    ]),
    metadata: {
      project_ref: project(g),
      deployment_id: "default_hello_1",
      event_type: g.pick(["log", "boot", "shutdown", "uncaughtException"]),
      execution_id: `ex-${g.int(1, 30)}`,
      function_id: `fn-${g.pick(["hello", "stripe"])}`,
      level,
      region: "us-east-1",
      timestamp: t.iso,
      version: "1",
    },
  };
}

const AUTH_PATHS = [
  "/token",
  "/signup",
  "/verify",
  "/user",
  "/logout",
  "/recover",
  "/admin/users",
  "/otp",
  "/health",
  "/authorize",
] as const;

function authEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const level = g.pick(["info", "info", "info", "warning", "error", "fatal"]);
  const path = g.pick(AUTH_PATHS);
  const status = g.chance(0.8) ? g.pick([200, 200, 204, 303, 400, 401, 403, 422, 429, 500, 503]) : undefined;
  const line: Json = {
    component: "api",
    level,
    method: g.pick(["GET", "POST"]),
    msg: status === undefined ? g.pick(["Login", "request started", "audit_log"]) : "request completed",
    path,
    referer: "http://localhost:3000",
    remote_addr: `192.0.2.${g.int(1, 9)}`,
    request_id: `r-${i}`,
    time: t.iso,
    ...(status !== undefined ? { status, duration: g.int(1000, 9_000_000) } : {}),
    ...(level === "error" ? { error: "invalid_grant" } : {}),
    ...(g.chance(0.2)
      ? {
          auth_event: {
            action: g.pick(["login", "logout", "user_signedup"]),
            actor_id: `u${g.int(1, 5)}`,
            log_type: "account",
            traits: { provider: g.pick(["email", "github"]) },
          },
        }
      : {}),
  };
  // Vector's auth transform: event_message is the JSON line, its fields merged into metadata
  return {
    timestamp: t.iso,
    project: project(g),
    event_message: JSON.stringify(line),
    metadata: { ...line, timestamp: t.iso, host: "gotrue" },
  };
}

function realtimeEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const ref = project(g);
  const level = g.pick(["info", "info", "debug", "warning", "error"]);
  const metadata: Json = { project: ref, external_id: ref, level };
  if (g.chance(0.3)) {
    metadata.context = {
      application: "realtime",
      module: "Realtime.Tenants.Connect",
      pid: "<0.123.0>",
      line: g.int(1, 400),
      domain: ["elixir"],
      vm: { node: "realtime@127.0.0.1" },
    };
  }
  if (g.chance(0.1))
    metadata.measurements = {
      connected: g.int(0, 50),
      connected_cluster: g.int(0, 80),
      limit: 200,
      sum: g.int(0, 100),
    };
  return {
    timestamp: t.iso,
    event_message: g.pick([
      "Billing metrics",
      "Connected to tenant",
      "Starting replication",
      "Error: timeout",
    ]),
    metadata,
  };
}

function storageEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  const ref = project(g);
  if (g.chance(0.3))
    return {
      timestamp: t.iso,
      event_message: "Server listening at http://0.0.0.0:5000",
      metadata: { project: ref, tenantId: ref },
    };
  // pino JSON: msg, level, time; context an array of one object (Vector's transform)
  return {
    timestamp: t.iso,
    event_message: g.pick(["request completed", "incoming request", "Object not found"]),
    metadata: {
      project: ref,
      tenantId: ref,
      level: g.pick(["info", "warn", "error"]),
      timestamp: t.iso,
      reqId: `req-${i}`,
      context: [{ host: "storage", pid: g.int(1, 99) }],
    },
  };
}

function postgrestEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  return {
    timestamp: t.iso,
    project: project(g),
    event_message: g.pick([
      "Attempting to connect to the database...",
      "Connection successful",
      "Listening on port 3000",
      "Schema cache loaded",
    ]),
    metadata: { host: "default" },
  };
}

function pgbouncerEvent(g: Gen, i: number): Json {
  const t = instant(g, i);
  return {
    timestamp: t.iso,
    project: project(g),
    event_message: g.pick([
      "LOG stats: 0 xacts/s",
      "LOG C-0x1: db/app@10.0.0.1:5432 login attempt",
      "WARNING pooler error: no more connections allowed",
    ]),
    metadata: { host: "pgbouncer" },
  };
}

const MAKERS: Record<string, [(g: Gen, i: number) => Json, number]> = {
  "cloudflare.logs.prod": [edgeEvent, 400],
  "postgres.logs": [postgresEvent, 300],
  "deno-relay-logs": [functionEdgeEvent, 250],
  "deno-subhosting-events": [functionEvent, 250],
  "gotrue.logs.prod": [authEvent, 300],
  "realtime.logs.prod": [realtimeEvent, 200],
  "storage.logs.prod.2": [storageEvent, 250],
  "postgREST.logs.prod": [postgrestEvent, 200],
  "pgbouncer.logs.prod": [pgbouncerEvent, 200],
};

/** per source, its events (objects, in generation order, newest first) */
export function shippedEvents(seed = 20250115): Record<string, Json[]> {
  const out: Record<string, Json[]> = {};
  let s = seed;
  for (const [source, [make, n]] of Object.entries(MAKERS)) {
    const g = gen(s++);
    out[source] = Array.from({ length: n }, (_, i) => make(g, i));
  }
  return out;
}
