import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClickhouseBackend } from "@qes/backend-clickhouse";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { createPostgresBackend, dropPostgresStorage } from "@qes/backend-postgres";
import { type Backend, compileEndpoint, type EndpointDefinition, loadEndpoints } from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR } from "@qes/server";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_POSTGRES_URL } from "../support/backends.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * A direct `qes load` (the CLI writing to the store itself) keeps the stored queries `qes serve`
 * would serve compiling, as the ingest API does: a line whose widening would take a field out from
 * under one refuses its file, naming the line, the field and the query, and stores nothing of it.
 */
const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropPostgresStorage(TEST_POSTGRES_URL, schema);
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

interface Store {
  name: string;
  /** the CLI's environment for a fresh store */
  env(): Record<string, string>;
  /** the same store, opened by the test after the CLI exited */
  open(env: Record<string, string>): Backend;
}

const STORES: Store[] = [
  {
    name: "duckdb",
    env: () => ({
      QES_BACKEND: "duckdb",
      QES_DUCKDB_PATH: join(tempDir("qes-load-guard-"), "qes.duckdb"),
      QES_DUCKDB_THREADS: "1",
      QES_DUCKDB_MEMORY_LIMIT: "256MB",
    }),
    open: (env) => createDuckdbBackend({ path: env.QES_DUCKDB_PATH!, threads: 1, memoryLimit: "256MB" }),
  },
  {
    name: "postgres",
    env: () => {
      const schema = `qes_load_guard_${process.pid}_${Date.now().toString(36)}`;
      schemas.push(schema);
      return { QES_BACKEND: "postgres", QES_POSTGRES_URL: TEST_POSTGRES_URL, QES_POSTGRES_SCHEMA: schema };
    },
    open: (env) =>
      createPostgresBackend({ url: TEST_POSTGRES_URL, schema: env.QES_POSTGRES_SCHEMA!, pool: 2 }),
  },
  {
    name: "clickhouse",
    env: () => ({
      QES_BACKEND: "clickhouse",
      QES_CLICKHOUSE_PATH: join(tempDir("qes-load-guard-ch-"), "chdb"),
    }),
    open: (env) => createClickhouseBackend({ path: env.QES_CLICKHOUSE_PATH! }),
  },
];

const edge = (id: string, metadata: Record<string, unknown>) =>
  JSON.stringify({
    id,
    timestamp: "2025-01-15T11:00:00Z",
    project: "guarded",
    event_message: "GET | 200 | https://guarded.example.co/rest/v1/x",
    metadata,
  });
const REQUEST = { request: { path: "/rest/v1/x", url: "https://guarded.example.co/rest/v1/x" } };

/** A stored query of QES_ENDPOINTS_DIR over a source of its own: it unnests `metadata.response`. */
function endpointsDir(): string {
  const dir = tempDir("qes-load-guard-endpoints-");
  writeFileSync(
    join(dir, "myapp.errors.sql"),
    "select t.id from `myapp.logs` as t cross join unnest(t.metadata) as m cross join unnest(m.response) as r\n" +
      "where r.status_code >= 500 order by t.id",
  );
  writeFileSync(
    join(dir, "myapp.errors.json"),
    JSON.stringify({ id: "2d6f0e3a-8c1b-4e7d-9a5f-3b2c1d0e9f8a", maxRows: 100, params: {} }),
  );
  return dir;
}

/**
 * The kind of the field the test widens, which of `definitions` compile against the store's
 * schema, and the ids of project "guarded" that logs.all returns.
 */
async function inspect(
  store: Store,
  env: Record<string, string>,
  source: string,
  definitions: EndpointDefinition[],
): Promise<{ fieldKind: string | undefined; compiling: string[]; ids: string[] }> {
  const backend = store.open(env);
  await backend.init();
  try {
    const schema = await backend.schema();
    const compiling = definitions
      .filter((def) => {
        try {
          compileEndpoint(def, { schema, dialect: backend.dialect });
          return true;
        } catch {
          return false;
        }
      })
      .map((def) => def.name);
    const logsAll = (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).get("logs.all")!;
    const compiled = compileEndpoint(logsAll, { schema, dialect: backend.dialect });
    const values = compiled.params.map((p) => (p.name === "project" ? "guarded" : null));
    const result = await backend.execute(compiled, values, { maxRows: 1000, timeoutMs: 20_000 });
    const ids = result.rows.map((r) => String(r.id)).sort();
    const metadata = schema.sources[source]?.fields.metadata?.fields;
    const field = source === "myapp.logs" ? metadata?.response : metadata?.request;
    return { fieldKind: field?.kind, compiling, ids };
  } finally {
    await backend.close();
  }
}

