import { type Backend, redactRows, redactText } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";

// Redaction inside each engine (DESIGN.md §11) against the pass over the result (redactText, the
// address pattern read by JavaScript), on texts chosen to trip an engine that takes a shortcut:
// PostgreSQL runs the whole pattern only from the first run of address characters holding `::` or
// five `group:` (IPV6_HINT_PATTERN) to the end of the last one, and the IPv4 form alone on the
// rest, so the texts sit on both sides of those cuts — IPv4 next to what is almost an IPv6 hint,
// hints without an address, IPv4 tails of IPv6, encoded colons, word characters glued on and
// non-ASCII neighbours, several runs with hints.

const TRICKY = [
  "1.2.3.4",
  "a 1.2.3.4 b",
  "10.0.0.1.443 > 10.0.0.2.80",
  "999.1.1.1",
  "1.2.3.4.5",
  "ip_10.0.0.1 x10.0.0.1 10.0.0.1_",
  "10%2E0%2E0%2E1 and 10%2e0%2e0%2e1",
  "host%3D10%2E0%2E0%2E1%26x",
  "1.2.3.4:80 and 12:34:56 at 10.0.0.1",
  "1:2:3:4 1.2.3.4",
  "a:b:c:d:1.2.3.4",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:1.2.3.4",
  "1:2:3:4:5:6:1.2.3.4",
  "00:1a:2b:3c:4d:5e then 10.0.0.1",
  "2001:db8",
  "::",
  "use a :: b near 1.2.3.4",
  "std::vector<int> 192.0.2.1",
  "crate::module::fn",
  "h2::codec 1.2.3.4",
  "::1.2.3.4",
  "1.2.3.4::1",
  "::ffff:192.168.0.1 and 10.0.0.1",
  "64:ff9b::192.0.2.33",
  "[::1]:8080",
  "fe80::1%eth0]:80",
  "fe80::1%1",
  "fe80::1%3Aeth0",
  "2001%3Adb8%3A%3A1",
  "x%3A%3A1y",
  "x%3a:1y",
  "xfe80%3A%3A x",
  "std%3A%3Avector 1.2.3.4",
  "srv_2001:db8::1_x",
  "a_fe80::1_b",
  "x::1y",
  "X2001:DB8::1Y",
  "zz2001:db8::8a2e:370:7334zz",
  "éfe80::abcdé",
  "é1.2.3.4é",
  "é::1 ü2001:db8::1ü",
  "ab:cd:ef:01:23:é",
  "line one 10.1.2.3\nline two 2001:db8::2\tend",
  "GET | 200 | 2a02:c7c:9e98:563::c846 | d16ce21d35ef46e8-SJC | https://x.supabase.co/a?b=1",
  "GET | 200 | 185.13.16.177 | 0009790478fe3621-FRA | https://x.supabase.co/a?b=1",
  // IPv6 hints in several runs of address characters, IPv4 before, between and after them
  "1.2.3.4 then 2001:db8::1, 5.6.7.8 and [fe80::2]:80 then 9.9.9.9",
  "10.0.0.1 ab12:34:56:78:9a:bc 10.0.0.2",
  'x10.0.0.1y "2a02:c7c:9e98:563::c846" é10.0.0.3é',
  "ab1.2.3.4:fe80::1 1.1.1.1",
  "fe80::1 at the start, 1.2.3.4 at the end: ::1",
  "1.2.3.4 in the middle: x::1y",
  "crate::module 1.2.3.4 std::vector 5.6.7.8",
  "",
  "plain text",
];

/** texts of address pieces glued together, seeded: hints and IPv4 forms side by side */
function gluedTexts(count: number): string[] {
  const pieces = [
    ...["1", "0", "10", "255", "fe80", "db8", "2001", "a", "ABCD", "ffff", "1.2.3.4", "9.9.9.9"],
    ...[":", ":", "::", "%3A", "%3a", "%2E", ".", ".", "%25", "%eth0", "%1", "%"],
    ...["x", "_", "-", "é", " ", "std", "h2", "::ffff:"],
  ];
  let seed = 7;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: 2 + next(10) }, () => pieces[next(pieces.length)]).join(""),
  );
}

const TEXTS = [...TRICKY, ...gluedTexts(200)];
const id = (i: number) => `t${String(i).padStart(4, "0")}`;
const STORED =
  "with texts as (select id, event_message, metadata from `redaction.texts`) select id from texts";
const CONSUMER = "select id, event_message as m, metadata from texts order by id";

describe.each(BACKENDS)("redaction inside $name on tricky texts", (fixture) => {
  let handle: BackendHandle;
  let backend: Backend;
  beforeAll(async () => {
    handle = await fixture.create();
    backend = handle.backend;
    await backend.load(
      "redaction.texts",
      TEXTS.map((text, i) =>
        JSON.stringify({
          id: id(i),
          timestamp: "2025-01-15T10:00:00Z",
          event_message: text,
          metadata: { text, list: [text, `via ${text}`] },
        }),
      ),
    );
  });
  afterAll(async () => handle?.dispose());

  it("replaces what the pass over the result replaces, in strings and in records", async () => {
    const plain = await runSql(backend, STORED, { consumerSql: CONSUMER });
    const redacted = await runSql(backend, STORED, { consumerSql: CONSUMER, redact: true });
    expect(plain.map((r) => r.m)).toEqual(TEXTS);
    expect(redacted.map((r) => r.m)).toEqual(TEXTS.map(redactText));
    expect(redacted).toEqual(redactRows(plain));
  });
});
