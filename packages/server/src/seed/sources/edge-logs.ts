import type { Prng } from "../prng.ts";
import {
  CLIENT_INFO,
  COUNTRIES,
  EDGE_REGIONS,
  type EventBody,
  type EventContext,
  USER_AGENTS,
} from "./event-context.ts";

/** API areas of the edge and how often each is requested */
const AREAS = [
  ["rest", 40],
  ["storage", 14],
  ["auth", 15],
  ["realtime", 8],
  ["functions", 8],
  ["graphql", 5],
  ["pg", 3],
  ["other", 7],
] as const;

const TABLES = [
  "todos",
  "profiles",
  "messages",
  "orders",
  "products",
  "countries",
  "rpc/search_items",
] as const;
const BUCKETS = ["avatars", "public-assets", "uploads"] as const;
const FUNCTIONS = ["hello-world", "stripe-webhook", "send-email", "resize-image"] as const;

interface Route {
  method: string;
  path: string;
  search: string;
  status: number;
}

function route(rng: Prng): Route {
  const area = rng.weighted(AREAS);
  const method = rng.weighted([
    ["GET", 70],
    ["POST", 15],
    ["PATCH", 5],
    ["DELETE", 3],
    ["OPTIONS", 6],
    ["HEAD", 1],
  ] as const);
  const status = rng.weighted([
    [method === "POST" ? 201 : 200, 78],
    [204, 4],
    [304, 3],
    [400, 3],
    [401, 4],
    [403, 1],
    [404, 4],
    [406, 1],
    [500, 1],
    [502, 0.5],
    [503, 0.5],
  ] as const);
  switch (area) {
    case "rest": {
      const table = rng.pick(TABLES);
      const search = table.startsWith("rpc/")
        ? ""
        : rng.pick(["?select=*", "?select=id,name&limit=10", "?id=eq.42", ""]);
      return { method, path: `/rest/v1/${table}`, search, status };
    }
    case "storage": {
      const bucket = rng.pick(BUCKETS);
      const kind = rng.pick(["object/public", "object/sign", "object", "bucket"]);
      const path =
        kind === "bucket" ? "/storage/v1/bucket" : `/storage/v1/${kind}/${bucket}/${rng.hex(8)}.png`;
      return { method, path, search: "", status };
    }
    case "auth": {
      const [path, search] = rng.pick([
        ["/auth/v1/token", "?grant_type=password"],
        ["/auth/v1/token", "?grant_type=refresh_token"],
        ["/auth/v1/user", ""],
        ["/auth/v1/logout", ""],
        ["/auth/v1/signup", ""],
        ["/auth/v1/otp", ""],
      ] as const);
      return { method: path === "/auth/v1/user" ? "GET" : "POST", path, search, status };
    }
    case "realtime":
      return {
        method: "GET",
        path: "/realtime/v1/websocket",
        search: "?apikey=<redacted>&vsn=1.0.0",
        status: rng.chance(0.9) ? 101 : 403,
      };
    case "functions":
      return {
        method: rng.pick(["POST", "OPTIONS", "GET"]),
        path: `/functions/v1/${rng.pick(FUNCTIONS)}`,
        search: "",
        status,
      };
    case "graphql":
      return { method: "POST", path: "/graphql/v1", search: "", status };
    case "pg":
      return { method: "GET", path: rng.pick(["/pg/meta/tables", "/pg/query"]), search: "", status };
    default:
      return {
        method: "GET",
        path: rng.pick(["/", "/favicon.ico", "/robots.txt", "/analytics/v1/logs"]),
        search: "",
        status,
      };
  }
}

/** `cloudflare.logs.prod`: the edge/proxy request log in the hosted Cloudflare-worker shape */
export function edgeLogEvent({ rng, project, micros }: EventContext): EventBody {
  const r = route(rng);
  const host = `${project}.supabase.co`;
  const url = `https://${host}${r.path}${r.search}`;
  const ip = rng.ip(0.3);
  const agent = rng.pick(USER_AGENTS);
  const ray = `${rng.hex(16)}-${rng.pick(["SJC", "FRA", "LHR", "SIN", "GRU"])}`;
  const [country, city, colo, continent, latitude, longitude] = rng.pick(COUNTRIES);
  const browser = agent.startsWith("Mozilla");
  const length = r.status === 204 || r.status === 101 ? 0 : rng.int(2, 48_000);
  const headers: Record<string, unknown> = {
    accept: browser ? "application/json, text/plain, */*" : "*/*",
    cf_connecting_ip: ip,
    cf_ipcountry: country,
    cf_ray: ray,
    host,
    user_agent: agent,
    x_forwarded_proto: "https",
    x_real_ip: ip,
  };
  if (browser)
    headers.referer = rng.pick([
      "https://app.example.com/",
      "http://localhost:3000/",
      "https://supabase.com/",
    ]);
  if (browser || agent === "node") headers.x_client_info = rng.pick(CLIENT_INFO);
  const cf: Record<string, unknown> = {
    asOrganization: rng.pick([
      "Deutsche Telekom AG",
      "Comcast Cable",
      "Amazon.com",
      "Google LLC",
      "Vodafone",
    ]),
    asn: rng.int(1000, 64000),
    botManagement: {
      corporateProxy: false,
      score: rng.int(1, 99),
      staticResource: false,
      verifiedBot: false,
      ja3Hash: rng.hex(32),
    },
    city,
    clientTrustScore: rng.int(1, 99),
    colo,
    continent,
    country,
    httpProtocol: rng.pick(["HTTP/1.1", "HTTP/2", "HTTP/3"]),
    latitude,
    longitude,
    tlsCipher: "AEAD-AES128-GCM-SHA256",
    tlsVersion: "TLSv1.3",
  };
  return {
    project,
    event_message: `${r.method} | ${r.status} | ${ip} | ${ray} | ${url} | ${agent}`,
    metadata: {
      logflare_worker: { worker_id: rng.hex(6).toUpperCase() },
      request: {
        method: r.method,
        path: r.path,
        url,
        host,
        protocol: "https:",
        search: r.search,
        headers,
        cf,
      },
      response: {
        status_code: r.status,
        origin_time: rng.int(3, r.status >= 500 ? 30_000 : 900),
        headers: {
          cf_cache_status: r.path.startsWith("/storage")
            ? rng.pick(["HIT", "MISS", "REVALIDATED"])
            : "DYNAMIC",
          cf_ray: ray,
          content_length: String(length),
          content_type:
            r.path.startsWith("/storage") && r.method === "GET" ? "image/png" : "application/json",
          date: new Date(Number(micros) / 1000).toUTCString(),
          sb_gateway_version: "1",
          x_sb_edge_region: rng.pick(EDGE_REGIONS),
        },
      },
    },
  };
}
