import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompiledQuery, OutputColumn } from "@qes/core";

/** A private directory for one test file's DuckDB files. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `qes-duckdb-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A hand-written query, as if compiled: engine SQL and the output columns' wire types. */
export function handQuery(sql: string, columns: OutputColumn[], schemaVersion = 0): CompiledQuery {
  return { sql, params: [], columns, schemaVersion, dialect: "duckdb", patternParams: [] };
}
