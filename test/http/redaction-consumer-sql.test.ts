import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { PII_SANDBOX_DIR, querySandbox } from "./support/pii-sandbox.ts";

// Issue 12: on an endpoint with redactPii and sandboxable, consumer SQL took addresses apart
// (SPLIT, SUBSTR, CONCAT, octet arithmetic) and the pass over the finished strings never saw them
// whole. Now what consumer SQL reads from the stored CTEs is redacted inside the engine, so no
// transform has an address to work on. Real HTTP, every backend.

const TOKEN = "redact-sql-token-0123456789abcdef";
const IPV4 = "198.51.100.23";
const IPV6 = "2001:db8:cafe::17";

const event = (id: string, extra: object = {}) =>
  JSON.stringify({
    id,
    timestamp: "2025-01-15T11:59:00Z",
    project: "pii",
    event_message: `GET | 200 | ${IPV4} | https://pii.example.co/rest/v1/x | from [${IPV6}]:443`,
    metadata: {
      request: {
        path: "/rest/v1/x",
        headers: { x_real_ip: IPV4, cf_connecting_ip: IPV6, port: 443 },
        deep: { level1: { level2: { glued: `ip_${IPV4}`, encoded: IPV4.replaceAll(".", "%2E") } } },
      },
      hops: [
        { address: IPV4, note: `first hop ${IPV6}` },
        { address: IPV6, note: "second" },
      ],
      ip_list: [IPV4, IPV6, `x${IPV4}`],
    },
    ...extra,
  });

/**
 * Pieces of the two addresses a transform could leave behind: octets and groups, reversed, as
 * hex, as the 32-bit number. None may appear anywhere in a redacting response.
 */
const PIECES = [
  "198",
  "51.100",
  "100.23",
  "32.001",
  "891",
  "c6336417",
  "c6.33",
  "3325256727",
  "2001",
  "1002",
  "db8",
  "8bd",
  "cafe",
  "efac",
];

const H = `with h as (
  select e.id, hd.x_real_ip as ip, hd.cf_connecting_ip as ip6
  from edge e cross join unnest(e.metadata) m cross join unnest(m.request) r cross join unnest(r.headers) hd
) `;

