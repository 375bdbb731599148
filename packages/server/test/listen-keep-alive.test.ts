import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEEP_ALIVE_MS, type ListeningServer, listen } from "../src/http/listen.ts";

/**
 * A shipper's pooled connection stays usable past Node's default keep-alive (5 s): the server
 * must not be the side that closes an idle connection a client may be sending on (listen.ts).
 */
let served: ListeningServer;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  served = await listen(
    (req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    },
    0,
    "127.0.0.1",
  );
});
afterAll(async () => {
  agent.destroy();
  await served?.close(100);
});

/** a POST on the agent's pooled connection; whether it went over a connection used before */
function post(): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = request(`${served.url}/api/logs`, { method: "POST", agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(req.reusedSocket));
    });
    req.on("error", reject);
    req.end("[]");
  });
}

describe("keep-alive of the HTTP server", () => {
  it("keeps an idle connection longer than the shippers' idle pools", async () => {
    expect(KEEP_ALIVE_MS).toBeGreaterThan(90_000);
    expect(served.server.keepAliveTimeout).toBe(KEEP_ALIVE_MS);
    expect(await post()).toBe(false);
    // past Node's default 5 s: the connection is still there for the next batch
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await post()).toBe(true);
  }, 20_000);
});

describe("closing the HTTP server", () => {
  it("closes a kept-alive connection once its last response ends, not at the end of the grace", async () => {
    const slow = await listen(
      (req, res) => {
        req.resume();
        setTimeout(() => res.end("ok"), 300);
      },
      0,
      "127.0.0.1",
    );
    const client = new Agent({ keepAlive: true });
    try {
      const answered = new Promise<void>((resolve, reject) => {
        const req = request(`${slow.url}/`, { agent: client }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end();
      });
      await new Promise((r) => setTimeout(r, 50));
      // a grace far past the test's own timeout: the close resolves only if it does not wait for it
      const closed = slow.close(600_000);
      await answered;
      await closed;
      expect(slow.server.listening).toBe(false);
    } finally {
      client.destroy();
    }
  }, 20_000);
});
