import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import {
  call,
  HASHED_TOKEN,
  type HttpServer,
  JWT_SECRET,
  SCOPED_TOKEN,
  startHttpServer,
  TOKEN,
} from "./support/in-process.ts";
import { ecKeys, epoch, rsaKeys, signJwt } from "./support/jwt.ts";
import { postgresStore, type Store, unique } from "./support/stores.ts";

/**
 * Every authentication outcome over HTTP on PostgreSQL with the Redis cache: static tokens in
 * the three places, hashed and scoped tokens, JWTs (HS256, RS256, ES256) with scopes, expiry and
 * pinned parameters; 401 for missing/malformed/expired/unknown, 403 for not allowed.
 */
const USAGE_ID = "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63";
const LOGS_ID = "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19";
const rsa = rsaKeys();
const ec = ecKeys();
let store: Store;
let server: HttpServer;
let ecServer: HttpServer;
let audienceServer: HttpServer;
const presented: string[] = [];

beforeAll(async () => {
  store = await postgresStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  const env = { QES_REDIS_URL: "redis://127.0.0.1:6379", QES_REDIS_PREFIX: `${unique("qes_auth")}:` };
  server = await startHttpServer(store.backend, { ...env, QES_JWT_PUBLIC_KEY: rsa.publicPem });
  ecServer = await startHttpServer(store.backend, {
    ...env,
    QES_JWT_PUBLIC_KEY: ec.publicPem.replaceAll("\n", "\\n"),
  });
  audienceServer = await startHttpServer(store.backend, {
    ...env,
    QES_JWT_AUDIENCE: "qes,logs-api",
    QES_JWT_ISSUER: "https://idp.example.com",
  });
});
afterAll(async () => {
  await server?.close();
  await ecServer?.close();
  await audienceServer?.close();
  await store?.dispose();
});

const USAGE = "/api/endpoints/query/usage.api-counts?interval=daily&project=alpha";
const LOGS = "/api/endpoints/query/logs.all?project=alpha";

function get(path: string, headers: Record<string, string> = {}, on = server) {
  for (const v of Object.values(headers)) presented.push(v);
  return call(`${on.url}${path}`, { headers });
}
const withKey = (token: string) => ({ "X-API-KEY": token });
const hs = (claims: Record<string, unknown>) => signJwt({ exp: epoch(300), ...claims }, "HS256", JWT_SECRET);

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
}

