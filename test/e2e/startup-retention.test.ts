import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { metricSum } from "../http/support/prometheus.ts";
import { startQes } from "../http/support/qes-process.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * Retention "runs at start-up" (issue 13): a `qes serve` restarted over a store holding expired
 * events answers its first requests without them. The run went on after the server listened, so a
 * query right after start-up still read the expired days (here 100,000 events, a run of ~1 s).
 */
const dir = mkdtempSync(join(tmpdir(), "qes-startup-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QUERY_TOKEN = "startup-retention-query-0123456789";
const DAY_MS = 86_400_000;

describe("qes serve's start-up retention", () => {
  it("has removed the expired events when the server starts answering", async () => {
    const env = {
      QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
      QES_SEED: "false",
      QES_API_KEYS: QUERY_TOKEN,
      QES_RETENTION_DAYS: "30,startup.src=3",
    };
    const file = join(dir, "events.ndjson");
    const now = Date.now();
    const lines = Array.from({ length: 200_000 }, (_, i) =>
      JSON.stringify({
        timestamp: new Date(now - (i % 2 === 1 ? 10 * DAY_MS : 0) - i).toISOString(),
        event_message: `event ${i}`,
      }),
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
    const load = await runCli(["load", "--source", "startup.src", file], { env });
    expect(load.code, load.stderr).toBe(0);
    const server = await startQes(env);
    try {
      const res = await fetch(`${server.url}/metrics`, { headers: { "X-API-KEY": QUERY_TOKEN } });
      expect(metricSum(await res.text(), "qes_source_events", { source: "startup.src" })).toBe(100_000);
    } finally {
      await server.stop("SIGTERM");
    }
  }, 180_000);
});
