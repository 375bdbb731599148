import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IP_FORMS, NEAR_MISSES, PII_EVENTS } from "./support/events.ts";
import { call, type HttpServer, startHttpServer, TOKEN } from "./support/in-process.ts";
import { everyStore, type Store, unique } from "./support/stores.ts";

/**
 * PII redaction over HTTP on a real store of every backend with the Redis cache: every IP form in
 * nested metadata becomes REDACTED, near-misses stay, each header name switches it on, nothing
 * switches it off, a redacting request is never served the unredacted bytes of the cache, and
 * consumer SQL reads every form already redacted inside the engine (issue 12).
 */
const LOADS = { "cloudflare.logs.prod": PII_EVENTS };
const STORES = everyStore(LOADS);

type Row = { id: string; event_message: string; metadata: any[] };
const level2 = (row: Row) => row.metadata[0].request[0].deep[0].level1[0].level2[0];
/** by characters (code points), as BigQuery's REVERSE */
const reversed = (text: string) => [...text].reverse().join("");

describe.each(STORES)("PII redaction on %s", (_name, open) => {
  let store: Store;
  let server: HttpServer;

  beforeAll(async () => {
    store = await open();
    server = await startHttpServer(store.backend, {
      QES_REDIS_URL: "redis://127.0.0.1:6379",
      QES_REDIS_PREFIX: `${unique("qes_redact")}:`,
    });
  });
  afterAll(async () => {
    await server?.close();
    await store?.dispose();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    call(`${server.url}${path}`, { headers: { "X-API-KEY": TOKEN, ...headers } });

  it("leaves rows untouched without the header", async () => {
    const res = await get("/api/endpoints/query/logs.all?project=pii");
    expect(res.status).toBe(200);
    const row = res.body.result[0] as Row;
    expect(row.event_message).toContain("203.0.113.7");
    expect(level2(row).form_0).toBe(IP_FORMS[0]?.[0]);
  });

  it(`redacts all ${IP_FORMS.length} IP forms at every depth and keeps ${NEAR_MISSES.length} near-misses, keys and numbers`, async () => {
    expect(IP_FORMS.length).toBeGreaterThanOrEqual(30);
    expect(NEAR_MISSES.length).toBeGreaterThanOrEqual(10);
    const res = await get("/api/endpoints/query/logs.all?project=pii", { "QES-ENDPOINT-REDACT-PII": "true" });
    expect(res.status).toBe(200);
    const row = res.body.result[0] as Row;
    expect(row.event_message).toBe(
      "GET | 200 | REDACTED | https://pii.example.co/rest/v1/x | from [REDACTED]:443",
    );
    const meta = row.metadata[0];
    const nested = level2(row);
    IP_FORMS.forEach(([, redacted], i) => {
      expect(nested[`form_${i}`], `form ${i}`).toBe(redacted);
    });
    NEAR_MISSES.forEach((text, i) => {
      expect(nested[`near_${i}`], `near-miss ${i}`).toBe(text);
    });
    expect(meta.ip_list).toEqual(IP_FORMS.map(([, redacted]) => redacted));
    expect(meta.near_list).toEqual(NEAR_MISSES);
    expect(meta.hops).toEqual([
      { address: "REDACTED", note: "first hop 12:34:56" },
      { address: "REDACTED", note: "vREDACTED" },
    ]);
    expect(meta.request[0].headers[0]).toEqual({
      x_real_ip: "REDACTED",
      cf_connecting_ip: "REDACTED",
      port: 443,
    });
    expect(meta.numbers[0]).toEqual({ status_code: 200, bytes: 1234, ratio: 1.5 });
    expect(meta.by_address[0]).toEqual({
      "203.0.113.99": "key that looks like an address",
      "2001:db8::99": 2,
    });
    // no address of any form survives anywhere in the bytes
    const values = res.text.replaceAll('"203.0.113.99":', "").replaceAll('"2001:db8::99":', "");
    for (const address of ["203.0.113", "198.51.100", "192.168.1.10", "2001:db8::", "fe80::1", "::ffff"]) {
      expect(values).not.toContain(address);
    }
    expect(row.id).toBe("pii-1");
  });

  it.each(["QES-ENDPOINT-REDACT-PII", "SVC-ENDPOINT-REDACT-PII", "LF-ENDPOINT-REDACT-PII"])(
    "switches on with %s: true (any case of name and value)",
    async (name) => {
      for (const [header, value] of [
        [name, "true"],
        [name.toLowerCase(), "TRUE"],
      ] as const) {
        const res = await get("/api/endpoints/query/logs.all?project=pii", { [header]: value });
        expect(res.status).toBe(200);
        expect(res.body.result[0].event_message).not.toContain("203.0.113.7");
        expect(res.text).toContain("REDACTED");
      }
      const other = await get("/api/endpoints/query/logs.all?project=pii", { [name]: "yes" });
      expect(other.text).toContain("203.0.113.7");
    },
  );

  it("cannot be switched off on an endpoint that redacts", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "QES-ENDPOINT-REDACT-PII": "false" },
      { "SVC-ENDPOINT-REDACT-PII": "false", "LF-ENDPOINT-REDACT-PII": "0" },
      { "QES-ENDPOINT-REDACT-PII": "true" },
    ];
    for (const headers of variants) {
      const res = await get("/api/endpoints/query/pii.always?project=pii", headers);
      expect(res.status).toBe(200);
      expect(res.text).toContain("REDACTED");
      expect(res.text).not.toContain("203.0.113.7");
      expect(res.text).not.toContain("2001:db8::1");
    }
  });

  it("is switched on by a header given twice, whatever the other value", async () => {
    // a repeated header reaches the server as one value joined by ", "
    for (const values of [
      ["true", "true"],
      ["false", "TRUE"],
      ["yes", " true "],
    ]) {
      const headers: [string, string][] = [
        ["X-API-KEY", TOKEN],
        ...values.map((v): [string, string] => ["QES-ENDPOINT-REDACT-PII", v]),
      ];
      const res = await call(`${server.url}/api/endpoints/query/logs.all?project=pii`, { headers });
      expect(res.status).toBe(200);
      expect(res.text, values.join("|")).not.toContain("203.0.113.7");
      expect(res.text).toContain("REDACTED");
    }
  });

  it("never serves a redacting request the unredacted bytes of the cache, nor the other way round", async () => {
    const plain1 = await get("/api/endpoints/query/pii.cached?project=pii");
    expect(plain1.headers.get("x-cache")).toBe("MISS");
    expect(plain1.text).toContain("203.0.113.7");
    const redacted1 = await get("/api/endpoints/query/pii.cached?project=pii", {
      "SVC-ENDPOINT-REDACT-PII": "true",
    });
    expect(redacted1.headers.get("x-cache")).toBe("MISS");
    expect(redacted1.text).not.toContain("203.0.113.7");
    const redacted2 = await get("/api/endpoints/query/pii.cached?project=pii", {
      "LF-ENDPOINT-REDACT-PII": "true",
    });
    expect(redacted2.headers.get("x-cache")).toBe("HIT");
    expect(redacted2.text).toBe(redacted1.text);
    const plain2 = await get("/api/endpoints/query/pii.cached?project=pii", {
      "QES-ENDPOINT-REDACT-PII": "no",
    });
    expect(plain2.headers.get("x-cache")).toBe("HIT");
    expect(plain2.text).toBe(plain1.text);
  });

  it("redacts rows of consumer SQL too", async () => {
    const sql = encodeURIComponent("select id, event_message from t");
    const stored = await get(`/api/endpoints/query/pii.cached?project=pii&sql=${sql}`);
    // pii.cached has no CTE named t: the consumer query is refused, not run unredacted
    expect(stored.status).toBe(422);
    const logsSql = encodeURIComponent("select id, event_message from edge_logs");
    const res = await get(`/api/endpoints/query/logs.all?project=pii&sql=${logsSql}`, {
      "QES-ENDPOINT-REDACT-PII": "true",
    });
    expect(res.status).toBe(200);
    expect(res.body.result[0].event_message).toContain("REDACTED");
    expect(res.text).not.toContain("203.0.113.7");
  });

  it(`gives consumer SQL all ${IP_FORMS.length} IP forms already redacted: reversed, none is whole again`, async () => {
    // REVERSE hides an address from the pass over the result: only the engine's redaction of what
    // the consumer reads can have caught it
    const forms = IP_FORMS.map((_, i) => `reverse(l2.form_${i}) as f${i}`);
    // near-misses as they are: reversed, some read as addresses (`h2::codec` → `cedoc::2h`)
    const near = NEAR_MISSES.map((_, i) => `l2.near_${i} as n${i}`);
    const sql = `select reverse(e.event_message) as m, ${[...forms, ...near].join(", ")} from edge_logs e, unnest(e.metadata) md, unnest(md.request) r, unnest(r.deep) d, unnest(d.level1) l1, unnest(l1.level2) l2`;
    const post = (text: string) =>
      call(`${server.url}/api/endpoints/query/logs.all?project=pii`, {
        method: "POST",
        headers: {
          "X-API-KEY": TOKEN,
          "QES-ENDPOINT-REDACT-PII": "true",
          "content-type": "application/json",
        },
        body: JSON.stringify({ sql: text }),
      });
    const res = await post(sql);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const row = res.body.result[0];
    expect(reversed(row.m)).toBe(
      "GET | 200 | REDACTED | https://pii.example.co/rest/v1/x | from [REDACTED]:443",
    );
    IP_FORMS.forEach(([text, redacted], i) => {
      expect(reversed(row[`f${i}`]), `form ${i}: ${text}`).toBe(redacted);
    });
    NEAR_MISSES.forEach((text, i) => {
      expect(row[`n${i}`], `near-miss ${i}`).toBe(text);
    });
    const list = await post(
      "select reverse(x) as x from edge_logs e, unnest(e.metadata) md, unnest(md.ip_list) x with offset o order by o",
    );
    expect(list.status, list.text.slice(0, 300)).toBe(200);
    expect(list.body.result.map((r: { x: string }) => reversed(r.x))).toEqual(
      IP_FORMS.map(([, redacted]) => redacted),
    );
  });
});
