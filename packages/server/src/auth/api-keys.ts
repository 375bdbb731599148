import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { isCreatableSourceName, QesError, splitOutsideQuotes, unquoteName } from "@qes/core";
import { type IngestRight, type Principal, staticKeyCaller } from "./principal.ts";

/**
 * API tokens (DESIGN.md §8 `QES_API_KEYS`). Only SHA-256 hashes of tokens are kept in memory;
 * a presented token is hashed and compared with every known hash in constant time.
 */
export interface ApiKey {
  hash: Buffer;
  /** endpoint names this token may run; absent = all */
  endpoints?: ReadonlySet<string>;
  /**
   * set for an ingest token (`QES_INGEST_KEYS`): it may send events (to these sources; absent =
   * any) and never run a query
   */
  ingest?: IngestRight;
}

/** which list a token comes from: its variable, what it may do, and what `@names` name */
export type KeyList = "QES_API_KEYS" | "QES_INGEST_KEYS";

/** no endpoint: what an ingest token may run */
const NO_ENDPOINTS: ReadonlySet<string> = new Set();

const TOKEN = /^[A-Za-z0-9_-]{16,}$/;
const HEX_HASH = /^[0-9a-fA-F]{64}$/;
const ENDPOINT_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
/** a source named in `QES_INGEST_KEYS`: anything but the list's own separators, spaces and controls */
const SOURCE_NAME_IN_LIST = /^(?:(?![\s,|@\p{Cc}]).){1,200}$/u;

export function hashToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/**
 * Parses `QES_API_KEYS` (or `QES_INGEST_KEYS`, same grammar): comma-separated `<token>` or
 * `sha256=<hex>`, each optionally `@name1|name2` — endpoints for query tokens, sources for ingest
 * tokens; a source whose name holds a separator or a space is written as a JSON string
 * (`@"eu west"|edge`).
 */
export function parseApiKeys(spec: string, list: KeyList = "QES_API_KEYS"): ApiKey[] {
  const bad = (message: string): never => {
    throw new QesError("invalid_config", message, { param: list });
  };
  const ingest = list === "QES_INGEST_KEYS";
  const keys: ApiKey[] = [];
  for (const [i, raw] of splitOutsideQuotes(spec, ",").entries()) {
    const entry = raw.trim();
    if (entry === "") continue;
    const at = entry.indexOf("@");
    // spaces around "@" as around "|" and ",": "<token> @ a | b" lists a and b, rather than
    // refusing a valid token for the space after it
    const secret = (at === -1 ? entry : entry.slice(0, at)).trimEnd();
    // never echo the entry itself: it may be a token
    const where = `${list} entry ${i + 1}`;
    let hash: Buffer;
    if (secret.startsWith("sha256=")) {
      const hex = secret.slice("sha256=".length);
      if (!HEX_HASH.test(hex)) bad(`${where}: sha256= must be followed by 64 hex digits`);
      hash = Buffer.from(hex, "hex");
    } else {
      if (!TOKEN.test(secret)) bad(`${where}: a token must be 16 or more characters of A-Z a-z 0-9 _ -`);
      hash = hashToken(secret);
    }
    const names =
      at === -1
        ? undefined
        : splitOutsideQuotes(entry.slice(at + 1), "|").map((text) => listedName(text, where, list));
    for (const { name, quoted } of names ?? []) {
      if (ingest && !(quoted ? isCreatableSourceName(name) : SOURCE_NAME_IN_LIST.test(name))) {
        // a source may be named so (ingest takes "a b"): say how it can be named here
        bad(
          quoted
            ? `${where}: ${JSON.stringify(name)} after @ is no source name (1 to 200 characters, not only spaces, without control characters)`
            : `${where}: "${name}" after @ cannot name a source here: names in ${list} are 1 to 200 characters ` +
                `without spaces, control characters, ",", "|" or "@", or are written as a JSON string ` +
                `(@${JSON.stringify(name)})`,
        );
      }
      if (!ingest && !ENDPOINT_NAME.test(name)) bad(`${where}: "${name}" after @ is not an endpoint name`);
    }
    const key: ApiKey = { hash };
    if (ingest) {
      key.endpoints = NO_ENDPOINTS;
      key.ingest = names ? { sources: new Set(names.map((n) => n.name)) } : {};
    } else if (names) {
      key.endpoints = new Set(names.map((n) => n.name));
    }
    keys.push(key);
  }
  if (keys.length === 0) bad(`${list}: no token given`);
  return keys;
}

/** a name after `@`, plain or as a JSON string */
function listedName(text: string, where: string, list: KeyList): { name: string; quoted: boolean } {
  const listed = unquoteName(text);
  if ("error" in listed) throw new QesError("invalid_config", `${where}: ${listed.error}`, { param: list });
  return listed;
}

/** an ingest token for any source (the local credential `qes serve` gives `qes load`) */
export function ingestKey(token: string): ApiKey {
  return { hash: hashToken(token), endpoints: NO_ENDPOINTS, ingest: {} };
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
    const found: ApiKey[] = [];
    // compare against every key, without stopping early, so timing does not tell which matched
    for (const key of this.#keys) {
      if (timingSafeEqual(presented, key.hash)) found.push(key);
    }
    const first = found[0];
    if (first === undefined) return undefined;
    // a token listed in both QES_API_KEYS and QES_INGEST_KEYS has both rights
    const query = found.filter((k) => k.ingest === undefined);
    const ingest = found.filter((k) => k.ingest !== undefined);
    const principal: Principal = { caller: staticKeyCaller(first.hash) };
    if (query.length === 0) principal.endpoints = NO_ENDPOINTS;
    else if (query.every((k) => k.endpoints !== undefined))
      principal.endpoints = new Set(query.flatMap((k) => [...(k.endpoints ?? [])]));
    if (ingest.length > 0) {
      principal.ingest = ingest.every((k) => k.ingest?.sources !== undefined)
        ? { sources: new Set(ingest.flatMap((k) => [...(k.ingest?.sources ?? [])])) }
        : {};
    }
    return principal;
  }
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
