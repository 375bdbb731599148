import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QesError, type QesErrorCode } from "@qes/core";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../e2e/support/run-cli.ts";
import { BACKENDS, type BackendFixture } from "../support/backends.ts";
import { startSandboxServer, TOKEN } from "./support/sandbox-server.ts";

// DESIGN.md §2 and §5: stored queries pass the same sandbox as consumer SQL (known sources only,
// one SELECT, catalogue functions only); a definition in a QES_ENDPOINTS_DIR that does not stops
// `qes check` and start-up with its file, line and column.

interface BadDefinition {
  /** endpoint name: `<name>.sql` and `<name>.json` */
  name: string;
  sql: string;
  code: QesErrorCode;
  /** where the problem is: line, and the text its column points at */
  line: number;
  at: string;
}

const BAD: BadDefinition[] = [
  {
    name: "inherited.key",
    sql: "select *\nfrom `constructor`",
    code: "relation_not_allowed",
    line: 2,
    at: "`constructor`",
  },
  {
    name: "engine.file.function",
    sql: "select id,\n  read_csv('/etc/passwd') as leak\nfrom `cloudflare.logs.prod`",
    code: "function_not_allowed",
    line: 2,
    at: "read_csv",
  },
  {
    name: "engine.function.in.cte",
    sql: "with slow as (\n  select id, pg_sleep(5) as z from `postgres.logs`\n)\nselect id from slow",
    code: "function_not_allowed",
    line: 2,
    at: "pg_sleep",
  },
  {
    name: "settings.function",
    sql: "select id\nfrom `gotrue.logs.prod`\nwhere current_setting('is_superuser') = 'on'",
    code: "function_not_allowed",
    line: 3,
    at: "current_setting",
  },
  {
    name: "two.statements",
    sql: "select id from `cloudflare.logs.prod`;\ndelete from `cloudflare.logs.prod` where true",
    code: "statement_not_allowed",
    line: 2,
    at: "delete",
  },
  {
    name: "undeclared.parameter",
    sql: "select id\nfrom `cloudflare.logs.prod`\nwhere project = @tenant",
    code: "sql_invalid",
    line: 3,
    at: "@tenant",
  },
  {
    name: "reserved.name",
    sql: "select id as ok,\n  __qes_float('1') as x\nfrom `cloudflare.logs.prod`",
    code: "sql_invalid",
    line: 2,
    at: "__qes_float",
  },
];

/**
 * Definitions naming sources the store does not hold, with names ingest would create: checked as
 * those sources, empty, which \`qes serve\` creates at start-up (a query may be written before its
 * shippers send anything). A physical table's or an engine catalogue's name is only ever a log
 * source's name here: what the query reads is that source's own (empty) table.
 */
const NOT_YET: { name: string; sql: string; source: string }[] = [
  {
    name: "unknown.source",
    sql: "-- edge requests\nselect id, timestamp\nfrom `no.such.source`\nlimit 10",
    source: "no.such.source",
  },
  {
    name: "physical.table",
    sql: "select id\nfrom src_cloudflare_logs_prod",
    source: "src_cloudflare_logs_prod",
  },
  {
    name: "catalog.subquery",
    sql: "select id\nfrom `cloudflare.logs.prod`\nwhere id in (\n  select table_name from information_schema.tables)",
    source: "information_schema.tables",
  },
];

const SETTINGS = (i: number) =>
  JSON.stringify({ id: `5d0c8f7e-9a1b-4c2d-8e3f-${String(i).padStart(12, "0")}`, sandboxable: true });

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function endpointDir(defs: readonly { name: string; sql: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), "qes-sandbox-endpoints-"));
  dirs.push(dir);
  defs.forEach((d, i) => {
    writeFileSync(join(dir, `${d.name}.sql`), d.sql);
    writeFileSync(join(dir, `${d.name}.json`), SETTINGS(i));
  });
  return dir;
}

/** 1-based column of `at` on line `line` of the SQL */
function columnOf(d: BadDefinition): number {
  const text = d.sql.split("\n")[d.line - 1]!;
  const i = text.indexOf(d.at);
  if (i < 0) throw new Error(`"${d.at}" is not on line ${d.line} of ${d.name}`);
  return i + 1;
}

