import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The default log destination (logging/batched-stdout.ts) holds a turn's lines and writes them
 * at its end: every line must still reach stdout, in order, however the process ends.
 */
const FIXTURE = fileURLToPath(new URL("./fixtures/log-lines.ts", import.meta.url));

function run(how: string, turns = 3): { lines: { n: number; msg: string }[]; status: number | null } {
  const child = spawnSync(process.execPath, ["--import", "tsx", FIXTURE, how, String(turns)], {
    encoding: "utf8",
    env: { ...process.env, LOG_LEVEL: "info" },
    maxBuffer: 64 * 1024 * 1024,
  });
  const lines = child.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { n: number; msg: string });
  return { lines, status: child.status };
}

describe("batched stdout logging", () => {
  for (const how of ["drain", "exit", "throw"]) {
    it(`writes every line in order when the process ends by ${how}`, () => {
      const { lines, status } = run(how);
      expect(status).toBe(how === "throw" ? 1 : 0);
      const numbered = lines.filter((l) => l.msg === "line");
      expect(numbered.length).toBe(2100);
      expect(numbered.map((l) => l.n)).toEqual([...Array(2100).keys()]);
    });
  }
});
