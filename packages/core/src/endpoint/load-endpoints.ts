import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { QesError } from "../errors.ts";
import type { EndpointDefinition } from "./endpoint-definition.ts";
import { parseEndpointSettings } from "./endpoint-json.ts";
import { EndpointRegistry } from "./endpoint-registry.ts";

export { type EndpointSettings, isUuid, parseEndpointSettings } from "./endpoint-json.ts";
export { EndpointRegistry } from "./endpoint-registry.ts";

/** `logs.all`, `usage.api-counts`: dot-separated words of letters, digits, `_` and `-` */
const ENDPOINT_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Reads every `<name>.sql` + `<name>.json` pair of one directory. A file without its partner, a
 * badly named file or an invalid settings file is an `invalid_config` error naming the file.
 * Other files (README.md, …) are ignored.
 */
export async function loadEndpointDirectory(dir: string): Promise<EndpointDefinition[]> {
  const absolute = resolve(dir);
  let entries: string[];
  try {
    entries = await readdir(absolute);
  } catch (e) {
    throw new QesError(
      "invalid_config",
      `endpoint directory ${absolute} cannot be read: ${(e as Error).message}`,
      {
        file: absolute,
        cause: e,
      },
    );
  }
  const names = new Set<string>();
  for (const entry of entries) {
    const m = /^(.*)\.(sql|json)$/.exec(entry);
    if (m) names.add(m[1] as string);
  }
  const definitions: EndpointDefinition[] = [];
  for (const name of [...names].sort()) {
    const sqlFile = join(absolute, `${name}.sql`);
    const jsonFile = join(absolute, `${name}.json`);
    if (!ENDPOINT_NAME.test(name)) {
      throw new QesError(
        "invalid_config",
        `${sqlFile}: "${name}" is not a valid endpoint name (dot-separated words of letters, digits, _ and -)`,
        { file: sqlFile },
      );
    }
    if (!entries.includes(`${name}.sql`)) {
      throw new QesError("invalid_config", `${jsonFile}: no ${name}.sql beside it`, { file: jsonFile });
    }
    if (!entries.includes(`${name}.json`)) {
      throw new QesError("invalid_config", `${sqlFile}: no ${name}.json beside it`, { file: sqlFile });
    }
    const [sql, json] = await Promise.all([readFile(sqlFile, "utf8"), readFile(jsonFile, "utf8")]);
    definitions.push(endpointFromFiles(name, sql, sqlFile, json, jsonFile));
  }
  return definitions;
}

/** Builds a definition from the texts of its two files; the version is a hash of both. */
export function endpointFromFiles(
  name: string,
  sql: string,
  sqlFile: string,
  json: string,
  jsonFile: string,
): EndpointDefinition {
  const settings = parseEndpointSettings(json, jsonFile);
  if (sql.trim() === "")
    throw new QesError("invalid_config", `${sqlFile}: the query is empty`, { file: sqlFile });
  const version = createHash("sha256")
    .update(`${Buffer.byteLength(sql)}\n`)
    .update(sql)
    .update(`\n${Buffer.byteLength(json)}\n`)
    .update(json)
    .digest("hex");
  const def: EndpointDefinition = {
    id: settings.id,
    name,
    sql,
    sqlFile,
    maxRows: settings.maxRows,
    cacheTtlSeconds: settings.cacheTtlSeconds,
    sandboxable: settings.sandboxable,
    redactPii: settings.redactPii,
    params: settings.params,
    version,
  };
  if (settings.description !== undefined) def.description = settings.description;
  if (settings.warmIntervalSeconds !== undefined) def.warmIntervalSeconds = settings.warmIntervalSeconds;
  return def;
}

/**
 * Loads endpoint directories in order: the first (the built-ins) then each further one, whose
 * endpoints add to or override earlier ones by name. Duplicate ids among the endpoints that remain
 * are an `invalid_config` error.
 */
export async function loadEndpoints(dirs: readonly string[]): Promise<EndpointRegistry> {
  const byName = new Map<string, EndpointDefinition>();
  for (const dir of dirs) {
    for (const def of await loadEndpointDirectory(dir)) byName.set(def.name, def);
  }
  return new EndpointRegistry(byName.values());
}

/** `QES_ENDPOINTS_DIR`: colon-separated directories, empty entries skipped */
export function splitEndpointDirs(value: string | undefined): string[] {
  return (value ?? "")
    .split(":")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
