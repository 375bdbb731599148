import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** every module `entry` imports, directly or not (static imports and re-exports; types too) */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/g)) {
      const spec = m[1]!;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else packages.add(spec);
    }
  };
  visit(resolve(SRC, entry));
  return { files, packages };
}

describe("@qes/core/events", () => {
  // a loader's worker thread imports it: the compiler's modules would cost it ~0.4 s of CPU each
  it("reaches none of the compiler: no SQL parser, dialect, sandbox or endpoint module", () => {
    const { files, packages } = importGraph("events.ts");
    const relative = [...files].map((f) => f.slice(SRC.length));
    expect(
      relative.filter((f) =>
        /^(compile|parse|dialect|sandbox|endpoint|catalogue|params|redaction)\//.test(f),
      ),
    ).toEqual([]);
    expect([...packages].filter((p) => !p.startsWith("node:"))).toEqual(["lossless-json"]);
  });

  it("exports what the PostgreSQL load worker uses", async () => {
    const events = await import("../src/events.ts");
    for (const name of [
      "parseEvent",
      "schemaCoversEvent",
      "createRowEncoder",
      "civilFromDays",
      "isQesError",
    ]) {
      expect(typeof (events as Record<string, unknown>)[name], name).toBe("function");
    }
  });
});
