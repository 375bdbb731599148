import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { endpointsFromOpenApi, generateTypes, schemaType, typeName } from "../../packages/sdk/src/codegen.ts";
import { answer, type FakeServer, startFakeServer } from "./support/fake-server.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = "packages/sdk/src/generate-types.ts";
const FIXTURE = "test/sdk/fixtures/openapi.json";
const GOLDEN = fileURLToPath(new URL("./fixtures/qes-endpoints.generated.ts", import.meta.url));

function generate(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", CLI, ...args], { cwd: ROOT, env: { ...process.env } });
}

let server: FakeServer | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await server?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("generate-types", () => {
  it("writes the committed types from the fixture OpenAPI document (the type tests use them)", async () => {
    const { stdout } = await generate(FIXTURE);
    expect(stdout).toBe(readFileSync(GOLDEN, "utf8"));
  });

  it("fetches /api/openapi.json from a base URL with the API key", async () => {
    const doc = readFileSync(join(ROOT, FIXTURE), "utf8");
    server = await startFakeServer((req, _n, res) => {
      if (req.url === "/api/openapi.json" && req.headers["x-api-key"] === "gen-token-0123456789") {
        answer(res, 200, JSON.parse(doc));
      } else answer(res, 404, { error: { code: "endpoint_not_found", message: "no", requestId: "x" } });
      return undefined;
    });
    const { stdout } = await run(process.execPath, ["--import", "tsx", CLI, server.url], {
      cwd: ROOT,
      env: { ...process.env, QES_API_KEY: "gen-token-0123456789" },
    });
    expect(stdout).toContain(`from ${server.url}/api/openapi.json.`);
    expect(stdout.split("\n").slice(1)).toEqual(readFileSync(GOLDEN, "utf8").split("\n").slice(1));
  });

  it("writes types from endpoint files, skipping the built-ins unless asked", async () => {
    const { stdout } = await generate(
      "--endpoints-dir",
      "test/fixtures/endpoints",
      "--endpoints-dir",
      "packages/server/endpoints",
    );
    expect(stdout).toContain("export interface AuthErrorsParams {\n  project: string;\n}");
    expect(stdout).toContain("export type AuthErrorsRow = Record<string, unknown>;");
    expect(stdout).toContain(
      '"3f6e2a9c-71d4-4b8e-a0c5-9d2b7e1f4a68": { params: AuthErrorsParams; row: AuthErrorsRow };',
    );
    expect(stdout).not.toContain("UsageApiCounts");
    const dir = mkdtempSync(join(tmpdir(), "qes-gen-"));
    dirs.push(dir);
    const out = join(dir, "types.ts");
    await generate("--endpoints-dir", "packages/server/endpoints", "--include-builtins", "--out", out);
    const text = readFileSync(out, "utf8");
    expect(text).toContain('  interval: "hourly" | "daily" | "minutely";');
    expect(text).toContain("  iso_timestamp_start?: Date | string | undefined;");
  });

  it("fails with a message and status for bad input", async () => {
    await expect(generate()).rejects.toMatchObject({ code: 2 });
    await expect(generate("no-such-file.json")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("cannot read no-such-file.json"),
    });
  });

  it("maps JSON Schema to wire-value types", () => {
    expect(schemaType({ type: "integer" }, "")).toBe("number");
    expect(schemaType({ type: ["string", "null"] }, "")).toBe("string | null");
    expect(schemaType({ type: "string", nullable: true }, "")).toBe("string | null");
    expect(schemaType({ enum: ["a", "b"] }, "")).toBe('"a" | "b"');
    expect(schemaType({ type: "array", items: { type: "object" } }, "")).toBe(
      "Array<Record<string, unknown>>",
    );
    expect(schemaType({}, "")).toBe("unknown");
    expect(typeName("usage.api-counts")).toBe("UsageApiCounts");
    expect(typeName("2fa.events")).toBe("Endpoint2faEvents");
    expect(() => endpointsFromOpenApi({ openapi: "3.1.0" })).toThrow(/paths/);
    expect(generateTypes([], { source: "nothing" })).toContain(
      "export type QesEndpoints = Record<never, never>;",
    );
  });
});
