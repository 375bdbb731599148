/**
 * Events of the HTTP tests, placed before the pinned now (`TEST_NOW`) so every usage window
 * holds some.
 */
import { TEST_NOW } from "./in-process.ts";

export function before(seconds: number): string {
  return new Date(Date.parse(TEST_NOW) - seconds * 1000).toISOString();
}

function edge(id: string, secondsBefore: number, project: string, path: string, ip = "198.51.100.1"): string {
  const url = `https://${project}.example.co${path}`;
  return JSON.stringify({
    id,
    timestamp: before(secondsBefore),
    project,
    event_message: `GET | 200 | ${ip} | ${url}`,
    metadata: {
      request: { method: "GET", path, url, headers: { x_real_ip: ip } },
      response: { status_code: 200 },
    },
  });
}

/** edge events of a few projects, spread over the last day */
export const EDGE_EVENTS: string[] = [
  edge("e-alpha-1", 30, "alpha", "/rest/v1/todos"),
  edge("e-alpha-2", 90, "alpha", "/storage/v1/object/a.png"),
  edge("e-alpha-3", 1800, "alpha", "/auth/v1/token"),
  edge("e-alpha-4", 7200, "alpha", "/realtime/v1/websocket"),
  edge("e-beta-1", 60, "beta", "/rest/v1/todos"),
  edge("e-gamma-1", 120, "gamma", "/rest/v1/items"),
  edge("e-delta-1", 240, "delta", "/auth/v1/user"),
];

/**
 * Text forms of IP addresses, each of which must come back as `REDACTED` (with whatever
 * surrounds the address itself kept): the value, and what it must become.
 */
export const IP_FORMS: [string, string][] = [
  ["203.0.113.7", "REDACTED"],
  ["0.0.0.0", "REDACTED"],
  ["255.255.255.255", "REDACTED"],
  ["10.0.0.1:8080", "REDACTED:8080"],
  ["http://192.168.1.10/path", "http://REDACTED/path"],
  ["https://192.168.1.10:8443/x?y=1", "https://REDACTED:8443/x?y=1"],
  ["for=198.51.100.23, 203.0.113.9", "for=REDACTED, REDACTED"],
  ["connection from 198.51.100.4.", "connection from REDACTED."],
  ["(198.51.100.5)", "(REDACTED)"],
  ["ip=198.51.100.6&a=1", "ip=REDACTED&a=1"],
  ["host:198.51.100.7", "host:REDACTED"],
  ["010.000.000.001", "REDACTED"],
  ["192.0.2.0/24", "REDACTED/24"],
  ["url=http%3A%2F%2F203.0.113.60%3A8080%2F", "url=http%3A%2F%2FREDACTED%3A8080%2F"],
  ["::1", "REDACTED"],
  ["1::", "REDACTED"],
  ["2001:db8::1", "REDACTED"],
  ["2001:0db8:0000:0000:0000:ff00:0042:8329", "REDACTED"],
  ["2001:DB8::FF00:42:8329", "REDACTED"],
  ["2001:db8:85a3::8a2e:370:7334", "REDACTED"],
  ["1:2:3:4:5:6:7:8", "REDACTED"],
  ["::ffff:1.2.3.4", "REDACTED"],
  ["::FFFF:c000:0280", "REDACTED"],
  ["64:ff9b::192.0.2.33", "REDACTED"],
  ["::ffff:10.0.0.1:5000", "REDACTED:5000"],
  ["fe80::1%eth0", "REDACTED"],
  ["fe80::1ff:fe23:4567:890a%en0", "REDACTED"],
  ["[::1]:443", "[REDACTED]:443"],
  ["[2001:db8::1]:8080", "[REDACTED]:8080"],
  ["http://[2001:db8::2]/index.html", "http://[REDACTED]/index.html"],
  ["http://[fe80::1%25eth0]:80/", "http://[REDACTED]:80/"],
  ["%5B2001:db8::5%5D", "%5BREDACTED%5D"],
  ["ip:2001:db8::6", "ip:REDACTED"],
  ["2001:db8::1/64", "REDACTED/64"],
  ["connect to 2001:db8::9: refused", "connect to REDACTED: refused"],
  ["<2001:db8::7>, 2001:db8::8.", "<REDACTED>, REDACTED."],
  ['{"ip":"203.0.113.50","v6":"2001:db8::50"}', '{"ip":"REDACTED","v6":"REDACTED"}'],
  // glued to word characters and percent-encoded (issue 12): an address inside a word, or a
  // longer dotted run, is still an address (tcpdump writes `10.0.0.1.443`)
  ["ip_10.0.0.1", "ip_REDACTED"],
  ["x10.0.0.1", "xREDACTED"],
  ["10.0.0.1_", "REDACTED_"],
  ["a_fe80::1", "a_REDACTED"],
  ["10%2E0%2E0%2E1", "REDACTED"],
  ["v1.2.3.4", "vREDACTED"],
  ["1.2.3.4.5", "REDACTED.5"],
  ["999.1.1.1", "9REDACTED"],
  // glued on both sides: whole, never the network prefix left behind (`srv_2001:REDACTED_x`)
  ["srv_2001:db8::1_x", "srv_REDACTED_x"],
  ["a_fe80::1_b", "a_REDACTED_b"],
];

