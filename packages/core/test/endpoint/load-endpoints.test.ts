import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  loadEndpointDirectory,
  loadEndpoints,
  parseEndpointSettings,
  QesError,
  splitEndpointDirs,
} from "../../src/index.ts";

const BUILTINS = fileURLToPath(new URL("../../../server/endpoints", import.meta.url));
const dirs: string[] = [];

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "qes-endpoints-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ID = "3f6e2a9c-71d4-4b8e-a0c5-9d2b7e1f4a68";
const settings = (extra: Record<string, unknown> = {}) => JSON.stringify({ id: ID, maxRows: 10, ...extra });

function configError(f: () => unknown): QesError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(QesError);
    expect((e as QesError).code).toBe("invalid_config");
    return e as QesError;
  }
  throw new Error("expected an invalid_config error");
}

async function configErrorAsync(p: Promise<unknown>): Promise<QesError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(QesError);
  expect((e as QesError).code).toBe("invalid_config");
  return e as QesError;
}

describe("loadEndpoints", () => {
  it("loads the two built-ins with the settings of SPEC.md §2.1", async () => {
    const registry = await loadEndpoints([BUILTINS]);
    expect(registry.list().map((d) => d.name)).toEqual(["logs.all", "usage.api-counts"]);
    const logs = registry.get("logs.all");
    expect(logs).toMatchObject({ maxRows: 1000, cacheTtlSeconds: 0, sandboxable: true, redactPii: false });
    expect(logs?.warmIntervalSeconds).toBeUndefined();
    const usage = registry.get("usage.api-counts");
    expect(usage).toMatchObject({
      maxRows: 1000,
      cacheTtlSeconds: 900,
      warmIntervalSeconds: 300,
      sandboxable: true,
    });
    expect(usage?.params.interval?.allowed).toEqual(["hourly", "daily", "minutely"]);
    expect(registry.get(usage?.id.toUpperCase() ?? "")).toBe(usage);
    expect(logs?.version).toMatch(/^[0-9a-f]{64}$/);
  });

  it("adds endpoints from further directories and overrides built-ins by name", async () => {
    const extra = dirWith({
      "auth.errors.sql": "select 1",
      "auth.errors.json": settings(),
      "logs.all.sql": "select 2",
      "logs.all.json": JSON.stringify({ id: "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19", maxRows: 5 }),
      "README.md": "ignored",
    });
    const registry = await loadEndpoints([BUILTINS, extra]);
    expect(registry.size).toBe(3);
    expect(registry.get("auth.errors")?.id).toBe(ID);
    expect(registry.get("logs.all")?.sql).toBe("select 2");
    expect(registry.get("logs.all")?.maxRows).toBe(5);
  });

  it("changes the version when either file changes", async () => {
    const a = await loadEndpointDirectory(dirWith({ "x.sql": "select 1", "x.json": settings() }));
    const b = await loadEndpointDirectory(dirWith({ "x.sql": "select 1 ", "x.json": settings() }));
    const c = await loadEndpointDirectory(
      dirWith({ "x.sql": "select 1", "x.json": settings({ maxRows: 11 }) }),
    );
    expect(new Set([a[0]?.version, b[0]?.version, c[0]?.version]).size).toBe(3);
  });

  it("refuses two endpoints with the same id, naming the file", async () => {
    const extra = dirWith({
      "a.sql": "select 1",
      "a.json": settings(),
      "b.sql": "select 1",
      "b.json": settings(),
    });
    const e = await configErrorAsync(loadEndpoints([extra]));
    expect(e.message).toContain("b.json");
    expect(e.message).toContain(ID);
  });

  it("refuses a .sql without its .json and the reverse", async () => {
    expect((await configErrorAsync(loadEndpoints([dirWith({ "a.sql": "select 1" })]))).message).toContain(
      "a.json",
    );
    expect((await configErrorAsync(loadEndpoints([dirWith({ "a.json": settings() })]))).message).toContain(
      "a.sql",
    );
  });

  it("refuses a directory that does not exist", async () => {
    await configErrorAsync(loadEndpoints(["/nonexistent/qes-endpoints"]));
  });

  it("splits QES_ENDPOINTS_DIR on colons", () => {
    expect(splitEndpointDirs(" /a: /b ::")).toEqual(["/a", "/b"]);
    expect(splitEndpointDirs(undefined)).toEqual([]);
  });
});

describe("parseEndpointSettings", () => {
  it("fills defaults and keeps what is given", () => {
    const s = parseEndpointSettings(JSON.stringify({ id: ID.toUpperCase() }), "x.json");
    expect(s).toEqual({
      id: ID,
      maxRows: 1000,
      cacheTtlSeconds: 0,
      sandboxable: false,
      redactPii: false,
      params: {},
    });
  });

  it.each([
    [{ id: ID, maxrows: 5 }, "maxrows"],
    [{ id: "not-a-uuid" }, "id"],
    [{ maxRows: 5 }, "id"],
    [{ id: ID, maxRows: "5" }, "maxRows"],
    [{ id: ID, maxRows: 0 }, "maxRows"],
    [{ id: ID, cacheTtlSeconds: -1 }, "cacheTtlSeconds"],
    [{ id: ID, sandboxable: "yes" }, "sandboxable"],
    [{ id: ID, warmIntervalSeconds: 60 }, "warmIntervalSeconds"],
    [{ id: ID, params: [] }, "params"],
    [{ id: ID, params: { p: { kind: "date" } } }, "params.p.kind"],
    [{ id: ID, params: { p: { required: "true" } } }, "params.p.required"],
    [{ id: ID, params: { p: { allowed: [] } } }, "params.p.allowed"],
    [{ id: ID, params: { p: { allowed: ["a"], default: "b" } } }, "params.p.default"],
    [{ id: ID, params: { p: { kind: "string", regex: "x" } } }, "params.p.regex"],
    [{ id: ID, params: { "bad-name": {} } }, "params.bad-name"],
    [{ id: ID, params: { sql: {} } }, "params.sql"],
  ])("refuses %j naming the field %s", (json, field) => {
    const e = configError(() => parseEndpointSettings(JSON.stringify(json), "/x/e.json"));
    expect(e.message).toContain("/x/e.json");
    expect(e.message).toContain(`"${field}"`);
    expect(e.file).toBe("/x/e.json");
  });

  it("locates a JSON syntax error by line and column", () => {
    const e = configError(() => parseEndpointSettings('{\n  "id": "x",\n  oops\n}', "/x/e.json"));
    expect(e.line).toBe(3);
    expect(e.message).toContain("/x/e.json:3:");
  });
});
