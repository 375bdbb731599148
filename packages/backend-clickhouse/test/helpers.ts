import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CompiledQuery, OutputColumn } from "@qes/core";

/**
 * chDB binds one data directory per process: every backend a test process opens shares this one,
 * each in a database of its own. The directory goes when the process exits.
 */
export const CHDB_TEST_PATH = join(tmpdir(), `qes-chdb-test-${process.pid}`);
let cleanupRegistered = false;
export function chdbTestPath(): string {
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.once("exit", () => rmSync(CHDB_TEST_PATH, { recursive: true, force: true }));
  }
  return CHDB_TEST_PATH;
}

let counter = 0;
/** A database name no other test of this process uses. */
export function uniqueDatabase(prefix = "qes_t"): string {
  return `${prefix}_${Date.now().toString(36)}_${counter++}`;
}

/** A hand-written query, as if compiled: engine SQL and the output columns' wire types. */
export function handQuery(
  sql: string,
  columns: OutputColumn[],
  params: CompiledQuery["params"] = [],
): CompiledQuery {
  return { sql, params, columns, schemaVersion: 0, dialect: "clickhouse", patternParams: [] };
}
