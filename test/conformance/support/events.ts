import { generateEvents, type SeedSource } from "@qes/server";

/**
 * The events every conformance case runs over, on every backend: realistic events of all nine
 * sources from the deterministic seed generator (two busy projects and a quiet one, spread over
 * eight days so every window of usage.api-counts has data on both sides of its edge), plus
 * hand-made events for the boundaries the generator would only hit by chance.
 */

export const NOW = "2025-01-15T12:00:00Z";
export const NOW_MICROS = 1_736_942_400_000_000n;

const SEED = 20250115;
const SPREAD = { days: 8 };

/** how many generated events each source gets per project */
const GENERATED: Record<SeedSource, Record<string, number>> = {
  // alpha > 1000 rows in edge_logs, so consumer SQL can hit max rows (1000)
  "cloudflare.logs.prod": { alpha: 1150, beta: 300, gamma: 40 },
  "postgres.logs": { alpha: 150, beta: 60, gamma: 10 },
  "deno-relay-logs": { alpha: 120, beta: 40, gamma: 10 },
  "deno-subhosting-events": { alpha: 120, beta: 40, gamma: 10 },
  "gotrue.logs.prod": { alpha: 150, beta: 60, gamma: 10 },
  "realtime.logs.prod": { alpha: 120, beta: 40, gamma: 10 },
  "storage.logs.prod.2": { alpha: 150, beta: 60, gamma: 10 },
  "postgREST.logs.prod": { alpha: 80, beta: 30, gamma: 10 },
  "pgbouncer.logs.prod": { alpha: 60, beta: 20, gamma: 10 },
};