/** consumer queries that run (200) and, before, returned an address or its pieces */
const TRANSFORMS: Array<[string, string]> = [
  ["split on '.'", `${H}select split(ip, '.') as x from h`],
  ["concat", `${H}select concat('x', ip) as x from h`],
  ["|| glued to a word", `${H}select 'ip_' || ip || '_' as x from h`],
  ["substr pieces", `${H}select substr(ip, 1, 4) as a, substr(ip, 5) as b from h`],
  ["substring pieces", `${H}select substring(ip6, 1, 4) as a, substring(ip6, 6, 3) as b from h`],
  [
    "octet arithmetic to INT64",
    `${H}select safe_cast(split(ip, '.')[safe_offset(0)] as int64) * 16777216 + safe_cast(split(ip, '.')[safe_offset(1)] as int64) * 65536 + safe_cast(split(ip, '.')[safe_offset(2)] as int64) * 256 + safe_cast(split(ip, '.')[safe_offset(3)] as int64) as n from h`,
  ],
  [
    "each octet as INT64",
    `${H}select safe_cast(split(ip, '.')[safe_offset(0)] as int64) + 1 as a, safe_cast(split(ip, '.')[safe_offset(3)] as int64) as d from h`,
  ],
  ["reverse", `${H}select reverse(ip) as x, reverse(ip6) as y from h`],
  ["replace of the dots", `${H}select replace(ip, '.', '-') as x, replace(ip6, ':', '_') as y from h`],
  ["format", `${H}select format('%s|%s', ip, ip6) as x from h`],
  ["regexp_extract of the first octet", `${H}select regexp_extract(ip, r'^(\\d+)') as x from h`],
  ["regexp_replace of the dots", `${H}select regexp_replace(ip, r'\\.', ' dot ') as x from h`],
  ["array_to_string of split", `${H}select array_to_string(split(ip, '.'), '-') as x from h`],
  [
    "string_agg over characters",
    `${H}select string_agg(c, '|') as x from h cross join unnest(split(ip, '')) as c`,
  ],
  [
    "string_agg over characters in reverse",
    `${H}select string_agg(c, '' order by o desc) as x from h cross join unnest(split(ip6, '')) as c with offset o`,
  ],
  ["upper and lower", `${H}select upper(ip6) as x, lower(ip) as y from h`],
  ["left and right", `${H}select left(ip, 3) as a, right(ip, 2) as b, left(ip6, 4) as c from h`],
  ["trim of digits", `${H}select ltrim(ip, '0123456789') as x, rtrim(ip6, '0123456789abcdef:') as y from h`],
  ["strpos of the dots", `${H}select strpos(ip, '.') as x from h`],
  ["blind probe with starts_with", `${H}select countif(starts_with(ip, '198.')) as n from h`],
  ["blind probe with a comparison", `${H}select countif(substr(ip, 1, 3) = '198') as n from h`],
  [
    "json_extract_scalar of built JSON",
    `${H}select json_extract_scalar(concat('{"ip":"', ip, '"}'), '$.ip') as x from h`,
  ],
  ["a whole record (JSON text)", "select metadata as x from edge"],
  [
    "json_extract on the record's text",
    "select json_extract(array_to_string([cast(metadata[0].request[0].headers[0].x_real_ip as string)], ''), '$') as x from edge",
  ],
  [
    "json_value of a nested field",
    "select json_value(concat('{\"a\":\"', metadata[0].request[0].headers[0].x_real_ip, '\"}'), '$.a') as x from edge",
  ],
  [
    "records of N unnested",
    "select h.address as a, h.note as n from edge cross join unnest(metadata[0].hops) as h",
  ],
  [
    "array of strings unnested",
    "select split(s, '.') as x from edge cross join unnest(metadata[0].ip_list) as s",
  ],
  [
    "glued and percent-encoded forms",
    "select metadata[0].request[0].deep[0].level1[0].level2[0].glued as a, replace(metadata[0].request[0].deep[0].level1[0].level2[0].encoded, '%2E', '.') as b from edge",
  ],
  ["event_message split on spaces", "select split(event_message, ' ') as x from edge"],
  ["array_agg of addresses", `${H}select array_agg(ip) as a, array_agg(ip6) as b from h`],
  ["max and min", `${H}select max(ip) as a, min(ip6) as b from h`],
  [
    "coalesce, ifnull, case",
    `${H}select coalesce(ip, 'x') as a, ifnull(ip6, 'y') as b, case when ip is not null then concat(ip, '.') end as c from h`,
  ],
  ["the stored CTE's plain columns", "select ip, ip6 from headers"],
  [
    "a list the stored query built with SPLIT",
    "select pair, array_to_string(pair, '') as joined, split(pair[offset(0)], '.') as octets, note from parts",
  ],
  ["a set operation whose first branch is NULL", "select any_text from mixed where any_text is not null"],
  ["a scalar subquery", "select (select max(ip) from headers) as x from edge"],
  [
    "an IN subquery probe",
    "select count(*) as n from edge where '198.51.100.23' in (select ip from headers)",
  ],
  [
    "lag over the addresses",
    "select lag(ip) over (order by id) as a, lead(ip6) over (order by id) as b from headers",
  ],
];

/** not in the catalogue: refused, so nothing to recover either */
const REFUSED = [
  `${H}select translate(ip, '.', '-') as x from h`,
  `${H}select to_hex(cast(ip as bytes)) as x from h`,
  `${H}select to_json_string(ip) as x from h`,
];

