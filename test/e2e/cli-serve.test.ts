import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "./support/run-cli.ts";

/**
 * `qes serve --demo` as a newcomer runs it: in an empty directory, no configuration but a free
 * port. It seeds the store, generates a token, prints URL, token and curl lines, serves, keeps
 * adding events, and stops cleanly on SIGTERM.
 */
const PROJECT = "kzbtwfqmxrhyglnpvcas";
let dir: string;
let child: ReturnType<typeof spawnCli>;
let stdout = "";
let stderr = "";
let url: string;
let token: string;
let curls: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "qes-serve-"));
  child = spawnCli(["serve", "--demo"], { cwd: dir, env: { PORT: "0", QES_DUCKDB_THREADS: "1" } });
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const deadline = Date.now() + 90_000;
  while (!/\nTry:\n(.*\n)+\n/.test(stdout)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`qes serve did not start:\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1] as string;
  token = /API token: (\S+)/.exec(stdout)?.[1] as string;
  curls = stdout.split("\n").filter((l) => l.trim().startsWith("curl "));
}, 120_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const query = async (path: string) => {
  const res = await fetch(`${url}${path}`, { headers: { "X-API-KEY": token } });
  return { status: res.status, body: (await res.json()) as { result: Record<string, unknown>[] } };
};

describe("qes serve --demo in an empty directory", () => {
  it("generates a token once into ./data/api-key (mode 0600) and prints it", () => {
    const file = join(dir, "data", "api-key");
    expect(readFileSync(file, "utf8").trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(stdout).toContain("seeding");
  });

  it("prints a curl line per endpoint (and interval) that works as printed", async () => {
    expect(curls).toHaveLength(4);
    for (const line of curls) {
      const m = /-H "X-API-KEY: (\S+)" '([^']+)'/.exec(line);
      expect(m?.[1]).toBe(token);
      const res = await fetch(m?.[2] as string, { headers: { "X-API-KEY": token } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: unknown[] };
      expect(body.result.length).toBeGreaterThan(0);
    }
  });

  it("serves the 100 newest edge rows of a seeded project, newest first, by name and by the printed id", async () => {
    const res = await query(`/api/endpoints/query/logs.all?project=${PROJECT}`);
    expect(res.status).toBe(200);
    const id = /\n {2}logs\.all\s+([0-9a-f-]{36})\n/.exec(stdout)?.[1];
    expect(id).toBe("6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19");
    // demo events arrive every 3 s: compare two answers taken back to back, retrying a race
    const ids = async (path: string) => (await query(path)).body.result.map((r) => r.id);
    let same = false;
    for (let attempt = 0; attempt < 5 && !same; attempt++) {
      const [byName, byId] = [
        await ids(`/api/endpoints/query/logs.all?project=${PROJECT}`),
        await ids(`/api/endpoints/query/${id}?project=${PROJECT}`),
      ];
      same = byId.length === 100 && JSON.stringify(byId) === JSON.stringify(byName);
    }
    expect(same).toBe(true);
    const rows = res.body.result;
    expect(rows).toHaveLength(100);
    const times = rows.map((r) => r.timestamp as number);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    for (const r of rows) expect(r.event_message).toContain(`https://${PROJECT}.supabase.co/`);
  });

  it("serves ascending usage buckets for every interval", async () => {
    for (const interval of ["hourly", "daily", "minutely"]) {
      const res = await query(
        `/api/endpoints/query/usage.api-counts?project=${PROJECT}&interval=${interval}`,
      );
      const stamps = res.body.result.map((r) => r.timestamp as string);
      expect(stamps.length).toBeGreaterThan(interval === "hourly" ? 0 : 1);
      expect([...stamps].sort()).toEqual(stamps);
    }
  });

  it("keeps adding fresh events in demo mode", async () => {
    const newest = async () =>
      (await query(`/api/endpoints/query/logs.all?project=${PROJECT}`)).body.result[0]?.timestamp as number;
    const first = await newest();
    const deadline = Date.now() + 15_000;
    let later = first;
    while (later === first && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      later = await newest();
    }
    expect(later).toBeGreaterThan(first);
  });

  it("never writes the token into its JSON logs", () => {
    const logLines = stdout.split("\n").filter((l) => l.startsWith("{"));
    expect(logLines.some((l) => l.includes('"msg":"request"'))).toBe(true);
    for (const l of logLines) expect(l).not.toContain(token);
  });

  it("stops cleanly on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    const code = await exited;
    if (code !== 0) console.log("STDERR", stderr.slice(-3000));
    expect(code).toBe(0);
    expect(stderr).toContain("SIGTERM");
  });
});
