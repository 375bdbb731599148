import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { event, INGEST_TOKEN, ingestEnv } from "./support/ingest.ts";

/**
 * Under a flood of large gzip bodies (bench/ingest-flood.ts, 40 clients of 8 MB), 7 to 13 requests
 * a run had their connection closed without an answer. A refusal after the body had arrived
 * whole (the read budget's 429, a gzip body that does not inflate) armed the timers that close
 * a client still sending after a refusal; they were cleared only by the body's end, which had
 * already passed, so 10 s later they closed the connection — kept alive by then for the client's
 * next request, which was never answered. One connection shows it, without a flood.
 */
describe("a refused ingest request on a kept-alive connection", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(BACKENDS[0]!, {}, ingestEnv());
  });
  afterAll(() => served.close());

  /** everything the server sends on `socket`, as it comes */
  function received(socket: Socket): () => string {
    let text = "";
    socket.setEncoding("latin1").on("data", (c: string) => {
      text += c;
    });
    return () => text;
  }

  const head = (length: number, extra = "") =>
    "POST /api/logs?source_name=keepalive.src HTTP/1.1\r\nHost: qes\r\nContent-Type: application/json\r\n" +
    `X-API-KEY: ${INGEST_TOKEN}\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  async function until(check: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }

  it("answers the next request on it even 10 s after the refusal", async () => {
    const { port } = new URL(served.url);
    const socket = connect(Number(port), "127.0.0.1");
    const text = received(socket);
    let closed = false;
    socket.on("close", () => {
      closed = true;
    });
    try {
      // refused once its whole body is read: it is not gzip data
      const notGzip = "this is not gzip";
      socket.write(head(notGzip.length, "Content-Encoding: gzip\r\n") + notGzip);
      await until(() => text().includes("Content-Encoding: gzip"), 10_000);
      expect(text()).toMatch(/^HTTP\/1\.1 400 /);

      // the next request on the same connection, its body sent over 12 s (each piece within the
      // 10 s a body may be idle): the refusal's timers fired in the middle of it
      const body = JSON.stringify([event("k1", "kept alive")]);
      const pieces = 6;
      const size = Math.ceil(body.length / pieces);
      socket.write(head(body.length));
      for (let i = 0; i < pieces && !closed; i++) {
        await new Promise((r) => setTimeout(r, 2_000));
        socket.write(body.slice(i * size, (i + 1) * size));
      }
      await until(() => closed || /HTTP\/1\.1 200 .*"accepted":1/s.test(text()), 10_000);
      expect(closed).toBe(false);
      expect(text()).toMatch(/HTTP\/1\.1 200 .*\{"accepted":1\}/s);
    } finally {
      socket.destroy();
    }
  }, 40_000);
});