describe.each(STORES)("qes load on $name keeps the served stored queries compiling", (store) => {
  it("refuses a file whose line would turn metadata.request (read by usage.api-counts) into a STRING", async () => {
    const env = store.env();
    const dir = tempDir("qes-load-guard-files-");
    const good = join(dir, "good.ndjson");
    writeFileSync(good, `${edge("g1", REQUEST)}\n`);
    expect(await runCli(["load", "--source", "cloudflare.logs.prod", good], { env })).toMatchObject({
      code: 0,
    });

    const hostile = join(dir, "hostile.ndjson");
    writeFileSync(hostile, `${edge("g2", REQUEST)}\n${edge("g3", REQUEST)}\n${edge("h1", { request: 5 })}\n`);
    const res = await runCli(["load", "--source", "cloudflare.logs.prod", hostile], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${hostile}:3: field "metadata.request" would change from RECORD to STRING`);
    expect(res.stderr).toContain("usage.api-counts");
    expect(res.stderr).toContain(`Nothing from ${hostile} was stored.`);

    const builtins = (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).list();
    const after = await inspect(store, env, "cloudflare.logs.prod", builtins);
    expect(after.fieldKind).toBe("record");
    expect(after.ids).toEqual(["g1"]);
    expect(after.compiling.sort()).toEqual(builtins.map((d) => d.name).sort());
  }, 120_000);

  it("protects a stored query over a source the store does not hold yet from that source's first file", async () => {
    // qes check passes the query against the empty source qes serve creates for it; a first load
    // that made metadata a STRING was taken, and serve then refused to start on the query
    const env = store.env();
    const served = { ...env, QES_ENDPOINTS_DIR: endpointsDir() };
    const dir = tempDir("qes-load-guard-files-");
    const hostile = join(dir, "first.ndjson");
    writeFileSync(
      hostile,
      `${JSON.stringify({ id: "f1", metadata: { response: { status_code: 502 } } })}\n` +
        `${JSON.stringify({ id: "f2", metadata: "flat" })}\n`,
    );
    const refused = await runCli(["load", "--source", "myapp.logs", hostile], { env: served });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`${hostile}:2: field "metadata" would change from RECORD to STRING`);
    expect(refused.stderr).toContain("stored query myapp.errors");
    expect(refused.stderr).toContain(`Nothing from ${hostile} was stored.`);
    const checked = await runCli(["check"], { env: served });
    expect(checked.code, checked.stderr).toBe(0);
  }, 120_000);

  it("protects the stored queries of QES_ENDPOINTS_DIR too, and only when they are served", async () => {
    const env = store.env();
    const endpoints = endpointsDir();
    const dir = tempDir("qes-load-guard-files-");
    const first = join(dir, "first.ndjson");
    writeFileSync(first, `${JSON.stringify({ id: "m1", metadata: { response: { status_code: 500 } } })}\n`);
    const hostile = join(dir, "hostile.ndjson");
    writeFileSync(
      hostile,
      `${JSON.stringify({ id: "m2", metadata: { response: { status_code: 503 } } })}\n` +
        `${JSON.stringify({ id: "m3", metadata: { response: "oops" } })}\n`,
    );
    const served = { ...env, QES_ENDPOINTS_DIR: endpoints };
    expect(await runCli(["load", "--source", "myapp.logs", first], { env: served })).toMatchObject({
      code: 0,
    });

    const refused = await runCli(["load", "--source", "myapp.logs", hostile], { env: served });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `${hostile}:2: field "metadata.response" would change from RECORD to STRING`,
    );
    expect(refused.stderr).toContain("stored query myapp.errors");
    const definitions = (await loadEndpoints([endpoints])).list();
    expect(await inspect(store, env, "myapp.logs", definitions)).toMatchObject({
      fieldKind: "record",
      compiling: ["myapp.errors"],
    });

    // without the directory nothing served reads the field: the widening is an ordinary one
    const taken = await runCli(["load", "--source", "myapp.logs", hostile], { env });
    // nothing but a progress line, which a load past 5 s writes (on a busy host, even of 2 events)
    expect(taken.stderr.split("\n").filter((l) => l !== "" && !/ events, [\d.]+ MB…$/.test(l))).toEqual([]);
    expect(taken.code).toBe(0);
    expect(await inspect(store, env, "myapp.logs", definitions)).toMatchObject({
      fieldKind: "scalar",
      compiling: [],
    });
  }, 120_000);
});
