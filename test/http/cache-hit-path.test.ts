import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, PII_EVENTS } from "./support/events.ts";
import {
  call,
  HASHED_TOKEN,
  type HttpServer,
  JWT_SECRET,
  type Reply,
  SCOPED_TOKEN,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { signJwt } from "./support/jwt.ts";
import { metricSum, scrape } from "./support/prometheus.ts";
import { duckdbStore, type Store, unique } from "./support/stores.ts";

/**
 * The cache-hit path in front of express (packages/server/src/http/cache-hit-path.ts): a repeat of
 * a request the full path answered through the cache is answered from the stored bytes without
 * the router. Each test shows a repeat taking it (qes_cache_fast_hits_total moves) with the same
 * bytes, headers, metrics and log line as the full path, and tries to make it answer what the
 * full path would refuse or answer differently: another token, no token, a scoped or expired
 * token, another pinned parameter, redaction, a token in the URL, POST, an expired entry.
 */
let store: Store;
let memory: HttpServer;
let cors: HttpServer;
let shared: HttpServer;
let redis: Redis;
const PREFIX = `${unique("qes_hitpath")}:`;

beforeAll(async () => {
  store = await duckdbStore({ "cloudflare.logs.prod": [...EDGE_EVENTS, ...PII_EVENTS] });
  memory = await startHttpServer(store.backend);
  // warming every 1000 s: nothing refreshes an entry during a test, so entries expire
  cors = await startHttpServer(store.backend, {
    QES_CORS_ORIGINS: "https://app.example.com",
    QES_WARM_INTERVAL_SCALE: "1000",
  });
  shared = await startHttpServer(store.backend, {
    QES_REDIS_URL: "redis://127.0.0.1:6379",
    QES_REDIS_PREFIX: PREFIX,
  });
  redis = new Redis("redis://127.0.0.1:6379");
});
afterAll(async () => {
  for (const s of [memory, cors, shared]) await s?.close();
  await store?.dispose();
  if (redis) {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
});

const get = (server: HttpServer, path: string, headers: Record<string, string> = { "X-API-KEY": TOKEN }) =>
  call(`${server.url}${path}`, { headers });
const fastHits = async (server: HttpServer, endpoint?: string) =>
  metricSum(await scrape(server.url), "qes_cache_fast_hits_total", endpoint ? { endpoint } : {});
const xcache = (r: Reply) => r.headers.get("x-cache");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** the headers of a reply that are the same for every answer of one entry in one second */
const stableHeaders = (r: Reply) =>
  [...r.headers]
    .filter(([name]) => !["date", "x-request-id", "keep-alive", "connection"].includes(name))
    .sort(([a], [b]) => a.localeCompare(b));

describe("the cache-hit path", () => {
  it("answers a repeat with the full path's bytes and headers, without the router", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=alpha&unknown=1";
    const before = await fastHits(memory);
    const miss = await get(memory, path);
    expect(xcache(miss)).toBe("MISS");
    // another credential header form: a first request for the hit path, so the full path's HIT
    const fullHit = await get(memory, path, { Authorization: `Bearer ${TOKEN}` });
    expect(xcache(fullHit)).toBe("HIT");
    expect(await fastHits(memory)).toBe(before);
    const fastHit = await get(memory, path);
    expect(await fastHits(memory)).toBe(before + 1);
    expect(fastHit.status).toBe(200);
    expect(fastHit.text).toBe(miss.text);
    expect(stableHeaders(fastHit)).toEqual(stableHeaders(fullHit));
    expect(fastHit.headers.get("qes-ignored-params")).toBe("unknown");
    expect(fastHit.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(fastHit.headers.get("x-request-id")).not.toBe(fullHit.headers.get("x-request-id"));
    // the caller's request id is echoed, an unsafe one replaced
    expect(
      (await get(memory, path, { "X-API-KEY": TOKEN, "X-Request-Id": "trace-42" })).headers.get(
        "x-request-id",
      ),
    ).toBe("trace-42");
    const unsafe = await get(memory, path, { "X-API-KEY": TOKEN, "X-Request-Id": "a b" });
    expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("counts and logs a fast hit as the full path does", async () => {
    const path = "/api/endpoints/query/pii.cached?project=gamma";
    await get(memory, path);
    const text = await scrape(memory.url);
    const hits = metricSum(text, "qes_cache_requests_total", { endpoint: "pii.cached", outcome: "HIT" });
    const timed = metricSum(text, "qes_http_request_duration_seconds_count", {
      endpoint: "pii.cached",
      cache: "HIT",
    });
    const fast = await get(memory, path, { "X-API-KEY": TOKEN, "X-Request-Id": "fast-log-line" });
    expect(xcache(fast)).toBe("HIT");
    const after = await scrape(memory.url);
    expect(metricSum(after, "qes_cache_fast_hits_total", { endpoint: "pii.cached" })).toBeGreaterThanOrEqual(
      1,
    );
    expect(metricSum(after, "qes_cache_requests_total", { endpoint: "pii.cached", outcome: "HIT" })).toBe(
      hits + 1,
    );
    expect(
      metricSum(after, "qes_http_request_duration_seconds_count", {
        endpoint: "pii.cached",
        cache: "HIT",
        route: "query",
      }),
    ).toBe(timed + 1);
    // the line is written when the answer is done, which the client may see first: wait for it
    const lineOf = () =>
      memory
        .logs()
        .split("\n")
        .find((l) => l.includes('"fast-log-line"'));
    while (lineOf() === undefined) await sleep(20);
    const line = lineOf();
    const logged = JSON.parse(line as string);
    expect(logged).toMatchObject({
      msg: "request",
      method: "GET",
      url: path,
      status: 200,
      endpoint: "pii.cached",
      requestId: "fast-log-line",
    });
    expect(typeof logged.ms).toBe("number");
    expect(line).not.toContain(TOKEN);
  });

  it("never answers another token, a missing or unknown token, or a token scoped elsewhere", async () => {
    const path = "/api/endpoints/query/counts.short?pattern=todos";
    await get(memory, path);
    const before = await fastHits(memory);
    expect(xcache(await get(memory, path))).toBe("HIT");
    expect(await fastHits(memory)).toBe(before + 1);
    // SCOPED_TOKEN may run usage.api-counts and pii.cached only
    const scoped = await get(memory, path, { "X-API-KEY": SCOPED_TOKEN });
    expect(scoped.status).toBe(403);
    expect(scoped.body.error.code).toBe("forbidden");
    const refusals: Record<string, string>[] = [
      {},
      { "X-API-KEY": "" },
      { "X-API-KEY": `${TOKEN}x` },
      { "X-API-KEY": TOKEN.slice(0, -1) },
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: TOKEN },
      // a second value makes the header "a, b": not a token
      { "X-API-KEY": `${TOKEN}, ${TOKEN}` },
    ];
    for (const headers of refusals) {
      const refused = await get(memory, path, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(refused.body.error.code).toBe("unauthorized");
    }
    // the hashed-only token is another principal with the same rights: answered, from the cache
    expect(xcache(await get(memory, path, { "X-API-KEY": HASHED_TOKEN }))).toBe("HIT");
    expect(await fastHits(memory)).toBe(before + 1);
  });

  it("keeps redacting and non-redacting requests apart in both directions", async () => {
    const path = "/api/endpoints/query/pii.cached?project=pii";
    const plain = await get(memory, path);
    expect(plain.text).toContain("203.0.113.7");
    expect(xcache(await get(memory, path))).toBe("HIT");
    const before = await fastHits(memory);
    for (const name of ["QES-ENDPOINT-REDACT-PII", "svc-endpoint-redact-pii", "LF-Endpoint-Redact-PII"]) {
      for (let i = 0; i < 2; i++) {
        const redacted = await get(memory, path, { "X-API-KEY": TOKEN, [name]: "TRUE" });
        expect(redacted.status).toBe(200);
        expect(redacted.text, name).not.toContain("203.0.113.7");
        expect(redacted.text).toContain("REDACTED");
      }
    }
    // the redacting repeats took the hit path too, and the plain request still gets plain bytes
    expect(await fastHits(memory)).toBeGreaterThanOrEqual(before + 3);
    expect((await get(memory, path)).text).toBe(plain.text);
    // a header that does not say true is not redaction, and is not mistaken for it
    expect((await get(memory, path, { "X-API-KEY": TOKEN, "QES-ENDPOINT-REDACT-PII": "false" })).text).toBe(
      plain.text,
    );
  });

  it("gives each JWT its own pinned parameters and stops at the token's expiry", async () => {
    const now = Math.floor(Date.now() / 1000);
    const path = "/api/endpoints/query/pii.cached";
    const jwtFor = (project: string, exp: number) =>
      signJwt({ scope: "query", params: { project }, exp }, "HS256", JWT_SECRET);
    const alpha = jwtFor("alpha", now + 600);
    const beta = jwtFor("beta", now + 600);
    const asAlpha = await get(memory, path, { Authorization: `Bearer ${alpha}` });
    const before = await fastHits(memory);
    expect(xcache(await get(memory, path, { Authorization: `Bearer ${alpha}` }))).toBe("HIT");
    expect(await fastHits(memory)).toBe(before + 1);
    const asBeta = await get(memory, path, { Authorization: `Bearer ${beta}` });
    expect(asBeta.status).toBe(200);
    expect(asBeta.body.result.map((r: { id: string }) => r.id)).toEqual(["e-beta-1"]);
    expect(asAlpha.body.result.every((r: { id: string }) => r.id.startsWith("e-alpha"))).toBe(true);
    expect((await get(memory, path, { Authorization: `Bearer ${beta}` })).text).toBe(asBeta.text);
    // a pinned value may not be changed by the URL, remembered or not
    expect((await get(memory, `${path}?project=beta`, { Authorization: `Bearer ${alpha}` })).status).toBe(
      403,
    );

    // expiring in 2 s or a little more: the hit path answers until then, and never after
    const exp = Math.ceil(Date.now() / 1000) + 2;
    const short = jwtFor("alpha", exp);
    await get(memory, path, { Authorization: `Bearer ${short}` });
    const beforeExpiry = await fastHits(memory);
    expect(xcache(await get(memory, path, { Authorization: `Bearer ${short}` }))).toBe("HIT");
    expect(await fastHits(memory)).toBe(beforeExpiry + 1);
    await sleep(exp * 1000 - Date.now() + 100);
    // the verifier allows 5 s of clock skew, so the full path still answers; the hit path does not
    const late = await get(memory, path, { Authorization: `Bearer ${short}` });
    expect(late.status).toBe(200);
    expect(await fastHits(memory)).toBe(beforeExpiry + 1);
  });

  it("does not remember a URL carrying a token, in any encoding", async () => {
    const before = await fastHits(memory);
    for (const param of ["api_key", "%61pi_key", "api%5Fkey"]) {
      const path = `/api/endpoints/query/usage.api-counts?interval=hourly&project=beta&${param}=${TOKEN}`;
      for (let i = 0; i < 3; i++) expect((await get(memory, path, {})).status).toBe(200);
      // with a header token as well, the URL still holds a token
      for (let i = 0; i < 3; i++) expect((await get(memory, path)).status).toBe(200);
    }
    expect(await fastHits(memory)).toBe(before);
    expect(memory.logs()).not.toContain(TOKEN);
  });

  it("leaves POST, HEAD and expired entries to the full path", async () => {
    const body = JSON.stringify({ interval: "hourly", project: "gamma" });
    const post = () =>
      call(`${memory.url}/api/endpoints/query/usage.api-counts`, {
        method: "POST",
        headers: { "X-API-KEY": TOKEN, "Content-Type": "application/json" },
        body,
      });
    await post();
    const before = await fastHits(memory);
    expect(xcache(await post())).toBe("HIT");
    const head = await fetch(
      `${memory.url}/api/endpoints/query/usage.api-counts?interval=hourly&project=gamma`,
      {
        method: "HEAD",
        headers: { "X-API-KEY": TOKEN },
      },
    );
    expect(head.status).toBe(200);
    expect(await fastHits(memory)).toBe(before);

    // counts.short lives 2 s (and is not warmed on this server): after that a repeat is a MISS
    // from the full path, not stale bytes
    const path = "/api/endpoints/query/counts.short?pattern=items";
    expect(xcache(await get(cors, path))).toBe("MISS");
    const fast = await fastHits(cors);
    expect(xcache(await get(cors, path))).toBe("HIT");
    expect(await fastHits(cors)).toBe(fast + 1);
    await sleep(2100);
    expect(xcache(await get(cors, path))).toBe("MISS");
    expect(await fastHits(cors)).toBe(fast + 1);
  });

  it("sends the CORS headers the full path sends, per origin", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=delta";
    const origin = { "X-API-KEY": TOKEN, Origin: "https://app.example.com" };
    await get(cors, path, origin);
    const fullHit = await get(cors, path, {
      Authorization: `Bearer ${TOKEN}`,
      Origin: "https://app.example.com",
    });
    const before = await fastHits(cors);
    const fastHit = await get(cors, path, origin);
    expect(await fastHits(cors)).toBe(before + 1);
    expect(fastHit.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(stableHeaders(fastHit)).toEqual(stableHeaders(fullHit));
    // another origin on the same remembered request: no CORS headers
    const other = await get(cors, path, { "X-API-KEY": TOKEN, Origin: "https://evil.example.com" });
    expect(xcache(other)).toBe("HIT");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(await fastHits(cors)).toBe(before + 2);
  });

  it("reads Redis for the stored bytes and falls through when the key is gone", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=daily&project=gamma";
    const miss = await get(shared, path);
    expect(xcache(miss)).toBe("MISS");
    const before = await fastHits(shared);
    const hit = await get(shared, path);
    expect(xcache(hit)).toBe("HIT");
    expect(hit.text).toBe(miss.text);
    expect(await fastHits(shared)).toBe(before + 1);
    // another instance's refresh or an eviction: the bytes in Redis are what is sent
    const keys = (await redis.keys(`${PREFIX}cache:*`)).filter((k) => !k.endsWith(":lock"));
    await redis.del(...keys);
    const again = await get(shared, path);
    expect(xcache(again)).toBe("MISS");
    expect(again.text).toBe(miss.text);
    expect(await fastHits(shared)).toBe(before + 1);
  });
});
