import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { before, EDGE_EVENTS } from "../e2e/support/events.ts";
import { startTestServer, type TestServer, TOKEN } from "../e2e/support/test-server.ts";
import { type RunningExample, startExample } from "./run-example.ts";

let server: TestServer;
let tail: RunningExample | undefined;

beforeAll(async () => {
  server = await startTestServer({ loads: { "cloudflare.logs.prod": EDGE_EVENTS } });
});
afterEach(() => {
  if (tail && tail.child.exitCode === null) tail.child.kill("SIGKILL");
});
afterAll(async () => {
  await server?.close();
});

/** an edge event of project alpha whose message names it */
const event = (id: string, timestamp: string) =>
  JSON.stringify({
    id,
    timestamp,
    project: "alpha",
    event_message: `GET | 200 | ${id}`,
    metadata: { request: { path: "/rest/v1/t" } },
  });

/** `2025-01-15T12:00:00Z` plus seconds, with µs */
const after = (seconds: number, micros = 0) => before(-seconds, micros);

describe("examples/log-tail.ts", () => {
  it("prints the newest lines, then follows new ones oldest first, none lost or repeated", async () => {
    tail = startExample("log-tail", ["--lines", "2", "--every", "200"], {
      QES_URL: server.url,
      QES_API_KEY: TOKEN,
      QES_PROJECT: "alpha",
    });
    await tail.waitFor((out) => out.split("\n").length >= 3);
    // the two newest of alpha, oldest first, with µs timestamps
    expect(tail.stdout().split("\n").slice(0, 2)).toEqual([
      "2025-01-15T11:58:10.000000Z  GET | 200 | 203.0.113.7 | ray | https://alpha.supabase.co/storage/v1/object/public/a.png | curl/8.5.0",
      "2025-01-15T11:59:30.123456Z  GET | 200 | 203.0.113.7 | ray | https://alpha.supabase.co/rest/v1/todos | curl/8.5.0",
    ]);
    expect(tail.stderr()).toContain("Following the edge logs of alpha");

    // 150 new rows at once (more than the 100 of one logs.all page), one of them written into the
    // microsecond of the newest line already printed, and a row of another project
    const fresh = [event("late-same-us", before(30, 123456))];
    for (let i = 0; i < 150; i++)
      fresh.push(event(`new-${String(i).padStart(3, "0")}`, after(i, i % 3 === 0 ? 0 : 7)));
    fresh.push(
      JSON.stringify({
        id: "other",
        timestamp: after(5),
        project: "beta",
        event_message: "GET | 200 | other",
      }),
    );
    await server.backend.load("cloudflare.logs.prod", fresh);
    await tail.waitFor((out) => out.includes("new-149"));

    // a second batch later on
    await server.backend.load("cloudflare.logs.prod", [event("second-batch", after(600))]);
    await tail.waitFor((out) => out.includes("second-batch"));

    const lines = tail.stdout().trimEnd().split("\n");
    const followed = lines.slice(2).map((l) => l.split(" | ").at(-1));
    expect(followed).toEqual([
      "late-same-us",
      ...Array.from({ length: 150 }, (_, i) => `new-${String(i).padStart(3, "0")}`),
      "second-batch",
    ]);
    expect(tail.stdout()).not.toContain("other");

    tail.child.kill("SIGINT");
    expect(await tail.exited).toBe(0);
  });

  it("stops with the server's error when the token is refused", async () => {
    tail = startExample("log-tail", [], { QES_URL: server.url, QES_API_KEY: "wrong-token-0123456789" });
    expect(await tail.exited).toBe(1);
    expect(tail.stderr()).toContain("qes answered 401 unauthorized");
  });
});
