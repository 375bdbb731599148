import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS } from "./support/events.ts";
import { call, type HttpServer, SCOPED_TOKEN, startHttpServer, TOKEN } from "./support/in-process.ts";
import { duckdbStore, type Store } from "./support/stores.ts";

/** What a server shows to whoever can reach its port: QES_HOST and QES_METRICS_TOKEN (issue 12). */
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
let store: Store;
let plain: HttpServer;
let guarded: HttpServer;

beforeAll(async () => {
  store = await duckdbStore({ "cloudflare.logs.prod": EDGE_EVENTS });
  plain = await startHttpServer(store.backend);
  guarded = await startHttpServer(store.backend, { QES_METRICS_TOKEN: METRICS_TOKEN });
  // one answered request, so the metrics name an endpoint
  for (const s of [plain, guarded]) {
    await call(`${s.url}/api/endpoints/query/logs.all?project=alpha`, { headers: { "X-API-KEY": TOKEN } });
  }
});
afterAll(async () => {
  await plain?.close();
  await guarded?.close();
  await store?.dispose();
});

/** whether a TCP connection to host:port is accepted */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("QES_HOST", () => {
  it("listens on loopback only by default: another interface of the machine refuses the connection", async () => {
    const port = plain.service.port;
    expect(plain.url).toBe(`http://127.0.0.1:${port}`);
    expect(await accepts("127.0.0.1", port)).toBe(true);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && !a.internal && a.family === "IPv4");
    if (external) expect(await accepts(external.address, port)).toBe(false);
  });

  it("listens where QES_HOST says (0.0.0.0: every interface)", async () => {
    const open = await startHttpServer(store.backend, { QES_HOST: "0.0.0.0" });
    try {
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a !== undefined && !a.internal && a.family === "IPv4");
      expect(await accepts(external?.address ?? "127.0.0.1", open.service.port)).toBe(true);
    } finally {
      await open.close();
    }
  });

  it("a host or port it cannot listen on fails start-up naming QES_HOST or PORT", async () => {
    // Node says only `getaddrinfo ENOTFOUND …` or `EADDRINUSE`, not which setting to change
    await expect(startHttpServer(store.backend, { QES_HOST: "no-such-host.invalid" })).rejects.toMatchObject({
      code: "invalid_config",
      param: "QES_HOST",
      message: expect.stringMatching(/QES_HOST "no-such-host\.invalid" is not a name this machine resolves/),
    });
    // TEST-NET-1 (RFC 5737): an address no machine here holds
    await expect(startHttpServer(store.backend, { QES_HOST: "192.0.2.1" })).rejects.toMatchObject({
      param: "QES_HOST",
      message: expect.stringMatching(/QES_HOST "192\.0\.2\.1" is not an address of this machine/),
    });
    await expect(startHttpServer(store.backend, { PORT: String(plain.service.port) })).rejects.toMatchObject({
      param: "PORT",
      message: expect.stringMatching(new RegExp(`PORT ${plain.service.port} is in use on 127\\.0\\.0\\.1`)),
    });
  });
});

describe("/metrics", () => {
  const scrape = (s: HttpServer, headers: Record<string, string>) => call(`${s.url}/metrics`, { headers });

  it("with QES_METRICS_TOKEN: only Authorization: Bearer <it>", async () => {
    expect((await scrape(guarded, {})).status).toBe(401);
    expect((await scrape(guarded, { Authorization: "Bearer metrics-token-0123456789abcdeX" })).status).toBe(
      401,
    );
    expect((await scrape(guarded, { Authorization: `Bearer ${METRICS_TOKEN}x` })).status).toBe(401);
    // an API token is not the metrics token
    expect((await scrape(guarded, { "X-API-KEY": TOKEN })).status).toBe(401);
    expect((await scrape(guarded, { Authorization: `Bearer ${TOKEN}` })).status).toBe(401);
    const ok = await scrape(guarded, { Authorization: `Bearer ${METRICS_TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('endpoint="logs.all"');
  });

  it("without it: never names endpoints to a caller without a token, or with a scoped one", async () => {
    const anonymous = await scrape(plain, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).not.toContain("logs.all");
    const scoped = await scrape(plain, { "X-API-KEY": SCOPED_TOKEN });
    expect(scoped.status).toBe(403);
    expect(scoped.text).not.toContain("logs.all");
    const full = await scrape(plain, { "X-API-KEY": TOKEN });
    expect(full.status).toBe(200);
    expect(full.text).toContain('endpoint="logs.all"');
  });

  it("never logs the metrics token", () => {
    expect(guarded.logs()).not.toContain(METRICS_TOKEN);
  });
});
