import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QesProcess, startQes } from "../http/support/qes-process.ts";
import { runSql } from "../support/run-sql.ts";
import { collectOutput, runCli, spawnCli } from "./support/run-cli.ts";
import { holdDuckdbStore } from "./support/store-holder.ts";

/**
 * Attempts to break `qes load` forwarding to the `qes serve` that holds a DuckDB file: a file
 * beside the database left by a server that died while another process holds the store (its URL
 * now answered by a stranger), and a server restarted in the middle of a load (a new port, a new
 * token).
 */
const QUERY_TOKEN = "probe-query-token-0123456789";
const EVENT_TIME = new Date().toISOString();
const dirs: string[] = [];
const children: ChildProcess[] = [];
const servers: QesProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers) await s.stop("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempEnv(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "qes-forward-probe-"));
  dirs.push(dir);
  return {
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_DUCKDB_THREADS: "1",
    QES_API_KEYS: QUERY_TOKEN,
    QES_SEED: "false",
  };
}

const line = (id: string) =>
  JSON.stringify({
    id,
    timestamp: EVENT_TIME,
    project: "probe",
    event_message: `GET | 200 | /rest/v1/items?select=*&id=eq.${id}&padding=${"x".repeat(120)}`,
    metadata: { request: { path: "/rest/v1/items" } },
  });

/** a pid no process has (one that has just exited) */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((r) => child.on("exit", r));
  return child.pid as number;
}

/** the number of events, and of distinct ids, of a source in a DuckDB file no process holds */
async function stored(path: string, source: string): Promise<{ events: number; ids: number }> {
  const backend = createDuckdbBackend({ path });
  await backend.init();
  try {
    const [row] = await runSql(
      backend,
      `select count(*) as events, count(distinct id) as ids from \`${source}\``,
    );
    return { events: Number(row!.events), ids: Number(row!.ids) };
  } finally {
    await backend.close();
  }
}

describe("qes load and a stale <database>.serve.json", () => {
  let stranger: Server;
  const received: string[] = [];
  beforeAll(async () => {
    // any HTTP server that answers 200 to a POST
    stranger = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        received.push(body);
        res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      });
    });
    await new Promise<void>((r) => stranger.listen(0, "127.0.0.1", r));
  });
  afterAll(() => new Promise<void>((r) => stranger.close(() => r())));

  it("does not send events to whatever listens at the URL of a server that died, and says who holds the store", async () => {
    const env = tempEnv();
    // another process holds the store (DuckDB: one writer), and says so once it does
    const holder = await holdDuckdbStore(env.QES_DUCKDB_PATH!);
    children.push(holder);
    // left by a server SIGKILLed earlier; its port now belongs to a stranger
    const url = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
    writeFileSync(
      `${env.QES_DUCKDB_PATH}.serve.json`,
      `${JSON.stringify({ url, token: "qes_local_stale0123456789", pid: await deadPid() })}\n`,
      { mode: 0o600 },
    );
    const file = join(dirs.at(-1)!, "events.ndjson");
    writeFileSync(file, `${line("s1")}\n${line("s2")}\n`);

    const res = await runCli(["load", "--source", "probe.src", file], { env });
    expect(received).toEqual([]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/serve\.json/);
    holder.kill("SIGKILL");
  }, 120_000);

  it("refuses a server whose answer is not qes' (a 200 without the accepted count is not a commit)", async () => {
    const env = tempEnv();
    const file = join(dirs.at(-1)!, "events.ndjson");
    writeFileSync(file, `${line("t1")}\n`);
    const url = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
    const res = await runCli(["load", "--url", url, "--source", "probe.src", file], {
      env: { ...env, QES_INGEST_TOKEN: "some-ingest-token-0123456789" },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not a qes/i);
  });
});

describe("qes load while the serving qes restarts", () => {
  it("follows the restarted server (new port, new token) and stores every event once", async () => {
    const env = tempEnv();
    const EVENTS = 60_000; // ~14 MB: 14 requests of 1 MiB
    const file = join(dirs.at(-1)!, "big.ndjson");
    writeFileSync(file, `${Array.from({ length: EVENTS }, (_, i) => line(`r${i}`)).join("\n")}\n`);
    const first = await startQes(env);
    servers.push(first);

    const load = spawnCli(["load", "--source", "restart.src", file], { env });
    children.push(load);
    const { output, exited } = collectOutput(load);
    load.stdin.end();

    // kill the server once the load's first requests are committed
    const deadline = Date.now() + 60_000;
    for (;;) {
      const metrics = await fetch(`${first.url}/metrics`, { headers: { "X-API-KEY": QUERY_TOKEN } })
        .then((r) => r.text())
        .catch(() => "");
      const m = /qes_ingest_events_total\{[^}]*outcome="stored"[^}]*\} (\d+)/.exec(metrics);
      if (m && Number(m[1]) > 0) break;
      if (Date.now() > deadline) throw new Error(`no event was forwarded: ${output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.stop("SIGKILL");
    const second = await startQes(env);
    servers.push(second);

    expect(await exited, output()).toBe(0);
    await second.stop("SIGTERM");
    expect(await stored(env.QES_DUCKDB_PATH!, "restart.src")).toEqual({ events: EVENTS, ids: EVENTS });
  }, 240_000);
});

describe("qes load through a server that refuses a line of a later chunk", () => {
  it("says which events were stored before the refused line, instead of leaving it unknown", async () => {
    const env = tempEnv();
    const server = await startQes(env);
    servers.push(server);
    const GOOD = 10_000; // ~2.4 MB: the first chunks are committed before the last one is refused
    const file = join(dirs.at(-1)!, "late-refusal.ndjson");
    // the last line turns metadata.request (read by usage.api-counts) into a STRING: the server
    // refuses it, which the file's check before sending (syntax only) cannot know
    const hostile = JSON.stringify({
      id: "h",
      timestamp: EVENT_TIME,
      project: "probe",
      metadata: { request: 5 },
    });
    writeFileSync(file, `${Array.from({ length: GOOD }, (_, i) => line(`g${i}`)).join("\n")}\n${hostile}\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", file], { env });
    await server.stop("SIGTERM");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`line ${GOOD + 1}`);
    const { events } = await stored(env.QES_DUCKDB_PATH!, "cloudflare.logs.prod");
    expect(events).toBeGreaterThan(0);
    expect(res.stderr).toContain(`${events.toLocaleString("en-US")} events before it were stored`);
  }, 120_000);
});
