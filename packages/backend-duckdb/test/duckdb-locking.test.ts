import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { QesError } from "@qes/core";
import { afterAll, describe, expect, it } from "vitest";
import { createDuckdbBackend } from "../src/index.ts";
import { tempDir } from "./helpers.ts";

const tmp = tempDir("locking");
afterAll(() => tmp.cleanup());

describe("one process per DuckDB file", () => {
  it("refuses a second process with store_locked and a message that says what to do", async () => {
    const path = join(tmp.dir, "held.duckdb");
    const server = createDuckdbBackend({ path });
    await server.init();
    try {
      const script = join(tmp.dir, "open.mts");
      const index = new URL("../src/index.ts", import.meta.url).pathname;
      writeFileSync(
        script,
        `import { createDuckdbBackend } from ${JSON.stringify(index)};\n` +
          `try { await createDuckdbBackend({ path: ${JSON.stringify(path)} }).init(); console.log("opened"); }\n` +
          `catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }\n`,
      );
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
        cwd: new URL("..", import.meta.url).pathname,
      });
      const result = JSON.parse(stdout.trim());
      expect(result.code).toBe("store_locked");
      expect(result.message).toContain(path);
      expect(result.message).toMatch(/running qes server/);
      expect(result.message).toMatch(/PostgreSQL/);
    } finally {
      await server.close();
    }
  });

  it("refuses a second backend on the same file in the same process, until the first closes", async () => {
    const path = join(tmp.dir, "same.duckdb");
    const first = createDuckdbBackend({ path });
    await first.init();
    const second = createDuckdbBackend({ path });
    const e = await second.init().catch((err: unknown) => err);
    expect(e).toBeInstanceOf(QesError);
    expect((e as QesError).code).toBe("store_locked");
    await first.close();
    await second.init();
    await second.close();
  });
});