describe("static API tokens", () => {
  it("accepts the token in X-API-KEY, Authorization: Bearer and the api_key parameter", async () => {
    expect((await get(LOGS, withKey(TOKEN))).status).toBe(200);
    expect((await get(LOGS, { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await get(LOGS, { Authorization: `bearer ${TOKEN}` })).status).toBe(200);
    presented.push(TOKEN);
    const param = await get(`${LOGS}&api_key=${TOKEN}`);
    expect(param.status).toBe(200);
    expect(param.headers.get("qes-ignored-params")).toBeNull();
  });

  it("accepts a token configured only as its SHA-256 (sha256=<hex>)", async () => {
    expect((await get(LOGS, withKey(HASHED_TOKEN))).status).toBe(200);
  });

  it("answers 401 unauthorized without a token, with an unknown or a malformed one", async () => {
    expectError(await get(LOGS), 401, "unauthorized");
    expectError(await get(LOGS, withKey("not-a-known-token-0123456789")), 401, "unauthorized");
    expectError(
      await get(LOGS, { Authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}` }),
      401,
      "unauthorized",
    );
    expectError(await get(LOGS, { Authorization: "Bearer" }), 401, "unauthorized");
    expectError(await get(LOGS, withKey(`${TOKEN}x`)), 401, "unauthorized");
    expectError(await get(LOGS, withKey(TOKEN.slice(0, -1))), 401, "unauthorized");
  });

  it("authenticates before looking up the endpoint: an unknown token on an unknown endpoint is 401", async () => {
    expectError(await get("/api/endpoints/query/no.such"), 401, "unauthorized");
    expectError(await get("/api/endpoints/query/no.such", withKey(TOKEN)), 404, "endpoint_not_found");
  });

  it("answers 403 forbidden for a token scoped to other endpoints, by name and by UUID", async () => {
    expectError(await get(LOGS, withKey(SCOPED_TOKEN)), 403, "forbidden");
    expect((await get(USAGE, withKey(SCOPED_TOKEN))).status).toBe(200);
    const byId = await get(
      `/api/endpoints/query/${USAGE_ID}?interval=daily&project=alpha`,
      withKey(SCOPED_TOKEN),
    );
    expect(byId.status).toBe(200);
  });

  it("tells a scoped token nothing about which other endpoints exist: the same 403 for a served name, an unknown one and a UUID", async () => {
    const served = await get(LOGS, withKey(SCOPED_TOKEN));
    const unknown = await get("/api/endpoints/query/no.such?project=alpha", withKey(SCOPED_TOKEN));
    const byId = await get(`/api/endpoints/query/${LOGS_ID}?project=alpha`, withKey(SCOPED_TOKEN));
    const unknownId = await get(`/api/endpoints/query/${LOGS_ID.replace(/.$/, "0")}`, withKey(SCOPED_TOKEN));
    for (const res of [served, unknown, byId, unknownId]) expectError(res, 403, "forbidden");
    const message = (res: { body: any }, asked: string) => res.body.error.message.replace(asked, "<asked>");
    expect(message(unknown, "no.such")).toBe(message(served, "logs.all"));
    expect(message(byId, LOGS_ID)).toBe(message(served, "logs.all"));
    // the UUID's endpoint is not named back to a token that may not run it
    expect(byId.body.error.message).not.toContain("logs.all");
  });
});

describe("JWTs", () => {
  it("accepts an HS256 token with scope query for every endpoint, in all three places", async () => {
    const token = hs({ scope: "query" });
    expect((await get(LOGS, { Authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await get(USAGE, withKey(token))).status).toBe(200);
    presented.push(token);
    expect((await get(`${LOGS}&api_key=${token}`)).status).toBe(200);
  });

  it("limits query:<name> and query:<uuid> scopes to those endpoints (403 elsewhere)", async () => {
    const byName = hs({ scope: "openid query:usage.api-counts" });
    expect((await get(USAGE, withKey(byName))).status).toBe(200);
    expectError(await get(LOGS, withKey(byName)), 403, "forbidden");
    const byId = hs({ scope: `query:${USAGE_ID.toUpperCase()}` });
    expect((await get(USAGE, withKey(byId))).status).toBe(200);
    expectError(await get(LOGS, withKey(byId)), 403, "forbidden");
  });

  it("answers 403 for a valid token without a query scope", async () => {
    expectError(await get(LOGS, withKey(hs({ scope: "read write" }))), 403, "forbidden");
    expectError(await get(LOGS, withKey(hs({}))), 403, "forbidden");
  });

  it("answers 401 for an expired, not-yet-valid, wrongly signed, unsigned or malformed token", async () => {
    const expired = await get(
      LOGS,
      withKey(signJwt({ scope: "query", exp: epoch(-60) }, "HS256", JWT_SECRET)),
    );
    expectError(expired, 401, "unauthorized");
    expect(expired.body.error.message).toMatch(/expired/);
    expectError(
      await get(LOGS, withKey(signJwt({ scope: "query", nbf: epoch(600) }, "HS256", JWT_SECRET))),
      401,
      "unauthorized",
    );
    expectError(
      await get(LOGS, withKey(signJwt({ scope: "query" }, "HS256", `${JWT_SECRET}-other`))),
      401,
      "unauthorized",
    );
    expectError(await get(LOGS, withKey(signJwt({ scope: "query" }, "none"))), 401, "unauthorized");
    // the public key used as an HMAC secret (algorithm confusion) must not pass
    expectError(
      await get(LOGS, withKey(signJwt({ scope: "query" }, "HS256", rsa.publicPem))),
      401,
      "unauthorized",
    );
    expectError(await get(LOGS, withKey("eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln")), 401, "unauthorized");
    expectError(await get(LOGS, withKey(hs({ scope: 42 }))), 401, "unauthorized");
    expectError(await get(LOGS, withKey(hs({ scope: "query", params: ["x"] }))), 401, "unauthorized");
  });

  it("accepts RS256 with QES_JWT_PUBLIC_KEY and refuses an RS256 token signed by another key", async () => {
    const ok = signJwt({ scope: "query", exp: epoch(60) }, "RS256", rsa.privateKey);
    expect((await get(LOGS, { Authorization: `Bearer ${ok}` })).status).toBe(200);
    const other = signJwt({ scope: "query", exp: epoch(60) }, "RS256", rsaKeys().privateKey);
    expectError(await get(LOGS, { Authorization: `Bearer ${other}` }), 401, "unauthorized");
    const expired = signJwt({ scope: "query", exp: epoch(-60) }, "RS256", rsa.privateKey);
    expectError(await get(LOGS, { Authorization: `Bearer ${expired}` }), 401, "unauthorized");
  });

  it("accepts ES256 with an EC public key (given as one line with \\n escapes)", async () => {
    const ok = signJwt({ scope: "query:logs.all", exp: epoch(60) }, "ES256", ec.privateKey);
    expect((await get(LOGS, withKey(ok), ecServer)).status).toBe(200);
    expectError(await get(USAGE, withKey(ok), ecServer), 403, "forbidden");
    // an RS256 token on the EC-keyed server does not verify
    const rs = signJwt({ scope: "query", exp: epoch(60) }, "RS256", rsa.privateKey);
    expectError(await get(LOGS, withKey(rs), ecServer), 401, "unauthorized");
  });
});

describe("pinned parameters (JWT claim params)", () => {
  const pinned = hs({ scope: "query", params: { project: "alpha" } });

  it("uses the pinned value when the request omits it", async () => {
    const res = await get("/api/endpoints/query/logs.all", withKey(pinned));
    expect(res.status).toBe(200);
    expect(res.body.result.map((r: { id: string }) => r.id)).toEqual([
      "e-alpha-1",
      "e-alpha-2",
      "e-alpha-3",
      "e-alpha-4",
    ]);
  });

  it("accepts the same value repeated, refuses another with 403 forbidden naming the parameter", async () => {
    expect((await get("/api/endpoints/query/logs.all?project=alpha", withKey(pinned))).status).toBe(200);
    const other = await get("/api/endpoints/query/logs.all?project=beta", withKey(pinned));
    expectError(other, 403, "forbidden");
    expect(other.body.error.param).toBe("project");
    const empty = await get("/api/endpoints/query/logs.all?project=", withKey(pinned));
    expectError(empty, 403, "forbidden");
    const posted = await call(`${server.url}/api/endpoints/query/logs.all`, {
      method: "POST",
      headers: { ...withKey(pinned), "Content-Type": "application/json" },
      body: JSON.stringify({ project: "beta" }),
    });
    expectError(posted, 403, "forbidden");
  });

  it("caches by the pinned value: the same rows as an explicit request share a key, others do not", async () => {
    const path = "/api/endpoints/query/usage.api-counts?interval=hourly";
    const first = await get(path, withKey(hs({ scope: "query", params: { project: "gamma" } })));
    expect(first.status).toBe(200);
    expect(first.headers.get("x-cache")).toBe("MISS");
    const explicit = await get(`${path}&project=gamma`, withKey(TOKEN));
    expect(explicit.headers.get("x-cache")).toBe("HIT");
    expect(explicit.text).toBe(first.text);
    const otherPin = await get(path, withKey(hs({ scope: "query", params: { project: "delta" } })));
    expect(otherPin.headers.get("x-cache")).toBe("MISS");
    expect(otherPin.text).not.toBe(first.text);
  });
});

describe("the OpenAPI document", () => {
  it("needs a token and lists only the endpoints the token may run", async () => {
    expectError(await get("/api/openapi.json"), 401, "unauthorized");
    const all = await get("/api/openapi.json", withKey(TOKEN));
    expect(Object.keys(all.body.paths)).toContain("/api/endpoints/query/logs.all");
    const scoped = await get("/api/openapi.json", withKey(SCOPED_TOKEN));
    const names = Object.keys(scoped.body.paths).filter((p) => p.startsWith("/api/endpoints/query/"));
    expect(names.sort()).toEqual([
      "/api/endpoints/query/pii.cached",
      "/api/endpoints/query/usage.api-counts",
    ]);
  });
});

describe("logs", () => {
  it("never contain a presented token, JWT or api_key value", () => {
    const logs = server.logs() + ecServer.logs();
    expect(logs).toContain('"status":401');
    expect(logs).toContain('"status":403');
    expect(presented.length).toBeGreaterThan(20);
    for (const secret of new Set(presented)) {
      // the credential itself, and the part a log could cut out of a "Bearer …" header
      const bare = secret.replace(/^(Bearer|bearer|Basic) /, "");
      if (bare.length < 16) continue;
      expect(logs.includes(bare), `a log line holds ${bare.slice(0, 12)}…`).toBe(false);
    }
    expect(logs).not.toContain(JWT_SECRET);
    expect(logs).not.toContain("api_key=");
  });
});

describe("JWT audience and issuer (QES_JWT_AUDIENCE, QES_JWT_ISSUER)", () => {
  const idp = "https://idp.example.com";
  it("runs a token issued for this server, and refuses one its key signed for another service", async () => {
    const ours = hs({ scope: "query", aud: "logs-api", iss: idp });
    expect((await get(USAGE, withKey(ours), audienceServer)).status).toBe(200);
    const billing = await get(
      USAGE,
      withKey(hs({ scope: "query", aud: "billing", iss: idp })),
      audienceServer,
    );
    expectError(billing, 401, "unauthorized");
    expect(billing.body.error.message).toMatch(/audience \(aud\)/);
    const otherIdp = await get(
      USAGE,
      withKey(hs({ scope: "query", aud: "qes", iss: "https://evil.example.com" })),
      audienceServer,
    );
    expectError(otherIdp, 401, "unauthorized");
    expect(otherIdp.body.error.message).toMatch(/issuer \(iss\)/);
    // unset, the same tokens run (the server of the other tests)
    expect((await get(USAGE, withKey(hs({ scope: "query", aud: "billing" })), server)).status).toBe(200);
  });
});
