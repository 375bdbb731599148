import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_EVENTS, TEST_NOW } from "../e2e/support/events.ts";
import { startTestServer, type TestServer, TOKEN } from "../e2e/support/test-server.ts";
import { runExample } from "./run-example.ts";

let server: TestServer;
beforeAll(async () => {
  // the server's clock is pinned at TEST_NOW; the example is told the same instant with QES_NOW
  server = await startTestServer({ loads: { "cloudflare.logs.prod": EDGE_EVENTS } });
});
afterAll(async () => {
  await server?.close();
});

describe("examples/usage-chart.ts", () => {
  it("prints the last hour of usage per minute as a text chart", async () => {
    const { code, stdout, stderr } = await runExample("usage-chart", ["--width", "20"], {
      QES_URL: server.url,
      QES_API_KEY: TOKEN,
      QES_PROJECT: "alpha",
      QES_NOW: TEST_NOW,
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("Requests per minute, last hour (UTC), project alpha");
    expect(lines[1]).toContain("█ rest   ▓ storage   ▒ auth   ░ realtime");
    const minutes = lines.slice(2, -1);
    expect(minutes).toHaveLength(60);
    expect(minutes[0]).toMatch(/^11:01 │ {20}│$/);
    expect(minutes[59]).toMatch(/^12:00 │ {20}│$/);
    // alpha: an auth request at 11:30, storage at 11:58, rest at 11:59 (test/e2e/support/events.ts)
    expect(minutes).toContain(`11:30 │${"▒".repeat(20)}│ 1`);
    expect(minutes).toContain(`11:58 │${"▓".repeat(20)}│ 1`);
    expect(minutes).toContain(`11:59 │${"█".repeat(20)}│ 1`);
    expect(minutes.filter((l) => /│ \d+$/.test(l))).toHaveLength(3);
    expect(lines.at(-1)).toBe("total 3: rest 1, storage 1, auth 1, realtime 0");
  });

  it("scales the bars to the busiest minute", async () => {
    const { stdout } = await runExample("usage-chart", ["--width", "12"], {
      QES_URL: server.url,
      QES_API_KEY: TOKEN,
      QES_PROJECT: "alpha|beta", // a regular expression: beta adds a rest request at 11:59
      QES_NOW: TEST_NOW,
    });
    expect(stdout).toContain(`11:59 │${"█".repeat(12)}│ 2`);
    expect(stdout).toContain(`11:58 │${"▓".repeat(6)}${" ".repeat(6)}│ 1`);
    expect(stdout).toContain("total 4: rest 2, storage 1, auth 1, realtime 0");
  });

  it("says what went wrong, with the request id, and exits 1", async () => {
    const bad = await runExample("usage-chart", [], {
      QES_URL: server.url,
      QES_API_KEY: "wrong-token-0123456789",
      QES_PROJECT: "alpha",
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^qes answered 401 unauthorized: .+ \[request [0-9a-f-]{36}\]\n$/);
    const down = await runExample("usage-chart", [], {
      QES_URL: "http://127.0.0.1:9",
      QES_API_KEY: TOKEN,
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("qes does not answer at http://127.0.0.1:9");
  });
});
