import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connection, DEFAULT_PROJECT, flag } from "../../examples/connection.ts";

const dir = mkdtempSync(join(tmpdir(), "qes-conn-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("examples/connection.ts", () => {
  it("defaults to the quick-start server, its token file and the busiest sample project", () => {
    const file = join(dir, "api-key");
    writeFileSync(file, "file-token-0123456789\n");
    expect(connection({ QES_API_KEY_FILE: file })).toEqual({
      baseUrl: "http://127.0.0.1:4000",
      apiKey: "file-token-0123456789",
      project: DEFAULT_PROJECT,
    });
    expect(DEFAULT_PROJECT).toBe("kzbtwfqmxrhyglnpvcas");
  });

  it("takes QES_URL, QES_API_KEY and QES_PROJECT first", () => {
    expect(connection({ QES_URL: "http://10.0.0.1:9", QES_API_KEY: "env-token", QES_PROJECT: "p" })).toEqual({
      baseUrl: "http://10.0.0.1:9",
      apiKey: "env-token",
      project: "p",
    });
    expect(connection({ PORT: "4555", QES_API_KEY: "t" }).baseUrl).toBe("http://127.0.0.1:4555");
  });

  it("says how to get a token when there is none", () => {
    expect(() => connection({ QES_API_KEY_FILE: join(dir, "missing") })).toThrow(
      /set QES_API_KEY.*qes serve/,
    );
  });

  it("reads --name value flags", () => {
    expect(flag(["--lines", "3", "--every"], "lines", "10")).toBe("3");
    expect(flag(["--every"], "every", "2000")).toBe("2000");
    expect(flag([], "project", "x")).toBe("x");
  });
});