describe.each(BACKENDS)("consumer SQL on a redacting endpoint, on $name", (fixture) => {
  let served: ServedFixture;

  beforeAll(async () => {
    served = await serveFixture(
      fixture,
      { "cloudflare.logs.prod": [event("pii-1"), event("pii-2")] },
      {
        QES_TEST_NOW: "2025-01-15T12:00:00Z",
        QES_API_KEYS: TOKEN,
        QES_CACHE_MAX_ENTRIES: "0",
        QES_ENDPOINTS_DIR: PII_SANDBOX_DIR,
      },
    );
  });
  afterAll(async () => {
    await served?.close();
  });

  const query = (sql: string) => querySandbox(served.url, TOKEN, sql);

  it.each(TRANSFORMS)("%s: no address or piece of one", async (_name, sql) => {
    const { status, text } = await query(sql);
    expect(status, text.slice(0, 300)).toBe(200);
    expect(JSON.parse(text).result.length, text.slice(0, 300)).toBeGreaterThan(0);
    for (const piece of PIECES)
      expect(text.toLowerCase(), `${piece} in ${text.slice(0, 400)}`).not.toContain(piece);
  });

  it("reads REDACTED where the addresses were, and keeps everything else", async () => {
    const { status, text } = await query(
      `${H}select split(ip, '.') as parts, concat('x', ip) as glued, id from h order by id`,
    );
    expect(status).toBe(200);
    expect(JSON.parse(text).result).toEqual([
      { parts: ["REDACTED"], glued: "xREDACTED", id: "pii-1" },
      { parts: ["REDACTED"], glued: "xREDACTED", id: "pii-2" },
    ]);
    const whole = await query("select metadata from edge order by id limit 1");
    const meta = JSON.parse(whole.text).result[0].metadata[0];
    expect(meta.request[0].headers[0]).toEqual({
      x_real_ip: "REDACTED",
      cf_connecting_ip: "REDACTED",
      port: 443,
    });
    expect(meta.request[0].deep[0].level1[0].level2[0]).toEqual({
      glued: "ip_REDACTED",
      encoded: "REDACTED",
    });
    expect(meta.hops).toEqual([
      { address: "REDACTED", note: "first hop REDACTED" },
      { address: "REDACTED", note: "second" },
    ]);
    expect(meta.ip_list).toEqual(["REDACTED", "REDACTED", "xREDACTED"]);
    expect(meta.request[0].path).toBe("/rest/v1/x");
  });

  it("an ordered LIMIT over a stored CTE is cut at ties the same way, and redacted", async () => {
    // both events share their timestamp: LIMIT 1 ties, broken by the selected columns (DESIGN.md §3)
    const message = "GET | 200 | REDACTED | https://pii.example.co/rest/v1/x | from [REDACTED]:443";
    for (const order of ["desc", "asc"]) {
      const { status, text } = await query(
        `select id, event_message from edge order by timestamp ${order} limit 1`,
      );
      expect(status, text).toBe(200);
      expect(JSON.parse(text).result).toEqual([{ id: "pii-1", event_message: message }]);
    }
    const chained = await query(
      "with e as (select id, timestamp, metadata from edge where id != 'x') select upper(id) as u, metadata from e order by timestamp desc limit 1",
    );
    expect(chained.status, chained.text).toBe(200);
    const row = JSON.parse(chained.text).result[0];
    expect(row.u).toBe("PII-1");
    expect(row.metadata[0].request[0].headers[0].x_real_ip).toBe("REDACTED");
    for (const piece of PIECES) expect(chained.text.toLowerCase()).not.toContain(piece);
  });

  it.each(REFUSED)("a function outside the catalogue is refused: %s", async (sql) => {
    const { status, text } = await query(sql);
    expect(status, text).toBe(422);
    for (const piece of PIECES) expect(text.toLowerCase()).not.toContain(piece);
  });

  it("still answers the stored query itself, redacted by the pass over the result", async () => {
    const res = await fetch(`${served.url}/api/endpoints/query/pii.sandbox?project=pii`, {
      headers: { "X-API-KEY": TOKEN },
    });
    const body = (await res.json()) as { result: Array<{ event_message: string }> };
    expect(res.status).toBe(200);
    expect(body.result[0]!.event_message).toBe(
      "GET | 200 | REDACTED | https://pii.example.co/rest/v1/x | from [REDACTED]:443",
    );
  });
});
