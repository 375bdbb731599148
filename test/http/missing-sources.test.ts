import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import { type Backend, QesError } from "@qes/core";
import { createLogger, loadConfig, parseApiKeys, startService } from "@qes/server";
import { afterAll, describe, expect, it } from "vitest";
import { BACKENDS, TEST_POSTGRES_URL } from "../support/backends.ts";
import { event, ingestEnv, postLogs, QUERY_TOKEN } from "./support/ingest.ts";

/**
 * Stored queries over sources the store does not hold yet (core's `missingSources`): `qes serve`
 * creates them, empty, at start-up. How they are named in a query, what they are named, a
 * start-up that is refused, a restart, QES_INGEST_MAX_SOURCES, and two instances at once.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function endpointDir(defs: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "qes-missing-sources-"));
  dirs.push(dir);
  Object.entries(defs).forEach(([name, sql], i) => {
    writeFileSync(join(dir, `${name}.sql`), sql);
    writeFileSync(
      join(dir, `${name}.json`),
      JSON.stringify({ id: `7b1c2d3e-4f5a-4b6c-8d7e-${String(i).padStart(12, "0")}`, params: {} }),
    );
  });
  return dir;
}

type LogLine = { level: number; msg: string; source?: string };

function serve(backend: Backend, env: Record<string, string>, logs: LogLine[] = []) {
  const config = loadConfig({ ...ingestEnv(env), NODE_ENV: "test", PORT: "0" });
  return startService({
    config,
    backend,
    keys: parseApiKeys(config.apiKeys ?? ""),
    logger: createLogger({ destination: { write: (line: string) => void logs.push(JSON.parse(line)) } }),
    host: "127.0.0.1",
  });
}

const warnings = (logs: LogLine[]) => logs.filter((l) => l.level === 40).map((l) => l.msg);

/** each query and the sources it names (every one missing from a fresh store) */
const SHAPES: Record<string, { sql: string; sources: string[] }> = {
  "same.one": { sql: "select id from `m.same`", sources: ["m.same"] },
  "same.two": { sql: "select count(*) as n from `m.same`", sources: ["m.same"] },
  cte: { sql: "with c as (select id from `m.cte`) select id from c", sources: ["m.cte"] },
  subquery: { sql: "select id from (select id from `m.sub`) as s", sources: ["m.sub"] },
  "in.subquery": {
    sql: "select id from `m.same` where id in (select id from `m.in`)",
    sources: ["m.same", "m.in"],
  },
  join: { sql: "select a.id from `m.ja` as a join `m.jb` as b on a.id = b.id", sources: ["m.ja", "m.jb"] },
  union: { sql: "select id from `m.ua` union all select id from `m.ub`", sources: ["m.ua", "m.ub"] },
  comma: { sql: "select a.id from `m.ca` as a, `m.cb` as b", sources: ["m.ca", "m.cb"] },
  // names that differ only by case, or fold to one table name
  "case.upper": { sql: "select id from `Fold.Logs`", sources: ["Fold.Logs"] },
  "case.lower": { sql: "select id from `fold.logs`", sources: ["fold.logs"] },
  "fold.dash": { sql: "select id from `fold-logs`", sources: ["fold-logs"] },
  "fold.space": { sql: "select id from `fold logs`", sources: ["fold logs"] },
  // engine catalogues and qes's own relations: only ever a log source's name here
  "is.tables": { sql: "select id from information_schema.tables", sources: ["information_schema.tables"] },
  "is.upper": { sql: "select id from INFORMATION_SCHEMA.TABLES", sources: ["INFORMATION_SCHEMA.TABLES"] },
  "is.bare": { sql: "select id from INFORMATION_SCHEMA", sources: ["INFORMATION_SCHEMA"] },
  "pg.class": { sql: "select id from pg_catalog.pg_class", sources: ["pg_catalog.pg_class"] },
  "system.tables": { sql: "select id from system.tables", sources: ["system.tables"] },
  "main.sources": { sql: "select id from main.qes_sources", sources: ["main.qes_sources"] },
  meta: { sql: "select id from qes_meta", sources: ["qes_meta"] },
  physical: { sql: "select id from src_cloudflare_logs_prod", sources: ["src_cloudflare_logs_prod"] },
};
for (let i = 0; i < 30; i++)
  SHAPES[`many.${i}`] = { sql: `select id from \`many.src${i}\``, sources: [`many.src${i}`] };

