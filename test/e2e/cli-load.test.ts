import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { compileEndpoint, loadEndpoints } from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR } from "@qes/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.ts";

let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "qes-cli-"));
  env = {
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_DUCKDB_MEMORY_LIMIT: "256MB",
    QES_DUCKDB_THREADS: "1",
  };
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const event = (id: string, second: number) =>
  JSON.stringify({
    id,
    timestamp: `2025-01-15T11:00:${String(second).padStart(2, "0")}Z`,
    project: "alpha",
    event_message: "GET | 200",
    metadata: { request: { path: "/rest/v1/x", url: "https://alpha.supabase.co/rest/v1/x" } },
  });

/** ids of the alpha rows logs.all returns from the CLI's store */
async function storedIds(): Promise<string[]> {
  const backend = createDuckdbBackend({
    path: env.QES_DUCKDB_PATH as string,
    memoryLimit: "256MB",
    threads: 1,
  });
  await backend.init();
  try {
    const registry = await loadEndpoints([BUILTIN_ENDPOINTS_DIR]);
    const logsAll = registry.get("logs.all");
    if (!logsAll) throw new Error("logs.all missing");
    const compiled = compileEndpoint(logsAll, { schema: await backend.schema(), dialect: backend.dialect });
    const values = compiled.params.map((p) => (p.name === "project" ? "alpha" : null));
    const result = await backend.execute(compiled, values, { maxRows: 1000, timeoutMs: 10_000 });
    return result.rows.map((r) => String(r.id)).sort();
  } finally {
    await backend.close();
  }
}

describe("qes load", () => {
  it("refuses a file with a malformed line whole, naming the line, and stores nothing of it", async () => {
    const bad = join(dir, "bad.ndjson");
    writeFileSync(
      bad,
      `${event("bad-1", 1)}\n${event("bad-2", 2)}\n{"event_message": "cut off",\n${event("bad-4", 4)}\n`,
    );
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", bad], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${bad}:3`);
    expect(res.stderr).toContain("Nothing from");
    expect(await storedIds()).toEqual([]);
  });

  it("loads good files and prints events, seconds and events per second", async () => {
    const good = join(dir, "good.ndjson");
    writeFileSync(good, `${event("good-1", 1)}\n${event("good-2", 2)}\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", good, "-"], {
      env,
      stdin: `${event("stdin-1", 3)}\n`,
    });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /good\.ndjson → cloudflare\.logs\.prod: 2 events in [\d.]+ s \([\d,]+ events\/s\)/,
    );
    expect(res.stdout).toMatch(/standard input → cloudflare\.logs\.prod: 1 events/);
    expect(res.stdout).toMatch(/total: 3 events/);
    expect(await storedIds()).toEqual(["good-1", "good-2", "stdin-1"]);
  });

  it("loads a file that starts with a UTF-8 byte order mark, as the ingest API takes one", async () => {
    // Notepad and PowerShell's UTF-8 write one; line 1 was refused as "not valid JSON"
    const bom = join(dir, "bom.ndjson");
    writeFileSync(bom, `\ufeff${event("bom-1", 6)}\r\n${event("bom-2", 7)}\r\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", bom], { env });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect((await storedIds()).filter((id) => id.startsWith("bom"))).toEqual(["bom-1", "bom-2"]);
  });

  it("says clearly when another process holds the DuckDB file", async () => {
    const backend = createDuckdbBackend({
      path: env.QES_DUCKDB_PATH as string,
      memoryLimit: "256MB",
      threads: 1,
    });
    await backend.init();
    try {
      const file = join(dir, "more.ndjson");
      writeFileSync(file, `${event("more-1", 5)}\n`);
      const res = await runCli(["load", "--source", "cloudflare.logs.prod", file], { env });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("qes serve");
    } finally {
      await backend.close();
    }
  });

  it("refuses a command line without --source with the usage", async () => {
    const res = await runCli(["load", "x.ndjson"], { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--source");
  });
});
