import { createPublicKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { parseRetentionDays, QesError, type RetentionPolicy, splitEndpointDirs } from "@qes/core";
import { BACKEND_NAMES, BACKEND_PLUGINS, type BackendName } from "./backend/backend-registry.ts";

/**
 * The service's configuration, read from the environment once at start-up (DESIGN.md §8). A bad
 * value stops start-up with an `invalid_config` error naming the variable.
 */
export interface QesConfig {
  port: number;
  /** listen address (`QES_HOST`): loopback unless an operator opens it (`0.0.0.0` in containers) */
  host: string;
  /** `QES_METRICS_TOKEN`: when set, `/metrics` needs `Authorization: Bearer <it>` */
  metricsToken?: string;
  /** admission control (DESIGN.md §11) */
  admission: {
    /** `QES_MAX_CONCURRENT_QUERIES`; absent = the backend's own concurrency */
    maxConcurrent?: number;
    /** `QES_MAX_CONCURRENT_PER_CALLER` */
    perCaller: number;
    /** `QES_REFUSALS_PER_SECOND`: 4xx answers per caller and second sent at once; 0 = no pacing */
    refusalsPerSecond: number;
    /** `QES_RATE_LIMIT_PER_MINUTE`; absent = no rate limit */
    ratePerMinute?: number;
  };
  /** `QES_BACKEND`: a name of the backend registry (backend/backend-registry.ts) */
  backend: BackendName;
  /** the chosen backend's own settings, read from its variables by its package */
  backendConfig: unknown;
  queryTimeoutMs: number;
  cacheMaxEntries: number;
  warmMaxKeys: number;
  /**
   * factor applied to every endpoint's `warmIntervalSeconds` (`QES_WARM_INTERVAL_SCALE`, default 1);
   * tests shorten 300 s to a second or two with it
   */
  warmIntervalScale: number;
  redis: { url?: string; prefix: string };
  /** raw `QES_API_KEYS`; parsed by auth/api-keys.ts */
  apiKeys?: string;
  ingest: {
    /** raw `QES_INGEST_KEYS` (grammar of `QES_API_KEYS`, `@a|b` naming sources) */
    keys?: string;
    /** `QES_INGEST_MAX_BYTES`: largest body after decompression */
    maxBytes: number;
    /** `QES_INGEST_QUEUE_EVENTS`: events waiting for commit before 429 */
    queueEvents: number;
    /** `QES_INGEST_MAX_SOURCES`: sources a store may hold before ingest refuses to create more */
    maxSources: number;
    /** `QES_INGEST_MAX_FIELDS`: fields (at any depth) a source may reach through ingest */
    maxFields: number;
  };
  /** `publicKey` is PEM text (read from a file when the variable names one) */
  jwt: { secret?: string; publicKey?: string; audiences?: string[]; issuers?: string[] };
  endpointDirs: string[];
  corsOrigins: string[];
  errorFormat: "standard" | "legacy";
  seed: "auto" | "false";
  /** `QES_RETENTION_DAYS`: days kept, by default and per source; 0 = forever */
  retention: RetentionPolicy;
  /** pinned clock in µs (`QES_TEST_NOW`, only with NODE_ENV=test) */
  testNowMicros?: bigint;
  nodeEnv: string;
}

type Env = Record<string, string | undefined>;

/**
 * 10 MiB: a little more than the 10,000,000 bytes a Vector `http` sink batches by default, so its
 * full batches fit
 */
const DEFAULT_INGEST_MAX_BYTES = 10 * 1024 * 1024;

export function loadConfig(env: Env = process.env): QesConfig {
  const nodeEnv = env.NODE_ENV ?? "development";
  const backend = oneOf(env, "QES_BACKEND", BACKEND_NAMES, "duckdb");
  const config: QesConfig = {
    port: integer(env, "PORT", 4000, 0, 65535),
    host: listenHost(env, "QES_HOST", "127.0.0.1"),
    admission: {
      perCaller: integer(env, "QES_MAX_CONCURRENT_PER_CALLER", 2, 1, 10_000),
      refusalsPerSecond: integer(env, "QES_REFUSALS_PER_SECOND", 10, 0, 1_000_000),
    },
    backend,
    backendConfig: BACKEND_PLUGINS[backend].configFromEnv(env),
    queryTimeoutMs: integer(env, "QES_QUERY_TIMEOUT_MS", 30_000, 1, 24 * 3600_000),
    cacheMaxEntries: integer(env, "QES_CACHE_MAX_ENTRIES", 10_000, 0, 100_000_000),
    warmMaxKeys: integer(env, "QES_WARM_MAX_KEYS", 1000, 0, 10_000_000),
    warmIntervalScale: decimal(env, "QES_WARM_INTERVAL_SCALE", 1, 1e-6, 1000),
    redis: { prefix: text(env, "QES_REDIS_PREFIX") ?? "qes:" },
    retention: parseRetentionDays(env.QES_RETENTION_DAYS),
    jwt: {},
    ingest: {
      maxBytes: byteSize(env, "QES_INGEST_MAX_BYTES", DEFAULT_INGEST_MAX_BYTES),
      queueEvents: integer(env, "QES_INGEST_QUEUE_EVENTS", 100_000, 1, 100_000_000),
      maxSources: integer(env, "QES_INGEST_MAX_SOURCES", 1_000, 1, 1_000_000),
      maxFields: integer(env, "QES_INGEST_MAX_FIELDS", 1_000, 1, 100_000),
    },
    endpointDirs: splitEndpointDirs(env.QES_ENDPOINTS_DIR),
    corsOrigins: list(env, "QES_CORS_ORIGINS"),
    errorFormat: oneOf(env, "QES_ERROR_FORMAT", ["standard", "legacy"] as const, "standard"),
    seed: oneOf(env, "QES_SEED", ["auto", "false"] as const, "auto"),
    nodeEnv,
  };
  const redisUrl = url(env, "QES_REDIS_URL", ["redis:", "rediss:"]);
  if (redisUrl !== undefined) config.redis.url = redisUrl;
  const apiKeys = text(env, "QES_API_KEYS");
  if (apiKeys !== undefined) config.apiKeys = apiKeys;
  const ingestKeys = text(env, "QES_INGEST_KEYS");
  if (ingestKeys !== undefined) config.ingest.keys = ingestKeys;
  const secret = text(env, "QES_JWT_SECRET");
  if (secret !== undefined) {
    // HS256 with a short secret can be brute-forced offline from any token
    if (secret.length < 32) bad("QES_JWT_SECRET", "must be at least 32 characters");
    config.jwt.secret = secret;
  }
  const publicKey = text(env, "QES_JWT_PUBLIC_KEY");
  if (publicKey !== undefined) config.jwt.publicKey = publicKeyPem(publicKey);
  // a key that also signs tokens for other services (one identity provider's key for several APIs)
  // must not make their tokens valid here: when set, `aud` / `iss` must name one of these
  const audiences = list(env, "QES_JWT_AUDIENCE");
  if (audiences.length > 0) config.jwt.audiences = audiences;
  const issuers = list(env, "QES_JWT_ISSUER");
  if (issuers.length > 0) config.jwt.issuers = issuers;
  if ((audiences.length > 0 || issuers.length > 0) && secret === undefined && publicKey === undefined)
    bad(
      audiences.length > 0 ? "QES_JWT_AUDIENCE" : "QES_JWT_ISSUER",
      "needs QES_JWT_SECRET or QES_JWT_PUBLIC_KEY: no JWT is accepted without one",
    );
  for (const origin of config.corsOrigins) {
    if (origin !== "*" && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      bad("QES_CORS_ORIGINS", `"${origin}" is not an origin such as https://app.example.com`);
    }
  }
  const metricsToken = text(env, "QES_METRICS_TOKEN");
  if (metricsToken !== undefined) {
    if (metricsToken.length < 16) bad("QES_METRICS_TOKEN", "must be at least 16 characters");
    config.metricsToken = metricsToken;
  }
  if (text(env, "QES_MAX_CONCURRENT_QUERIES") !== undefined)
    config.admission.maxConcurrent = integer(env, "QES_MAX_CONCURRENT_QUERIES", 0, 1, 100_000);
  if (text(env, "QES_RATE_LIMIT_PER_MINUTE") !== undefined)
    config.admission.ratePerMinute = integer(env, "QES_RATE_LIMIT_PER_MINUTE", 0, 1, 100_000_000);
  const testNow = text(env, "QES_TEST_NOW");
  if (testNow !== undefined && nodeEnv === "test")
    config.testNowMicros = parseInstant("QES_TEST_NOW", testNow);
  return config;
}

function bad(name: string, message: string): never {
  throw new QesError("invalid_config", `${name}: ${message}`, { param: name });
}

/** unset and empty both mean "use the default" */
function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = text(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) bad(name, `"${v}" is not a whole number`);
  const n = Number(v);
  if (n < min || n > max) bad(name, `${n} is outside ${min}…${max}`);
  return n;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = text(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+(\.\d+)?(e-?\d+)?$/i.test(v)) bad(name, `"${v}" is not a number`);
  const n = Number(v);
  if (!(n >= min && n <= max)) bad(name, `${n} is outside ${min}…${max}`);
  return n;
}