/** things that look like addresses and are not: they must come back unchanged */
export const NEAR_MISSES: string[] = [
  "Chrome/120.0.6099.109",
  "256.256.256.256",
  "1.2.3",
  "3.14159",
  "2025.01.15",
  "00:1a:2b:3c:4d:5e",
  "00-1A-2B-3C-4D-5E",
  "12:34:56",
  "12:34:56.789",
  "2025-01-15T12:34:56.123456Z",
  "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19",
  "use a :: b",
  "std::vector<int>",
  "crate::module::fn",
  "h2::codec::framed_write",
  "sha256::digest",
  "16:9",
  "2001:db8",
  "deadbeefcafebabe",
];

/**
 * One edge event of project `pii` whose metadata holds every form and near-miss at several
 * depths: plain strings, arrays of strings, arrays of records, records in records. Keys that
 * look like addresses and numbers stay as they are.
 */
export function piiEvent(): string {
  const forms = Object.fromEntries(IP_FORMS.map(([text], i) => [`form_${i}`, text]));
  const near = Object.fromEntries(NEAR_MISSES.map((text, i) => [`near_${i}`, text]));
  return JSON.stringify({
    id: "pii-1",
    timestamp: before(10),
    project: "pii",
    event_message: "GET | 200 | 203.0.113.7 | https://pii.example.co/rest/v1/x | from [2001:db8::1]:443",
    metadata: {
      request: {
        path: "/rest/v1/x",
        headers: { x_real_ip: "203.0.113.7", cf_connecting_ip: "2001:db8::1", port: 443 },
        deep: { level1: { level2: { ...forms, ...near } } },
      },
      ip_list: IP_FORMS.map(([text]) => text),
      near_list: NEAR_MISSES,
      hops: [
        { address: "198.51.100.1", note: "first hop 12:34:56" },
        { address: "fe80::1%eth0", note: "v1.2.3.4" },
      ],
      numbers: { status_code: 200, bytes: 1234, ratio: 1.5 },
      by_address: { "203.0.113.99": "key that looks like an address", "2001:db8::99": 2 },
    },
  });
}

export const PII_EVENTS = [piiEvent()];

/**
 * 1,200 requests of project `alpha`, a second apart before now: enough rows that a three- or
 * four-way cross join of them runs for seconds (the admission attacks' expensive query)
 */
export const FLOOD_EVENTS: string[] = Array.from({ length: 1200 }, (_, i) =>
  JSON.stringify({
    id: `flood-${i}`,
    timestamp: before(60 + i),
    project: "alpha",
    event_message: `GET /rest/v1/f${i}`,
    metadata: { request: { path: `/rest/v1/f${i}`, url: `https://alpha.example.co/rest/v1/f${i}` } },
  }),
);
