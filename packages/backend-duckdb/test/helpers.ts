import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Backend,
  type CompiledQuery,
  compileEndpoint,
  type EndpointDefinition,
  type OutputColumn,
} from "@qes/core";
import { afterAll, beforeAll } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";

/** A private directory for one test file's DuckDB files. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `qes-duckdb-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The test file's backend, on a DuckDB file in a directory of its own: opened before the file's
 * tests (`beforeAll`), closed and its directory removed after them. The value is a stand-in that
 * reads through to the backend the hook opened, so a file declares it once, as a constant.
 */
export function fileBackend(prefix: string): { backend: Backend; dir: string } {
  const tmp = tempDir(prefix);
  let opened: Backend | undefined;
  beforeAll(async () => {
    opened = createDuckdbBackend({ path: join(tmp.dir, "qes.duckdb") });
    await opened.init();
  });
  afterAll(async () => {
    await opened?.close();
    tmp.cleanup();
  });
  const backend = new Proxy({} as Backend, {
    get(_, key) {
      if (!opened) throw new Error(`the backend of ${prefix} is opened in beforeAll: read it in a test`);
      const value = Reflect.get(opened, key, opened);
      return typeof value === "function" ? value.bind(opened) : value;
    },
  });
  return { backend, dir: tmp.dir };
}

/** A hand-written query, as if compiled: engine SQL and the output columns' wire types. */
export function handQuery(sql: string, columns: OutputColumn[], schemaVersion = 0): CompiledQuery {
  return { sql, params: [], columns, schemaVersion, dialect: "duckdb", patternParams: [] };
}

/** `sql` as a sandboxable endpoint without parameters */
export function sqlEndpoint(sql: string): EndpointDefinition {
  return {
    id: "00000000-0000-4000-8000-00000000c0f1",
    name: "test-sql",
    sql,
    sqlFile: "test-sql.sql",
    maxRows: 1000,
    cacheTtlSeconds: 0,
    sandboxable: true,
    redactPii: false,
    params: {},
    version: sql,
  };
}

/** `sql` compiled as a sandboxable endpoint without parameters, against the backend's schema now */
export async function compileSql(backend: Backend, sql: string): Promise<CompiledQuery> {
  return compileEndpoint(sqlEndpoint(sql), { schema: await backend.schema(), dialect: backend.dialect });
}

/**
 * A query that reads for a while: the pairs of the first `ids` ids of `table` (30,000: seconds),
 * for tests of what a writer does while queries run. Its answer is `ids * (ids - 1) / 2`.
 */
export function pairsCountQuery(table: string, ids: number): CompiledQuery {
  return handQuery(
    `SELECT count(*) AS n FROM (SELECT id FROM "${table}" LIMIT ${ids}) a, (SELECT id FROM "${table}" LIMIT ${ids}) b WHERE a.id < b.id`,
    [{ name: "n", type: { kind: "scalar", type: "INT64" } }],
  );
}
