import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { type EndpointDefinition, QesError } from "@qes/core";

/**
 * API tokens (DESIGN.md §8 `QES_API_KEYS`). Only SHA-256 hashes of tokens are kept in memory;
 * a presented token is hashed and compared with every known hash in constant time.
 */
export interface ApiKey {
  hash: Buffer;
  /** endpoint names this token may run; absent = all */
  endpoints?: ReadonlySet<string>;
}

/** who a request runs as, once authenticated */
export interface Principal {
  /** endpoint names (and, from JWT scopes, lower-case UUIDs) this principal may run; absent = all */
  endpoints?: ReadonlySet<string>;
  /** parameter values fixed by a JWT `params` claim: a request may omit or repeat them, not change them */
  pinned?: Readonly<Record<string, string>>;
  /** when the credential stops being valid (a JWT's `exp`, unix ms); absent = never */
  expiresAtMs?: number;
}

const TOKEN = /^[A-Za-z0-9_-]{16,}$/;
const HEX_HASH = /^[0-9a-fA-F]{64}$/;
const ENDPOINT_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function hashToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Parses `QES_API_KEYS`: comma-separated `<token>` or `sha256=<hex>`, each optionally `@name1|name2`. */
export function parseApiKeys(spec: string): ApiKey[] {
  const keys: ApiKey[] = [];
  for (const [i, raw] of spec.split(",").entries()) {
    const entry = raw.trim();
    if (entry === "") continue;
    const at = entry.indexOf("@");
    const secret = at === -1 ? entry : entry.slice(0, at);
    // never echo the entry itself: it may be a token
    const where = `QES_API_KEYS entry ${i + 1}`;
    let hash: Buffer;
    if (secret.startsWith("sha256=")) {
      const hex = secret.slice("sha256=".length);
      if (!HEX_HASH.test(hex)) bad(`${where}: sha256= must be followed by 64 hex digits`);
      hash = Buffer.from(hex, "hex");
    } else {
      if (!TOKEN.test(secret)) bad(`${where}: a token must be 16 or more characters of A-Z a-z 0-9 _ -`);
      hash = hashToken(secret);
    }
    const key: ApiKey = { hash };
    if (at !== -1) {
      const names = entry
        .slice(at + 1)
        .split("|")
        .map((s) => s.trim());
      for (const name of names) {
        if (!ENDPOINT_NAME.test(name)) bad(`${where}: "${name}" after @ is not an endpoint name`);
      }
      key.endpoints = new Set(names);
    }
    keys.push(key);
  }
  if (keys.length === 0) bad("QES_API_KEYS: no token given");
  return keys;
}

function bad(message: string): never {
  throw new QesError("invalid_config", message, { param: "QES_API_KEYS" });
}

/** The tokens a server accepts; built from hashes only. */
export class ApiKeyVerifier {
  readonly #keys: readonly ApiKey[];

  constructor(keys: readonly ApiKey[]) {
    this.#keys = keys;
  }

  /** the principal of a token, or undefined when no key matches */
  verify(token: string | undefined): Principal | undefined {
    if (token === undefined || token === "") return undefined;
    const presented = hashToken(token);
    let found: ApiKey | undefined;
    // compare against every key, without stopping early, so timing does not tell which matched
    for (const key of this.#keys) {
      if (timingSafeEqual(presented, key.hash) && found === undefined) found = key;
    }
    if (!found) return undefined;
    return found.endpoints ? { endpoints: found.endpoints } : {};
  }
}

export function principalAllows(principal: Principal, endpoint: EndpointDefinition): boolean {
  return (
    principal.endpoints === undefined ||
    principal.endpoints.has(endpoint.name) ||
    principal.endpoints.has(endpoint.id.toLowerCase())
  );
}

/**
 * The token generated when `QES_API_KEYS` is unset: created once in `file` (mode 0600) and read
 * back on every later start. The caller shows it on the terminal, never through the logger.
 */
export async function ensureGeneratedToken(file: string): Promise<{ token: string; created: boolean }> {
  try {
    const token = (await readFile(file, "utf8")).trim();
    if (!TOKEN.test(token)) {
      throw new QesError(
        "invalid_config",
        `${file} does not hold a valid token; delete it to generate a new one`,
        {
          file,
        },
      );
    }
    await chmod(file, 0o600);
    return { token, created: false };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  await mkdir(dirname(file), { recursive: true });
  const token = `qes_${randomBytes(24).toString("base64url")}`;
  try {
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: "wx" });
  } catch (e) {
    // another process created it first: use theirs
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return ensureGeneratedToken(file);
    throw e;
  }
  return { token, created: true };
}
