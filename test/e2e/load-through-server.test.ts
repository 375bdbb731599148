import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QesProcess, startQes } from "../http/support/qes-process.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * `qes load` against a DuckDB file a running `qes serve` holds: the events go through that
 * server's ingest API (found through `<file>.serve.json`, mode 0600, an ingest-only token made for
 * the run), or through `--url` with QES_INGEST_TOKEN; `qes retention` asks that server for a run.
 */
const QUERY_TOKEN = "forward-query-token-0123456789";
const INGEST_TOKEN = "forward-ingest-token-0123456789";
let dir: string;
let env: Record<string, string>;
let server: QesProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "qes-forward-"));
  env = {
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_DUCKDB_THREADS: "1",
    QES_API_KEYS: QUERY_TOKEN,
    QES_INGEST_KEYS: INGEST_TOKEN,
    QES_SEED: "false",
  };
  server = await startQes(env);
}, 120_000);
afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const edge = (id: string) =>
  JSON.stringify({
    id,
    timestamp: "2025-01-15T11:00:00Z",
    project: "forwarded",
    event_message: "GET | 200",
    metadata: { request: { path: "/rest/v1/x" } },
  });

async function forwardedIds(): Promise<string[]> {
  const res = await fetch(`${server.url}/api/endpoints/query/logs.all?project=forwarded`, {
    headers: { "X-API-KEY": QUERY_TOKEN },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { id: string }[] }).result.map((r) => r.id).sort();
}

