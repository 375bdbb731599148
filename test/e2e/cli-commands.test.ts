import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/endpoints", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "qes-cli-commands-"));
const env = {
  QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
  QES_DUCKDB_THREADS: "1",
  QES_DUCKDB_MEMORY_LIMIT: "256MB",
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("qes check", () => {
  it("passes the built-ins and an operator's directory", async () => {
    const res = await runCli(["check", FIXTURES], { env });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ok\s+auth\.errors/);
    expect(res.stdout).toMatch(/ok\s+logs\.all/);
    expect(res.stdout).toMatch(/ok\s+usage\.api-counts/);
  });

  it("reports file, line and column of a definition that fails, with a non-zero exit", async () => {
    const bad = mkdtempSync(join(dir, "bad-"));
    writeFileSync(
      join(bad, "broken.sql"),
      "select id\nfrom `cloudflare.logs.prod`\nwhere read_csv('/etc/passwd') is not null",
    );
    writeFileSync(join(bad, "broken.json"), JSON.stringify({ id: "5d0c8f7e-9a1b-4c2d-8e3f-4a5b6c7d8e9f" }));
    const res = await runCli(["check", bad], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("FAIL  broken");
    expect(res.stderr).toMatch(new RegExp(`${join(bad, "broken.sql")}:3:\\d+: function_not_allowed`));
  });

  it("names the file and field of an invalid settings file", async () => {
    const bad = mkdtempSync(join(dir, "bad-json-"));
    writeFileSync(join(bad, "x.sql"), "select 1");
    writeFileSync(
      join(bad, "x.json"),
      JSON.stringify({ id: "5d0c8f7e-9a1b-4c2d-8e3f-4a5b6c7d8e9f", maxrows: 3 }),
    );
    const res = await runCli(["check", bad], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${join(bad, "x.json")}: "maxrows" is not a known setting`);
  });
});

describe("qes endpoints", () => {
  it("lists id, name and settings of every endpoint", async () => {
    const res = await runCli(["endpoints"], { env: { ...env, QES_ENDPOINTS_DIR: FIXTURES } });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("logs.all  6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19");
    expect(res.stdout).toContain("usage.api-counts  0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63");
    expect(res.stdout).toContain("auth.errors  3f6e2a9c-71d4-4b8e-a0c5-9d2b7e1f4a68");
    expect(res.stdout).toMatch(/caching\s+900 s/);
    expect(res.stdout).toMatch(/warming\s+every 300 s/);
  });
});

describe("qes seed", () => {
  it("loads the requested number of events over the nine sources", async () => {
    const res = await runCli(["seed", "--events", "900", "--days", "2"], { env });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/cloudflare\.logs\.prod\s+495 events/);
    expect(res.stdout).toMatch(/pgbouncer\.logs\.prod\s+18 events/);
    expect(res.stdout).toMatch(/seeded 900 events over 2 day\(s\)/);
  });

  it("adds new events at each run; a --seed run again stores its events once", async () => {
    // a load stores an id once: a generator seeded alike at each run made the same ids
    for (let run = 0; run < 2; run++) {
      const res = await runCli(["seed", "--events", "90"], { env });
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/seeded 90 events over 7 day\(s\) in [^\n]*events\/s\)\n/);
    }
    const first = await runCli(["seed", "--events", "90", "--seed", "7"], { env });
    expect(first.stdout).not.toContain("stored already");
    const again = await runCli(["seed", "--events", "90", "--seed", "7"], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("(90 of them stored already: same --seed)");
  }, 60_000);

  it("refuses a bad --events with the usage", async () => {
    const res = await runCli(["seed", "--events", "lots"], { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--events");
  });
});

describe("qes retention", () => {
  it("says that every source keeps its events forever, not that another process runs it", async () => {
    for (const days of ["0", "0,no.such.source=3"]) {
      const res = await runCli(["retention"], { env: { ...env, QES_RETENTION_DAYS: days } });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe(
        "retention: every source keeps its events forever (QES_RETENTION_DAYS 0); nothing to remove\n",
      );
      // an override for a source the store does not hold is named, as qes serve names it
      if (days === "0") expect(res.stderr).not.toContain("warning:");
      else
        expect(res.stderr).toContain(
          "warning: QES_RETENTION_DAYS names no.such.source, which the store does not hold",
        );
    }
  });
});
