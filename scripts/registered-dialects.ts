import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { SqlEmitter } from "../packages/core/src/index.ts";

const PACKAGES = join(import.meta.dirname, "../packages");

function isDialect(value: unknown): value is SqlEmitter {
  const v = value as Partial<SqlEmitter> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.name === "string" &&
    typeof v.emit === "function" &&
    typeof v.expr === "function" &&
    typeof v.functions === "object"
  );
}

/**
 * The dialect of every backend package (packages/backend-*: the instance its entry point exports),
 * sorted by name: a new backend joins docs/functions.md without a list to edit.
 */
export async function registeredDialects(): Promise<SqlEmitter[]> {
  const found = new Map<string, SqlEmitter>();
  for (const dir of readdirSync(PACKAGES)
    .filter((d) => d.startsWith("backend-"))
    .sort()) {
    const pkg = JSON.parse(readFileSync(join(PACKAGES, dir, "package.json"), "utf8"));
    const entry = typeof pkg.exports === "string" ? pkg.exports : (pkg.exports?.["."] ?? pkg.main);
    const mod: Record<string, unknown> = await import(pathToFileURL(join(PACKAGES, dir, entry)).href);
    for (const value of Object.values(mod)) if (isDialect(value)) found.set(value.name, value);
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}