describe("qes check over a directory of hostile definitions", () => {
  it("fails each one with file:line:column and its code, and exits 1", async () => {
    const work = mkdtempSync(join(tmpdir(), "qes-sandbox-check-"));
    dirs.push(work);
    const dir = endpointDir([...BAD, ...NOT_YET]);
    const res = await runCli(["check", dir], {
      env: {
        QES_DUCKDB_PATH: join(work, "qes.duckdb"),
        QES_DUCKDB_THREADS: "1",
        QES_DUCKDB_MEMORY_LIMIT: "256MB",
      },
    });
    expect(res.code, res.stderr).toBe(1);
    // the built-ins still pass beside them
    expect(res.stdout).toMatch(/ok\s+logs\.all/);
    // a name no source may have gets no hint to create it
    expect(res.stderr).toContain("Table constructor is not a known log source.\n");
    for (const d of BAD) {
      expect(res.stderr).toContain(`FAIL  ${d.name}\n`);
      expect(res.stderr).toContain(`${join(dir, `${d.name}.sql`)}:${d.line}:${columnOf(d)}: ${d.code}: `);
    }
    // sources the store does not hold yet are checked as the empty ones qes serve creates
    for (const d of NOT_YET) {
      expect(res.stdout).toMatch(new RegExp(`ok\\s+${d.name.replace(".", "\\.")}\\s`));
      // qes serve creates none of them while a definition fails
      expect(res.stdout).toContain(
        `note  the store holds no source ${JSON.stringify(d.source)} yet: qes serve creates it, empty, for the stored queries that read it, once every definition passes\n`,
      );
      expect(res.stderr).not.toContain(`FAIL  ${d.name}\n`);
    }
  });

  it("passes definitions over sources the store does not hold yet, with a note each, and exits 0", async () => {
    const work = mkdtempSync(join(tmpdir(), "qes-sandbox-check-"));
    dirs.push(work);
    const nearMiss = { name: "near.miss", sql: "select id\nfrom `Postgres.Logs`", source: "Postgres.Logs" };
    const res = await runCli(["check", endpointDir([...NOT_YET, nearMiss])], {
      env: {
        QES_DUCKDB_PATH: join(work, "qes.duckdb"),
        QES_DUCKDB_THREADS: "1",
        QES_DUCKDB_MEMORY_LIMIT: "256MB",
      },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe("");
    for (const d of NOT_YET) {
      expect(res.stdout).toContain(
        `note  the store holds no source ${JSON.stringify(d.source)} yet: qes serve creates it, empty, for the stored queries that read it\n`,
      );
    }
    // source names are case-sensitive: a near miss of a source the store holds is named
    expect(res.stdout).toContain(
      'note  the store holds no source "Postgres.Logs" yet: qes serve creates it, empty, for the stored queries that read it; ' +
        'the store holds "postgres.logs", which differs only by case or punctuation (source names are case-sensitive): a misspelling?\n',
    );
    expect(res.stdout).toMatch(/\d+ endpoint\(s\) compile and pass the sandbox on duckdb\.\n$/);
  });
});

/** what starting a server with `dir` as QES_ENDPOINTS_DIR threw (undefined: it started, and was closed) */
function startupError(fixture: BackendFixture, dir: string): Promise<unknown> {
  return startSandboxServer(fixture, { QES_ENDPOINTS_DIR: dir }).then(
    async (server) => {
      await server.close();
      return undefined;
    },
    (e: unknown) => e,
  );
}

describe.each(BACKENDS)("start-up on $name", (fixture) => {
  it("refuses to start with engine.file.function, naming file, line and column", async () => {
    const d = BAD.find((b) => b.name === "engine.file.function")!;
    const dir = endpointDir([d]);
    const error = await startupError(fixture, dir);
    expect(error).toBeInstanceOf(QesError);
    const e = error as QesError;
    expect(e.code).toBe("invalid_config");
    expect(e.file).toBe(join(dir, `${d.name}.sql`));
    expect(e.line).toBe(d.line);
    expect(e.column).toBe(columnOf(d));
    expect(e.message).toContain(`${join(dir, `${d.name}.sql`)}:${d.line}:${columnOf(d)}: ${d.code}`);
  });

  it("refuses to start with a source no ingest could create, naming file, line and column", async () => {
    const d = BAD.find((b) => b.name === "inherited.key")!;
    const dir = endpointDir([d]);
    const error = await startupError(fixture, dir);
    expect(error).toBeInstanceOf(QesError);
    expect((error as QesError).message).toContain(
      `${join(dir, `${d.name}.sql`)}:${d.line}:${columnOf(d)}: relation_not_allowed`,
    );
  });

  it("starts with stored queries over sources it does not hold yet, created empty: their own tables, no rows", async () => {
    const server = await startSandboxServer(fixture, { QES_ENDPOINTS_DIR: endpointDir(NOT_YET) });
    try {
      const sources = (await server.backend.schema()).sources;
      for (const d of NOT_YET) {
        expect(sources[d.source], d.source).toBeDefined();
        const res = await fetch(`${server.url}/api/endpoints/query/${d.name}`, {
          headers: { "X-API-KEY": TOKEN },
        });
        expect(res.status, d.name).toBe(200);
        expect(((await res.json()) as { result: unknown[] }).result, d.name).toEqual([]);
      }
      // a physical table's name is a source of its own: its table is not the edge source's
      expect(sources.src_cloudflare_logs_prod!.table).not.toBe(sources["cloudflare.logs.prod"]!.table);
    } finally {
      await server.close();
    }
  });
});