/**
 * `QES_JWT_PUBLIC_KEY`: PEM text (`\n` escapes accepted, as env files often hold one line) or the
 * path of a PEM file; an RSA or EC public key, checked here so a bad key stops start-up.
 */
function publicKeyPem(v: string): string {
  const name = "QES_JWT_PUBLIC_KEY";
  let pem = v.replace(/\\n/g, "\n");
  if (!pem.startsWith("-----BEGIN")) {
    try {
      pem = readFileSync(v, "utf8");
    } catch {
      bad(name, "is neither PEM text (-----BEGIN PUBLIC KEY-----…) nor a readable PEM file");
    }
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    return bad(name, "is not a valid PEM public key");
  }
  if (key.asymmetricKeyType !== "rsa" && key.asymmetricKeyType !== "ec")
    bad(name, `must be an RSA (RS256) or EC (ES256) key, not ${key.asymmetricKeyType}`);
  return pem;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const v = text(env, name);
  if (v === undefined) return fallback;
  if (!allowed.includes(v as T)) bad(name, `"${v}" is not one of ${allowed.join(", ")}`);
  return v as T;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const v = text(env, name);
  if (v === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    return bad(name, "is not a URL");
  }
  if (!protocols.includes(parsed.protocol))
    bad(name, `must start with ${protocols.map((p) => `${p}//`).join(" or ")}`);
  return v;
}

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** a byte count: `1048576`, `512KB`, `10MB`, `10MiB` (kB/MB/GB are powers of 1000) */
function byteSize(env: Env, name: string, fallback: number): number {
  const v = text(env, name);
  if (v === undefined) return fallback;
  const m = /^(\d+)\s*([a-z]*)$/i.exec(v);
  const unit = BYTE_UNITS[(m?.[2] ?? "").toLowerCase()];
  if (!m || unit === undefined) bad(name, `"${v}" is not a size such as 10485760, 512KB or 10MiB`);
  const n = Number(m[1]) * unit;
  if (n < 1024 || n > 1024 ** 3) bad(name, `${n} bytes is outside 1 KiB…1 GiB`);
  return n;
}

/** an IPv4 or IPv6 address, or a host name, to listen on */
function listenHost(env: Env, name: string, fallback: string): string {
  const v = text(env, name) ?? fallback;
  if (isIP(v) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(v))
    bad(name, `"${v}" is not an address or host name to listen on (127.0.0.1, 0.0.0.0, ::)`);
  return v;
}

function list(env: Env, name: string): string[] {
  return (text(env, name) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** integer unix microseconds or ISO 8601 (no zone = UTC), to µs */
function parseInstant(name: string, v: string): bigint {
  if (/^\d+$/.test(v)) return BigInt(v);
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6})\d*)?(Z|[+-]\d{2}:?\d{2})?$/.exec(v);
  if (!m) return bad(name, `"${v}" is neither unix microseconds nor an ISO 8601 timestamp`);
  const zone = m[4] === undefined || m[4] === "Z" ? "Z" : m[4];
  const ms = Date.parse(`${m[1]}T${m[2]}${zone}`);
  if (Number.isNaN(ms)) return bad(name, `"${v}" is not a valid timestamp`);
  const fraction = BigInt((m[3] ?? "").padEnd(6, "0"));
  return BigInt(ms) * 1000n + fraction;
}
