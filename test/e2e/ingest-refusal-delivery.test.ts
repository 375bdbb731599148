import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QesProcess, startQes } from "../http/support/qes-process.ts";

/**
 * A refusal must reach the client. A server that answers 413 while the client is still sending
 * the body, and then closes the socket with those bytes unread, resets the connection: Node's
 * fetch (what most test suites and JavaScript shippers use) then reports ECONNRESET or EPIPE and
 * never shows the 413. Spoken to as a checker would: `qes serve` as a child process, Node's fetch.
 */
const INGEST = "refusal-ingest-token-0123456789";
const LIMIT = 256 * 1024;

async function post(
  url: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; code?: string } | { failed: string }> {
  try {
    const res = await fetch(`${url}/api/logs?source_name=refused.src`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": INGEST, ...headers },
      body,
    });
    const json = (await res.json()) as { error?: { code: string } };
    return { status: res.status, ...(json.error ? { code: json.error.code } : {}) };
  } catch (e) {
    return { failed: String((e as { cause?: { code?: string } }).cause?.code ?? e) };
  }
}

/** one event whose message makes the JSON array `bytes` long */
function bodyOf(bytes: number): Buffer {
  const head = '[{"event_message":"';
  const tail = '"}]';
  return Buffer.from(head + "x".repeat(bytes - head.length - tail.length) + tail);
}

describe("refusals of bodies past QES_INGEST_MAX_BYTES, over real sockets to qes serve", () => {
  let dir: string;
  let server: QesProcess;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "qes-refusal-"));
    server = await startQes({
      QES_BACKEND: "duckdb",
      QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
      QES_DUCKDB_THREADS: "1",
      QES_SEED: "false",
      QES_API_KEYS: "refusal-query-token-0123456789",
      QES_INGEST_KEYS: INGEST,
      QES_INGEST_MAX_BYTES: String(LIMIT),
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a plain body a little or much past the limit is answered 413, every time", async () => {
    const answers = [];
    for (const times of [1.05, 1.2, 1.5, 2, 3, 8]) {
      for (let i = 0; i < 4; i++) answers.push(await post(server.url, bodyOf(Math.round(LIMIT * times))));
    }
    expect(answers.filter((a) => !("status" in a) || a.status !== 413)).toEqual([]);
    expect(answers[0]).toEqual({ status: 413, code: "request_too_large" });
  }, 60_000);

  it("a gzip body that inflates past the limit is answered 413, however large it is compressed", async () => {
    // random text compresses little: the compressed body itself is several times the limit
    const noise = Buffer.from(
      Array.from({ length: 4 * LIMIT }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join(
        "",
      ),
    );
    const big = gzipSync(Buffer.concat([Buffer.from('[{"event_message":"'), noise, Buffer.from('"}]')]));
    expect(big.length).toBeGreaterThan(2 * LIMIT);
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await post(server.url, big, { "content-encoding": "gzip" }));
    expect(answers.filter((a) => !("status" in a) || a.status !== 413)).toEqual([]);
  }, 60_000);

  it("the server still takes events on the same keep-alive client afterwards", async () => {
    await post(server.url, bodyOf(3 * LIMIT));
    expect(await post(server.url, Buffer.from('[{"event_message":"after"}]'))).toEqual({ status: 200 });
  }, 30_000);
});
