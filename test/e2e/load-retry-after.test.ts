import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collectOutput, runCli, spawnCli } from "./support/run-cli.ts";

/**
 * `qes load --url` against a server answering 429 with a `Retry-After` no qes sends: days, an
 * HTTP date, garbage. The load honoured any number of seconds as given (three days of sleep,
 * without a word) and read an HTTP date as 1 s.
 */
const TOKEN = "retry-after-ingest-token-0123456789";
let dir: string;
let file: string;
let server: Server;
let url: string;
/** the Retry-After of each 429 the server answers before it answers 200 (a function: made when sent) */
let refusals: (string | (() => string))[] = [];
/** when each POST arrived (ms) */
let arrivals: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "qes-retry-after-"));
  file = join(dir, "events.ndjson");
  writeFileSync(file, `${JSON.stringify({ id: "r1", event_message: "x" })}\n`);
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      arrivals.push(Date.now());
      const next = refusals.shift();
      if (next !== undefined) {
        const retryAfter = typeof next === "string" ? next : next();
        res.writeHead(429, { "Content-Type": "application/json", "Retry-After": retryAfter });
        res.end(JSON.stringify({ error: { code: "too_many_requests", message: "busy", requestId: "r" } }));
        return;
      }
      const accepted = body.split("\n").filter((l) => l !== "").length;
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ accepted }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  refusals = [];
  arrivals = [];
});

const env = () => ({ QES_INGEST_TOKEN: TOKEN, QES_DUCKDB_PATH: join(dir, "unrelated.duckdb") });
const args = () => ["load", "--url", url, "--source", "retry.src", file];

/** starts the load and resolves with its output once `pattern` shows in it (then stops it) */
async function outputUntil(pattern: RegExp, ms: number): Promise<string> {
  const child = spawnCli(args(), { env: env() });
  const { output } = collectOutput(child);
  const deadline = Date.now() + ms;
  try {
    while (!pattern.test(output()) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return output();
  } finally {
    child.kill("SIGKILL");
  }
}

describe("qes load and a server's Retry-After", () => {
  it("waits at most a minute when asked to wait three days, and says so", async () => {
    refusals = ["259200"];
    const out = await outputUntil(/waiting \d+ s/, 30_000);
    expect(out).toContain(`the server at ${url} asks to wait 259200 s (Retry-After "259200")`);
    expect(out).toContain("waiting 60 s, the most qes load waits before sending again");
  }, 60_000);

  it("reads an HTTP date: ten days ahead is capped too, four seconds ahead is waited for", async () => {
    refusals = [new Date(Date.now() + 10 * 86_400_000).toUTCString()];
    expect(await outputUntil(/waiting \d+ s/, 30_000)).toMatch(/asks to wait 86\d{4} s .*waiting 60 s/);

    // made as the 429 is sent: the CLI takes seconds to start on a loaded machine
    refusals = [() => new Date(Date.now() + 4000).toUTCString()];
    arrivals = [];
    const res = await runCli(args(), { env: env() });
    expect(res.code).toBe(0);
    expect(res.stderr).not.toContain("waiting");
    expect(arrivals).toHaveLength(2);
    // an HTTP date has whole seconds: 4 s ahead is more than 3 s after the 429
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThan(2500);
  }, 60_000);

  it("waits a second after a value that is neither, naming it with its control characters escaped", async () => {
    refusals = ["soon\tish", "-5", "1.5"];
    const res = await runCli(args(), { env: env() });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Retry-After "soon\\tish", neither seconds nor an HTTP date: waiting 1 s');
    expect(arrivals).toHaveLength(4);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThan(900);
    expect(res.stdout).toContain("1 events");
  }, 60_000);
});