/** `NOW` minus a number of seconds and a number of microseconds, as ISO 8601 with µs */
export function before(seconds: number, micros = 0): string {
  const total = NOW_MICROS - BigInt(seconds) * 1_000_000n - BigInt(micros);
  const ms = Number(total / 1000n);
  const frac = (total % 1_000_000n).toString().padStart(6, "0");
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

function edge(
  id: string,
  timestamp: string,
  project: string,
  path: string,
  opts: { url?: string | null; status?: number; ip?: string; message?: string; extra?: object } = {},
): object {
  const url = opts.url === undefined ? `https://${project}.example.co${path}` : opts.url;
  const ip = opts.ip ?? "198.51.100.23";
  const request: Record<string, unknown> = {
    method: "GET",
    path,
    headers: { x_real_ip: ip, cf_connecting_ip: ip, user_agent: "curl/8.5.0" },
  };
  if (url !== null) request.url = url;
  return {
    id,
    timestamp,
    project,
    event_message: opts.message ?? `GET | ${opts.status ?? 200} | ${ip} | ${url ?? path} | curl/8.5.0`,
    metadata: { request, response: { status_code: opts.status ?? 200 }, ...opts.extra },
  };
}

/** logs.all's time bounds, to the microsecond (project "bounds") */
const BOUNDS_EVENTS = [
  edge("b-1", "2025-01-10T00:00:00.000001Z", "bounds", "/rest/v1/a"),
  edge("b-2", "2025-01-10T00:00:00.000002Z", "bounds", "/rest/v1/a"),
  edge("b-3", "2025-01-10T00:00:10.000005Z", "bounds", "/rest/v1/a"),
  edge("b-4", "2025-01-10T00:00:10.000006Z", "bounds", "/rest/v1/a"),
  // the same instant written with a zone offset and as integer µs
  edge("b-5", "2025-01-10T02:00:20.5+02:00", "bounds", "/rest/v1/b"),
];

/** usage.api-counts: windows, truncation, paths counted twice, rows of zeros (project "usage1") */
const USAGE_EVENTS = [
  edge("u-rest", before(50 * 60), "usage1", "/rest/v1/todos"),
  edge("u-storage", before(49 * 60 + 30), "usage1", "/storage/v1/object/a.png"),
  edge("u-auth-last-us", before(0, 1), "usage1", "/auth/v1/token"),
  edge("u-realtime", before(40 * 60), "usage1", "/realtime/v1/websocket"),
  // one request, two counters
  edge("u-rest-storage", before(40 * 60 - 1), "usage1", "/rest/v1/rpc/storage_size"),
  edge("u-auth-realtime", before(40 * 60 - 2), "usage1", "/auth/v1/realtime_token"),
  // none of the four: a bucket of zeros
  edge("u-functions", before(30 * 60), "usage1", "/functions/v1/hello"),
  // exactly at the start of the hourly and minutely windows: included
  edge("u-window-start", before(3600), "usage1", "/rest/v1/at-start"),
  // one microsecond before them: excluded there, in the daily window
  edge("u-before-window", before(3600, 1), "usage1", "/rest/v1/before-start"),
  edge("u-daily", before(5 * 86_400 + 7 * 3600), "usage1", "/auth/v1/signup"),
  edge("u-daily-start", before(7 * 86_400), "usage1", "/storage/v1/at-daily-start"),
  edge("u-too-old", before(7 * 86_400, 1), "usage1", "/auth/v1/too-old"),
  // no URL (the self-hosted nginx shape): never matches a project pattern
  edge("u-no-url", before(20 * 60), "usage1", "/rest/v1/no-url", { url: null }),
  // the project is matched in the URL, not the project column
  edge("u-other-url", before(20 * 60 - 3), "usage1", "/rest/v1/elsewhere", {
    url: "https://usage2.example.co/rest/v1/elsewhere",
  }),
  edge("u2-rest", before(10 * 60), "usage2", "/rest/v1/todos"),
];

/** wire values (project "wire") */
const WIRE_EVENTS = [
  { id: "w-nometa", timestamp: "2025-01-12T00:00:00Z", project: "wire", event_message: "no metadata" },
  // integer µs timestamps are accepted on load
  {
    id: "w-micros",
    timestamp: 1_736_640_000_123_456,
    project: "wire",
    event_message: "timestamp given as µs",
    metadata: { request: { path: "/rest/v1/w", method: "POST" } },
  },
];
const WIRE_BIG_LINE =
  '{"id":"w-big","timestamp":"2025-01-12T00:00:01.000001Z","project":"wire","event_message":"big","metadata":{"request":{"path":"/rest/v1/big","method":"GET"},"response":{"status_code":200},"counter":9007199254740993,"negative":-9007199254740993,"small":9007199254740991,"ratio":0.25,"flag":true,"tags":["a","b"],"hops":[{"ip":"192.0.2.1","ms":3},{"ip":"192.0.2.2","ms":5}]}}';

/** strings with addresses in many textual forms (project "pii") */
const PII_EVENTS = [
  edge("p-v4", before(100), "pii", "/rest/v1/a", {
    ip: "203.0.113.9",
    message: "client 203.0.113.9 then 10.0.0.1:5432, host=192.168.1.20.",
  }),
  edge("p-v6", before(200), "pii", "/rest/v1/b", {
    ip: "2001:db8:85a3::8a2e:370:7334",
    message: "from [2001:db8::1]:443 via ::ffff:198.51.100.4 and fe80::1 at 12:30:45.123",
  }),
  edge("p-none", before(300), "pii", "/rest/v1/c", {
    ip: "2001:DB8:0:0:8:800:200C:417A",
    message: "version 1.2.3, time 11:59:59, count 255, hex deadbeef",
    extra: { note: "numbers and keys stay", port: 5432, x_ip_count: 2 },
  }),
];

/**
 * Addresses glued to word characters on both sides, and prose that looks like them (project
 * "pii-glued", in the event's `tags`): each text and what redaction makes of it, written from
 * address-pattern.ts's rule, not from an engine's output. An address goes whole or not at all.
 */
export const GLUED_FORMS: [string, string][] = [
  ["srv_2001:db8::1_x", "srv_REDACTED_x"],
  ["host2001:db8::1z", "hostREDACTEDz"],
  ["zz2001:db8::8a2e:370:7334zz", "zzREDACTEDzz"],
  ["a_fe80::1_b", "a_REDACTED_b"],
  ["xfe80::1x", "xREDACTEDx"],
  ["x::1y", "xREDACTEDy"],
  ["X2001:DB8::1Y", "XREDACTEDY"],
  ["x2001%3Adb8%3A%3A1y", "xREDACTEDy"],
  ["a_::ffff:c000:280_b", "a_REDACTED_b"],
  ["fe80::1%3Aeth0", "REDACTEDth0"],
  // a word character is an ASCII one, as in RE2 and JavaScript (PostgreSQL's \y read `é` as one)
  ["éfe80::abcdé", "éREDACTEDé"],
  ["crate::module::fn", "crate::module::fn"],
  ["Interface::Address", "Interface::Address"],
  ["std::vector<int>", "std::vector<int>"],
  ["h2::codec::framed_write", "h2::codec::framed_write"],
  ["sha256::digest", "sha256::digest"],
  ["u8::MAX", "u8::MAX"],
  ["std%3A%3Avector", "std%3A%3Avector"],
];

const GLUED_EVENTS = [
  edge("g-glued", before(400), "pii-glued", "/rest/v1/g", {
    extra: { tags: GLUED_FORMS.map(([text]) => text) },
  }),
];

function generated(): Record<string, string[]> {
  const loads: Record<string, string[]> = {};
  let i = 0;
  for (const [source, perProject] of Object.entries(GENERATED) as [SeedSource, Record<string, number>][]) {
    const lines: string[] = [];
    for (const [project, count] of Object.entries(perProject)) {
      i++;
      for (const line of generateEvents(source, count, SEED + i, NOW_MICROS, {
        spread: SPREAD,
        projects: [project],
      })) {
        lines.push(line);
      }
    }
    loads[source] = lines;
  }
  return loads;
}

/** source name → NDJSON lines, in load order */
export function conformanceLoads(): Record<string, string[]> {
  const loads = generated();
  const handMade = [...BOUNDS_EVENTS, ...USAGE_EVENTS, ...WIRE_EVENTS, ...PII_EVENTS, ...GLUED_EVENTS].map(
    (e) => JSON.stringify(e),
  );
  loads["cloudflare.logs.prod"] = [...loads["cloudflare.logs.prod"]!, ...handMade, WIRE_BIG_LINE];
  return loads;
}
