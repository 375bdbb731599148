import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultMemoryLimit } from "@qes/backend-duckdb";
import { QesError } from "@qes/core";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";

function refused(env: Record<string, string>): QesError {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(QesError);
    return e as QesError;
  }
  throw new Error("expected the configuration to be refused");
}

describe("loadConfig", () => {
  it("has the defaults of DESIGN.md §8", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 4000,
      host: "127.0.0.1",
      admission: { perCaller: 2 },
      backend: "duckdb",
      // 1 GB, less on a machine (or cgroup) of under 2.5 GB: duckdb-memory-limit.test.ts
      backendConfig: { path: "./data/qes.duckdb", memoryLimit: defaultMemoryLimit(), threads: 2 },
      queryTimeoutMs: 30_000,
      cacheMaxEntries: 10_000,
      warmMaxKeys: 1000,
      redis: { prefix: "qes:" },
      endpointDirs: [],
      corsOrigins: [],
      errorFormat: "standard",
      seed: "auto",
    });
    expect(c.redis.url).toBeUndefined();
    expect(c.apiKeys).toBeUndefined();
    expect(c.testNowMicros).toBeUndefined();
    expect(c.metricsToken).toBeUndefined();
    expect(c.admission.maxConcurrent).toBeUndefined();
    expect(c.admission.ratePerMinute).toBeUndefined();
  });

  it("reads QES_HOST, QES_METRICS_TOKEN and the admission limits", () => {
    const c = loadConfig({
      QES_HOST: "0.0.0.0",
      QES_METRICS_TOKEN: "metrics-0123456789abcdef",
      QES_MAX_CONCURRENT_QUERIES: "8",
      QES_MAX_CONCURRENT_PER_CALLER: "3",
      QES_RATE_LIMIT_PER_MINUTE: "600",
      QES_REFUSALS_PER_SECOND: "25",
    });
    expect(c.host).toBe("0.0.0.0");
    expect(c.metricsToken).toBe("metrics-0123456789abcdef");
    expect(c.admission).toEqual({
      maxConcurrent: 8,
      perCaller: 3,
      ratePerMinute: 600,
      refusalsPerSecond: 25,
    });
    expect(loadConfig({}).admission.refusalsPerSecond).toBe(10);
    expect(loadConfig({ QES_REFUSALS_PER_SECOND: "0" }).admission.refusalsPerSecond).toBe(0);
    expect(loadConfig({ QES_HOST: "::" }).host).toBe("::");
    expect(loadConfig({}).ingest.maxSources).toBe(1_000);
    expect(loadConfig({ QES_INGEST_MAX_SOURCES: "50" }).ingest.maxSources).toBe(50);
  });

  it.each([
    ["PORT", "80a"],
    ["PORT", "70000"],
    ["QES_BACKEND", "mysql"],
    ["QES_DUCKDB_THREADS", "0"],
    ["QES_INGEST_MAX_SOURCES", "0"],
    ["QES_INGEST_MAX_SOURCES", "many"],
    ["QES_DUCKDB_MEMORY_LIMIT", "lots"],
    ["QES_POSTGRES_URL", "mysql://x@y/z", "postgres"],
    ["QES_POSTGRES_SCHEMA", "Bad-Schema", "postgres"],
    ["QES_POSTGRES_POOL", "-1", "postgres"],
    ["QES_POSTGRES_HEAVY_QUERY_COST", "-1", "postgres"],
    ["QES_POSTGRES_HEAVY_QUERY_COST", "1e7", "postgres"],
    ["QES_CLICKHOUSE_URL", "ftp://x@y/z", "clickhouse"],
    ["QES_CLICKHOUSE_QUERY_URL", "http://reader@y:8123/qes", "clickhouse"],
    ["QES_CLICKHOUSE_MAX_MEMORY", "lots", "clickhouse"],
    ["QES_CLICKHOUSE_CLUSTER", "a cluster", "clickhouse"],
    ["QES_RETENTION_DAYS", "forever", "clickhouse"],
    ["QES_QUERY_TIMEOUT_MS", "soon"],
    ["QES_REDIS_URL", "http://localhost:6379"],
    ["QES_ERROR_FORMAT", "xml"],
    ["QES_SEED", "yes"],
    ["QES_CORS_ORIGINS", "not an origin"],
    ["QES_WARM_INTERVAL_SCALE", "fast"],
    ["QES_WARM_INTERVAL_SCALE", "0"],
    ["QES_JWT_SECRET", "too-short"],
    ["QES_JWT_PUBLIC_KEY", "-----BEGIN PUBLIC KEY-----\\nnot a key\\n-----END PUBLIC KEY-----"],
    ["QES_JWT_PUBLIC_KEY", "/no/such/key.pem"],
    ["QES_HOST", "0.0.0.0:80"],
    ["QES_HOST", "a host"],
    ["QES_METRICS_TOKEN", "short"],
    ["QES_MAX_CONCURRENT_QUERIES", "0"],
    ["QES_MAX_CONCURRENT_PER_CALLER", "0"],
    ["QES_MAX_CONCURRENT_PER_CALLER", "two"],
    ["QES_RATE_LIMIT_PER_MINUTE", "-5"],
    ["QES_REFUSALS_PER_SECOND", "-1"],
    ["QES_REFUSALS_PER_SECOND", "ten"],
  ])("stops on a bad %s (%s) and names it", (name, value, backend = "duckdb") => {
    const e = refused({ QES_BACKEND: backend, [name]: value });
    expect(e.code).toBe("invalid_config");
    expect(e.message.startsWith(`${name}:`)).toBe(true);
  });

  it("reads QES_WARM_INTERVAL_SCALE and the JWT keys", () => {
    expect(loadConfig({}).warmIntervalScale).toBe(1);
    expect(loadConfig({ QES_WARM_INTERVAL_SCALE: "0.005" }).warmIntervalScale).toBe(0.005);
    const secret = "s".repeat(32);
    expect(loadConfig({ QES_JWT_SECRET: secret }).jwt.secret).toBe(secret);
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(loadConfig({ QES_JWT_PUBLIC_KEY: pem.replaceAll("\n", "\\n") }).jwt.publicKey).toBe(pem);
    const dir = mkdtempSync(join(tmpdir(), "qes-config-"));
    writeFileSync(join(dir, "key.pem"), pem);
    expect(loadConfig({ QES_JWT_PUBLIC_KEY: join(dir, "key.pem") }).jwt.publicKey).toBe(pem);
    rmSync(dir, { recursive: true });
  });

  it("honours QES_TEST_NOW only when NODE_ENV=test", () => {
    expect(loadConfig({ QES_TEST_NOW: "2025-01-15T12:00:00.123456Z" }).testNowMicros).toBeUndefined();
    const c = loadConfig({ NODE_ENV: "test", QES_TEST_NOW: "2025-01-15T12:00:00.123456Z" });
    expect(c.testNowMicros).toBe(1736942400123456n);
    expect(loadConfig({ NODE_ENV: "test", QES_TEST_NOW: "1736942400123456" }).testNowMicros).toBe(
      1736942400123456n,
    );
    expect(loadConfig({ NODE_ENV: "test", QES_TEST_NOW: "2025-01-15 12:00:00" }).testNowMicros).toBe(
      1736942400000000n,
    );
    expect(refused({ NODE_ENV: "test", QES_TEST_NOW: "noon" }).message).toContain("QES_TEST_NOW");
  });

  it("splits QES_ENDPOINTS_DIR and QES_CORS_ORIGINS", () => {
    const c = loadConfig({
      QES_ENDPOINTS_DIR: "/a:/b",
      QES_CORS_ORIGINS: "https://a.example, http://localhost:3000",
    });
    expect(c.endpointDirs).toEqual(["/a", "/b"]);
    expect(c.corsOrigins).toEqual(["https://a.example", "http://localhost:3000"]);
  });
});
