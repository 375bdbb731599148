import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDuckdbBackend, defaultMemoryLimit } from "../src/index.ts";
import { handQuery, tempDir } from "./helpers.ts";

const GiB = 2 ** 30;
const tmp = tempDir("memory-limit");
afterAll(() => tmp.cleanup());

describe("the default DuckDB memory limit", () => {
  it("is 1 GB where there is room, and 40 % of the memory on a small machine or cgroup", () => {
    expect(defaultMemoryLimit(24 * GiB)).toBe("1024MiB");
    expect(defaultMemoryLimit(4 * GiB)).toBe("1024MiB");
    expect(defaultMemoryLimit(2 * GiB)).toBe("819MiB");
    // a 1 GB machine: DuckDB, Node and the OS fit (docs/benchmarks.md, "A 1 GB machine")
    expect(defaultMemoryLimit(GiB)).toBe("409MiB");
    expect(defaultMemoryLimit(64 * 2 ** 20)).toBe("64MiB");
  });

  it("is what an engine opened without a limit runs with", async () => {
    // DuckDB prints the limit in its own units: compare with an engine given it explicitly, and
    // with one given another limit, so the reading is known to tell limits apart
    const setting = async (memoryLimit: string | undefined, name: string): Promise<unknown> => {
      const backend = createDuckdbBackend({
        path: join(tmp.dir, `${name}.duckdb`),
        ...(memoryLimit ? { memoryLimit } : {}),
      });
      await backend.init();
      try {
        const { rows } = await backend.execute(
          handQuery("select current_setting('memory_limit') as m", [
            { name: "m", type: { kind: "scalar", type: "STRING" } },
          ]),
          [],
          { maxRows: 10, timeoutMs: 10_000 },
        );
        return rows[0]?.m;
      } finally {
        await backend.close();
      }
    };
    const unset = await setting(undefined, "unset");
    expect(unset).toBe(await setting(defaultMemoryLimit(), "explicit"));
    expect(unset).not.toBe(await setting("64MiB", "other"));
  });
});