describe.each(BACKENDS)("stored queries over sources the store lacks, on $name", (fixture) => {
  it("creates each source they name once, with a table of its own, and a restart creates none again", async () => {
    const handle = await fixture.create();
    try {
      const { backend } = handle;
      const dir = endpointDir(Object.fromEntries(Object.entries(SHAPES).map(([n, s]) => [n, s.sql])));
      const named = [...new Set(Object.values(SHAPES).flatMap((s) => s.sources))];
      const before = await backend.schema();
      const logs: LogLine[] = [];
      const first = await serve(backend, { QES_ENDPOINTS_DIR: dir }, logs);
      const created = await backend.schema();
      try {
        expect(Object.keys(created.sources).sort()).toEqual(
          [...Object.keys(before.sources), ...named].sort(),
        );
        const tables = Object.values(created.sources).map((s) => s.table);
        expect(new Set(tables).size).toBe(tables.length);
        for (const s of Object.values(before.sources)) expect(created.sources[s.name]).toEqual(s);
        for (const name of named) expect(created.sources[name]!.table).toMatch(/^src_[a-z0-9_]+$/);
        // one warning per source, each named once
        expect(
          logs
            .filter((l) => l.msg.startsWith("created the source"))
            .map((l) => l.source)
            .sort(),
        ).toEqual([...named].sort());
        for (const name of Object.keys(SHAPES)) {
          const res = await fetch(`${first.url}/api/endpoints/query/${name}`, {
            headers: { "X-API-KEY": QUERY_TOKEN },
          });
          const body = (await res.json()) as { result: unknown[] };
          expect(res.status, name).toBe(200);
          expect(body.result, name).toEqual(name === "same.two" ? [{ n: 0 }] : []);
        }
        const metrics = await (
          await fetch(`${first.url}/metrics`, { headers: { "X-API-KEY": QUERY_TOKEN } })
        ).text();
        expect(metrics).toContain('qes_source_events{source="m.same",service="qes"} 0\n');
        expect(metrics).toContain('qes_source_events{source="information_schema.tables",service="qes"} 0\n');
      } finally {
        await first.close();
      }
      const again: LogLine[] = [];
      const second = await serve(backend, { QES_ENDPOINTS_DIR: dir }, again);
      try {
        expect(await backend.schema()).toEqual(created);
        expect(again.filter((l) => l.msg.startsWith("created the source"))).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      await handle.dispose();
    }
  }, 120_000);

  it("reads an unquoted three-part name as that source, and creates none without its middle part", async () => {
    // `cloudflare.logs.prod` unquoted was read as `cloudflare.prod`: start-up created that, empty,
    // and the query answered no rows for good
    const handle = await fixture.create();
    try {
      const dir = endpointDir({
        unquoted: "select id from cloudflare.logs.prod order by id",
        "per.part": "select id from `cloudflare`.`logs`.`prod` order by id",
        "new.unquoted": "select id from three.part.name order by id",
      });
      const logs: LogLine[] = [];
      const s = await serve(handle.backend, { QES_ENDPOINTS_DIR: dir }, logs);
      try {
        const sources = (await handle.backend.schema()).sources;
        expect(sources["cloudflare.prod"]).toBeUndefined();
        expect(sources["three.name"]).toBeUndefined();
        expect(logs.filter((l) => l.msg.startsWith("created the source")).map((l) => l.source)).toEqual([
          "three.part.name",
        ]);
        const posted = await postLogs(s.url, "cloudflare.logs.prod", JSON.stringify([event("u1", "GET /")]));
        expect(posted.status, JSON.stringify(posted.body)).toBe(200);
        for (const name of ["unquoted", "per.part"]) {
          const res = await fetch(`${s.url}/api/endpoints/query/${name}`, {
            headers: { "X-API-KEY": QUERY_TOKEN },
          });
          expect(res.status, name).toBe(200);
          expect(((await res.json()) as { result: unknown[] }).result, name).toEqual([{ id: "u1" }]);
        }
      } finally {
        await s.close();
      }
    } finally {
      await handle.dispose();
    }
  }, 120_000);

  it("names a source of the store whose name differs only by case or punctuation beside the one it creates", async () => {
    const handle = await fixture.create();
    try {
      const dir = endpointDir({
        cased: "select id from `Cloudflare.Logs.Prod`",
        dashed: "select id from `postgres-logs`",
        unlike: "select id from `myapp.logs`",
      });
      const logs: LogLine[] = [];
      const s = await serve(handle.backend, { QES_ENDPOINTS_DIR: dir }, logs);
      await s.close();
      const created = logs.filter((l) => l.msg.startsWith("created the source"));
      const hint = (held: string) =>
        `; the store holds ${JSON.stringify(held)}, which differs only by case or punctuation (source names are case-sensitive): a misspelling?`;
      expect(created.find((l) => l.source === "Cloudflare.Logs.Prod")?.msg).toContain(
        hint("cloudflare.logs.prod"),
      );
      expect(created.find((l) => l.source === "postgres-logs")?.msg).toContain(hint("postgres.logs"));
      expect(created.find((l) => l.source === "myapp.logs")?.msg).not.toContain("misspelling");
    } finally {
      await handle.dispose();
    }
  }, 120_000);

  it("creates none of them when another definition stops start-up", async () => {
    // a misspelt source fixed together with the bad definition stayed in the store for good
    const handle = await fixture.create();
    try {
      const dir = endpointDir({
        early: "select id from `early.logs`",
        broken: "select id\nfrom `broken.logs`, read_csv('/etc/passwd')",
      });
      const error = await serve(handle.backend, { QES_ENDPOINTS_DIR: dir }).then(
        async (s) => {
          await s.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(QesError);
      expect((error as QesError).message).toContain(`${join(dir, "broken.sql")}:2:`);
      expect((error as QesError).message).toContain("read_csv");
      const sources = (await handle.backend.schema()).sources;
      expect(sources["early.logs"]).toBeUndefined();
      expect(sources["broken.logs"]).toBeUndefined();
    } finally {
      await handle.dispose();
    }
  }, 120_000);

  it("creates them past QES_INGEST_MAX_SOURCES, saying that ingest then creates no new source", async () => {
    // the limit bounds what ingest tokens create; these the operator's own queries read
    const handle = await fixture.create();
    try {
      const held = Object.keys((await handle.backend.schema()).sources).length;
      const dir = endpointDir({
        windowed:
          "select id from `lim.win` where timestamp > timestamp_sub(current_timestamp(), interval 7 day)",
        // unquoted: the warning looked for a source named `bare`
        unquoted:
          "select id from lim.bare where timestamp > timestamp_sub(current_timestamp(), interval 3 day)",
        guarded:
          "select t.id, r.status_code from `lim.guard` as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r",
      });
      const logs: LogLine[] = [];
      const s = await serve(
        handle.backend,
        { QES_ENDPOINTS_DIR: dir, QES_INGEST_MAX_SOURCES: String(held), QES_RETENTION_DAYS: "1" },
        logs,
      );
      try {
        expect(Object.keys((await handle.backend.schema()).sources)).toHaveLength(held + 3);
        expect(warnings(logs)).toContain(
          `the store holds ${held + 3} sources with those the stored queries read, more than QES_INGEST_MAX_SOURCES (${held}): ` +
            "they were created all the same, but ingest creates no new source until the limit is raised",
        );
        // the short-window warning of QES_RETENTION_DAYS covers them
        expect(warnings(logs)).toContain(
          "endpoint windowed reads up to 7 days of lim.win, which keeps 1 days (QES_RETENTION_DAYS): older events will be missing from its answers",
        );
        expect(warnings(logs)).toContain(
          "endpoint unquoted reads up to 3 days of lim.bare, which keeps 1 days (QES_RETENTION_DAYS): older events will be missing from its answers",
        );
        // a source of a stored query takes events, a new one is refused, and the guard holds
        const good = event("g1", "m", { metadata: { response: { status_code: 503 } } });
        expect((await postLogs(s.url, "lim.guard", JSON.stringify([good]))).body).toEqual({ accepted: 1 });
        const refused = await postLogs(s.url, "lim.other", JSON.stringify([event("o1", "m")]));
        expect(refused.status).toBe(400);
        expect(refused.body.error.message).toContain("QES_INGEST_MAX_SOURCES");
        const flat = await postLogs(
          s.url,
          "lim.guard",
          JSON.stringify([event("b1", "m", { metadata: "flat" })]),
        );
        expect(flat.status).toBe(400);
        expect(flat.body.error.code).toBe("invalid_event");
      } finally {
        await s.close();
      }
    } finally {
      await handle.dispose();
    }
  }, 120_000);
});

describe("two PostgreSQL instances starting at once over one schema", () => {
  it("both start, and each source their stored queries name is created once", async () => {
    const schema = `qes_missing_race_${process.pid}_${Date.now().toString(36)}`;
    const a = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 4 });
    const b = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 4 });
    try {
      await a.init();
      await b.init();
      for (let round = 0; round < 3; round++) {
        const defs: Record<string, string> = {};
        for (let i = 0; i < 5; i++)
          defs[`r${round}.q${i}`] =
            `select id from \`race${round}.src${i}\` join \`race${round}.shared\` using (id)`;
        const dir = endpointDir(defs);
        const [sa, sb] = await Promise.all([
          serve(a, { QES_ENDPOINTS_DIR: dir }),
          serve(b, { QES_ENDPOINTS_DIR: dir }),
        ]);
        await sa.close();
        await sb.close();
        const seen = await a.schema();
        const names = Object.keys(seen.sources).filter((n) => n.startsWith(`race${round}.`));
        expect(names).toHaveLength(6);
        expect(names.map((n) => seen.sources[n]!.table).sort()).toEqual(
          ["shared", "src0", "src1", "src2", "src3", "src4"].map((t) => `src_race${round}_${t}`),
        );
        expect(await b.schema()).toEqual(seen);
      }
    } finally {
      await a.close();
      await b.close();
      await dropPostgresStorage(TEST_POSTGRES_URL, schema);
    }
  }, 120_000);
});