describe("qes load while qes serve holds the DuckDB file", () => {
  it("the server writes its address and an ingest-only token beside the file, readable by its owner only", async () => {
    const file = `${env.QES_DUCKDB_PATH}.serve.json`;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const local = JSON.parse(readFileSync(file, "utf8")) as { url: string; token: string; pid: number };
    expect(local.url).toBe(server.url);
    expect(local.pid).toBe(server.pid);
    // the token ingests, and may not query
    const query = await fetch(`${server.url}/api/endpoints/query/logs.all?project=forwarded`, {
      headers: { "X-API-KEY": local.token },
    });
    expect(query.status).toBe(403);
  });

  it("sends the events to the server's ingest API instead of stopping, and they are served at once", async () => {
    const file = join(dir, "events.ndjson");
    writeFileSync(file, `${edge("f1")}\n\n${edge("f2")}\n${edge("f3")}\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", file], { env });
    expect(res.stderr).toContain("sending the events to it");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/3 events/);
    expect(await forwardedIds()).toEqual(["f1", "f2", "f3"]);
  });

  it("a malformed line refuses the whole file before anything is sent, naming the line", async () => {
    const file = join(dir, "bad.ndjson");
    writeFileSync(file, `${edge("b1")}\n${edge("b2")}\n{"broken":\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", file], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${file}:3`);
    expect(await forwardedIds()).toEqual(["f1", "f2", "f3"]);
  });

  it("a line of standard input that is not UTF-8, after chunks were sent, names its line and what was stored", async () => {
    // more than one 1 MiB chunk of good events, then a Latin-1 line: the reader refuses it (it
    // became U+FFFD and was sent), and the chunks before it were stored already
    // recent, so that the retention run below counts only the events of 2025 it removes
    const timestamp = new Date(Date.now() - 3_600_000).toISOString();
    const event = (id: string, message: string) =>
      JSON.stringify({
        id,
        timestamp,
        project: "stdin-utf8",
        event_message: message,
      });
    const good = Array.from({ length: 12_000 }, (_, i) => event(`n${i}`, "GET | 200"));
    const stdin = Buffer.concat([
      Buffer.from(`${good.join("\n")}\n`),
      Buffer.from(`${event("latin", "café")}\n`, "latin1"),
    ]);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", "-"], { env, stdin });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("line 12001: not valid UTF-8 text");
    expect(res.stderr).toMatch(/[\d,]+ events before it were stored/);
    expect(res.stderr).not.toContain("Nothing from");
    const sql = encodeURIComponent("select countif(id = 'latin') as latin, count(*) as n from edge_logs");
    const stored = await fetch(`${server.url}/api/endpoints/query/logs.all?project=stdin-utf8&sql=${sql}`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    const [row] = ((await stored.json()) as { result: { latin: number; n: number }[] }).result;
    expect(row?.latin).toBe(0);
    expect(row?.n).toBeGreaterThan(0);
  }, 120_000);

  it("--url sends to a named server with QES_INGEST_TOKEN, and needs that token", async () => {
    const file = join(dir, "url.ndjson");
    writeFileSync(file, `${edge("u1")}\n`);
    const other = { QES_DUCKDB_PATH: join(dir, "unrelated.duckdb") };
    const ok = await runCli(["load", "--url", server.url, "--source", "cloudflare.logs.prod", file], {
      env: { ...other, QES_INGEST_TOKEN: INGEST_TOKEN },
    });
    expect(ok.code).toBe(0);
    expect(await forwardedIds()).toEqual(["f1", "f2", "f3", "u1"]);
    const none = await runCli(["load", "--url", server.url, "--source", "x", file], { env: other });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("QES_INGEST_TOKEN");
  });

  it("POST /api/retention answers only the token beside the file: 401 without one, 403 for query and ingest tokens", async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/retention`, { method: "POST", headers });
    expect((await ask({})).status).toBe(401);
    expect((await ask({ "X-API-KEY": QUERY_TOKEN })).status).toBe(403);
    expect((await ask({ Authorization: `Bearer ${INGEST_TOKEN}` })).status).toBe(403);
    expect((await ask({ "X-API-KEY": `${INGEST_TOKEN}x` })).status).toBe(403);
    // nothing was removed by the refused asks: the events of 2025 are still served
    expect(await forwardedIds()).toEqual(["f1", "f2", "f3", "u1"]);
  });

  it("qes retention asks the server holding the file for a run, which removes what is older than its QES_RETENTION_DAYS", async () => {
    const recent = join(dir, "recent.ndjson");
    const now = JSON.parse(edge("r-new")) as Record<string, unknown>;
    now.timestamp = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(recent, `${JSON.stringify(now)}\n`);
    expect((await runCli(["load", "--source", "cloudflare.logs.prod", recent], { env })).code).toBe(0);
    expect(await forwardedIds()).toEqual(["f1", "f2", "f3", "r-new", "u1"]);
    // the server's policy (the default, 30 days) applies: the events of 2025-01-15 go
    const res = await runCli(["retention"], { env });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`run by the qes serve holding ${env.QES_DUCKDB_PATH} (pid ${server.pid})`);
    expect(res.stdout).toMatch(/cloudflare\.logs\.prod\s+4 events removed/);
    expect(await forwardedIds()).toEqual(["r-new"]);
    // a second run finds nothing more
    const again = await runCli(["retention"], { env });
    expect(again.stdout).toContain("retention: 0 events older");
  });

  it("removes the file at a clean stop", async () => {
    const file = `${env.QES_DUCKDB_PATH}.serve.json`;
    expect(existsSync(file)).toBe(true);
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});

describe("qes load --url to a server with smaller limits than its chunks", () => {
  let small: QesProcess;
  let smallDir: string;
  beforeAll(async () => {
    smallDir = mkdtempSync(join(tmpdir(), "qes-forward-small-"));
    // a 1 MiB chunk of these events is ~6,000 of them and ~1 MiB: past both limits
    small = await startQes({
      ...env,
      QES_DUCKDB_PATH: join(smallDir, "qes.duckdb"),
      QES_INGEST_QUEUE_EVENTS: "700",
      QES_INGEST_MAX_BYTES: "64KiB",
    });
  }, 120_000);
  afterAll(async () => {
    await small?.stop("SIGKILL");
    rmSync(smallDir, { recursive: true, force: true });
  });

  it("sends its chunks in smaller requests after a 413 instead of failing, each event once", async () => {
    const file = join(smallDir, "many.ndjson");
    const ids = Array.from({ length: 3000 }, (_, i) => `s${String(i).padStart(4, "0")}`);
    writeFileSync(file, `${ids.map(edge).join("\n")}\n`);
    const res = await runCli(["load", "--url", small.url, "--source", "small.limits", file], {
      env: { QES_DUCKDB_PATH: join(smallDir, "unrelated.duckdb"), QES_INGEST_TOKEN: INGEST_TOKEN },
    });
    expect(res.stderr).not.toContain("refused");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/3,000 events/);
    const metrics = await fetch(`${small.url}/metrics`, {
      headers: { Authorization: `Bearer ${QUERY_TOKEN}` },
    });
    expect(await metrics.text()).toMatch(/qes_source_events\{source="small\.limits"[^}]*\} 3000\b/);
  }, 120_000);

  it("still fails with the server's 413 on one event larger than it takes", async () => {
    const file = join(smallDir, "huge.ndjson");
    writeFileSync(
      file,
      `${edge("h1")}\n${JSON.stringify({ id: "h2", event_message: "x".repeat(70 * 1024) })}\n`,
    );
    const res = await runCli(["load", "--url", small.url, "--source", "small.huge", file], {
      env: { QES_DUCKDB_PATH: join(smallDir, "unrelated.duckdb"), QES_INGEST_TOKEN: INGEST_TOKEN },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("(413)");
  }, 120_000);
});

/** The same on embedded ClickHouse: chDB also allows one process per data directory. */
describe("qes load while qes serve holds the chDB directory", () => {
  let ch: QesProcess;
  let chDir: string;
  let chEnv: Record<string, string>;
  beforeAll(async () => {
    chDir = mkdtempSync(join(tmpdir(), "qes-forward-ch-"));
    chEnv = {
      QES_BACKEND: "clickhouse",
      QES_CLICKHOUSE_PATH: join(chDir, "qes.chdb"),
      QES_API_KEYS: QUERY_TOKEN,
      QES_INGEST_KEYS: INGEST_TOKEN,
      QES_SEED: "false",
    };
    ch = await startQes(chEnv);
  }, 120_000);
  afterAll(async () => {
    await ch?.stop("SIGKILL");
    rmSync(chDir, { recursive: true, force: true });
  });

  it("sends the events to the server's ingest API, and qes retention asks that server for a run", async () => {
    expect(statSync(`${chEnv.QES_CLICKHOUSE_PATH}.serve.json`).mode & 0o777).toBe(0o600);
    const file = join(chDir, "events.ndjson");
    writeFileSync(file, `${edge("c1")}\n${edge("c2")}\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", file], { env: chEnv });
    expect(res.stderr).toContain("sending the events to it");
    // before: chDB's own refusal, printed from native code, came first ("Code: 76. DB::Exception: Cannot lock file")
    expect(res.stderr).not.toContain("Exception");
    expect(res.code).toBe(0);
    const answer = await fetch(`${ch.url}/api/endpoints/query/logs.all?project=forwarded`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    expect(answer.status).toBe(200);
    const ids = ((await answer.json()) as { result: { id: string }[] }).result.map((r) => r.id).sort();
    expect(ids).toEqual(["c1", "c2"]);
    // the events of 2025-01-15 are past the server's 30 days: its run, asked by qes retention, removes them
    const retention = await runCli(["retention"], { env: chEnv });
    expect(retention.code).toBe(0);
    expect(retention.stderr).toBe("");
    expect(retention.stdout).toContain(`run by the qes serve holding ${chEnv.QES_CLICKHOUSE_PATH}`);
    expect(retention.stdout).toMatch(/cloudflare\.logs\.prod\s+2 events removed/);
  }, 120_000);
  it("a command that needs the directory itself says that the server holds it, with ClickHouse's advice only", async () => {
    const seed = await runCli(["seed", "--events", "10"], { env: chEnv });
    expect(seed.code).toBe(1);
    expect(seed.stderr).toContain(
      `the embedded ClickHouse store ${chEnv.QES_CLICKHOUSE_PATH} is held by another process`,
    );
    // before: DuckDB's advice followed, to point QES_DUCKDB_PATH elsewhere, which this store does not read
    expect(seed.stderr).not.toMatch(/DuckDB|QES_DUCKDB_PATH/);
    expect(seed.stderr).toContain(`(pid ${ch.pid})`);
    expect(seed.stderr).not.toContain("Exception");
  }, 120_000);
});
