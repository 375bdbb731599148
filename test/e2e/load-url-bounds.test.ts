import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postBounded } from "../../packages/server/src/cli/bounded-post.ts";
import { loadThroughServer } from "../../packages/server/src/cli/commands/load-through-server.ts";
import { runCli } from "./support/run-cli.ts";
import { answerEndlessly, startStub, stopStub } from "./support/stub-server.ts";

/**
 * `qes load --url` against servers that are not qes, or not well: one that never answers, one
 * whose answer never ends, one that redirects elsewhere. The load waited 300 s for each of 30
 * attempts, read any body whole (900 MB in 12 s) and followed a redirect to another host with
 * the ingest token and the events.
 */
const TOKEN = "bounds-ingest-token-0123456789";
let dir: string;
let file: string;

const env = () => ({ QES_INGEST_TOKEN: TOKEN, QES_DUCKDB_PATH: join(dir, "unrelated.duckdb") });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "qes-load-bounds-"));
  file = join(dir, "events.ndjson");
  writeFileSync(file, `${JSON.stringify({ id: "b1", event_message: "x" })}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("qes load --url bounds what it waits for and reads", () => {
  it("stops reading an answer past 1 MiB and says the server is no qes, not a commit", async () => {
    let answer: { closedEarly(): boolean } | undefined;
    const { server, url } = await startStub("127.0.0.1", (_req, res) => {
      answer = answerEndlessly(res, { chunk: Buffer.alloc(64 * 1024, 0x20) });
    });
    try {
      const res = await runCli(["load", "--url", url, "--source", "bounds.src", file], { env: env() });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`the server at ${url} answered with more than 1048576 bytes`);
      expect(res.stderr).toContain("may or may not be stored; loading the file again stores nothing twice");
      expect(answer?.closedEarly()).toBe(true);
    } finally {
      await stopStub(server);
    }
  }, 60_000);

  it("follows no redirect to another host: neither the token nor the events go there", async () => {
    const elsewhere = await startStub("127.0.0.2", (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ accepted: 1 }));
    });
    const redirecting = await startStub("127.0.0.1", (req, res) => {
      res.writeHead(307, { Location: `${elsewhere.url}${req.url}` }).end();
    });
    try {
      const res = await runCli(["load", "--url", redirecting.url, "--source", "bounds.src", file], {
        env: env(),
      });
      expect(res.code).toBe(1);
      expect(redirecting.got).toHaveLength(1);
      expect(elsewhere.got).toEqual([]);
      expect(res.stderr).toContain(
        `the server at ${redirecting.url} redirects (307) to "${elsewhere.url}/api/logs`,
      );
      expect(res.stderr).toContain("give --url the address of the qes server itself");
      expect(res.stderr).not.toContain(TOKEN);
    } finally {
      await stopStub(redirecting.server);
      await stopStub(elsewhere.server);
    }
  }, 60_000);

  it("gives up on a server that takes the events and never answers, once, saying what is unknown", async () => {
    const { server, url, got } = await startStub("127.0.0.1", () => {
      // never answers
    });
    try {
      const load = loadThroughServer(
        { url, token: TOKEN, answerWithinMs: 1000 },
        "bounds.src",
        file,
        () => {},
      );
      await expect(load).rejects.toThrow(
        `the server at ${url} did not answer within 1 s: the events of that request may or may not be stored`,
      );
      expect(got).toHaveLength(1);
    } finally {
      await stopStub(server);
    }
  }, 60_000);

  it("gives up on an answer that begins and never ends", async () => {
    const { server, url } = await startStub("127.0.0.1", (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"accepted":');
    });
    try {
      const load = loadThroughServer(
        { url, token: TOKEN, answerWithinMs: 1000 },
        "bounds.src",
        file,
        () => {},
      );
      await expect(load).rejects.toThrow(`the server at ${url} did not answer within 1 s`);
    } finally {
      await stopStub(server);
    }
  }, 60_000);

  it("sends to a qes on a port browsers block (fetch refused it: 'fetch failed' after 50 s of retries)", async () => {
    // ports of the fetch standard's bad-port list: the first this machine has free
    let started: { server: Server; url: string } | undefined;
    const got: string[] = [];
    for (const port of [6666, 6665, 6667, 6668, 6669, 6000, 10080, 5060]) {
      const server = createServer((req, res) => {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          got.push(body);
          res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ accepted: 1 }));
        });
      });
      const listening = await new Promise<boolean>((r) => {
        server.once("error", () => r(false));
        server.listen(port, "127.0.0.1", () => r(true));
      });
      if (listening) {
        started = { server, url: `http://127.0.0.1:${port}` };
        break;
      }
    }
    expect(started, "no port of the list is free").toBeDefined();
    try {
      const res = await runCli(["load", "--url", started!.url, "--source", "bounds.src", file], {
        env: env(),
      });
      expect(res.stderr).toBe("");
      expect(res.code).toBe(0);
      expect(got).toHaveLength(1);
      expect(JSON.parse(got[0]!)).toMatchObject({ id: "b1" });
    } finally {
      await stopStub(started!.server);
    }
  }, 120_000);

  it("names why a server cannot be reached (fetch said 'fetch failed' for every cause)", async () => {
    const { server, url } = await startStub("127.0.0.1", () => {});
    await stopStub(server);
    await expect(
      postBounded(`${url}/api/logs`, { headers: {}, body: "{}\n" }, { withinMs: 10_000, maxBytes: 1024 }),
    ).rejects.toThrow(`connect ECONNREFUSED ${url.slice("http://".length)}`);
  });

  it("shows a refusal that is no qes error quoted, cut short and with its control characters escaped", async () => {
    const page = `<html>\x1b]0;owned\x07\x1b[31mBad gateway\x1b[0m${"x".repeat(5000)}</html>`;
    const { server, url } = await startStub("127.0.0.1", (_req, res) => {
      res.writeHead(502, { "Content-Type": "text/html" }).end(page);
    });
    try {
      const res = await runCli(["load", "--url", url, "--source", "bounds.src", file], { env: env() });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(
        `refused the events (502): "<html>\\u001b]0;owned\\u0007\\u001b[31mBad gateway\\u001b[0mxxx`,
      );
      expect(res.stderr).toContain("… (5,043 characters)");
      expect(res.stderr).not.toContain("\x1b");
      expect(res.stderr.length).toBeLessThan(1000);
    } finally {
      await stopStub(server);
    }
  });
});
