import { QesError } from "../errors.ts";
import type { ParamKind, ParamSpec } from "./endpoint-definition.ts";

/** The settings file `<name>.json` of an endpoint, validated (DESIGN.md §2). */
export interface EndpointSettings {
  id: string;
  description?: string;
  maxRows: number;
  cacheTtlSeconds: number;
  warmIntervalSeconds?: number;
  sandboxable: boolean;
  redactPii: boolean;
  params: Record<string, ParamSpec>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PARAM_KINDS: readonly ParamKind[] = ["string", "timestamp", "integer"];
const SETTINGS_KEYS = [
  "id",
  "description",
  "maxRows",
  "cacheTtlSeconds",
  "warmIntervalSeconds",
  "sandboxable",
  "redactPii",
  "params",
] as const;
const PARAM_KEYS = ["required", "kind", "allowed", "default", "description"] as const;
/** the consumer query travels as this parameter (DESIGN.md §7); a definition cannot declare it */
const RESERVED_PARAMS = new Set(["sql"]);

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/**
 * Parses and validates the text of an endpoint settings file. Strict: unknown keys, wrong types
 * and impossible combinations are `invalid_config` errors naming the file and the field.
 */
export function parseEndpointSettings(text: string, file: string): EndpointSettings {
  const raw = parseJson(text, file);
  const fail = (field: string, message: string): never => {
    throw new QesError("invalid_config", `${file}: "${field}" ${message}`, { file, param: field });
  };
  if (!isPlainObject(raw)) fail("(root)", "must be a JSON object");
  const obj = raw as Record<string, unknown>;
  rejectUnknownKeys(obj, SETTINGS_KEYS, "", fail);

  const id = obj.id;
  if (typeof id !== "string" || !isUuid(id))
    fail("id", "must be a UUID such as 6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19");
  const settings: EndpointSettings = {
    id: (id as string).toLowerCase(),
    maxRows: integerField(obj, "maxRows", 1000, 1, fail),
    cacheTtlSeconds: integerField(obj, "cacheTtlSeconds", 0, 0, fail),
    sandboxable: booleanField(obj, "sandboxable", false, fail),
    redactPii: booleanField(obj, "redactPii", false, fail),
    params: {},
  };
  if (obj.description !== undefined) settings.description = stringField(obj.description, "description", fail);
  if (obj.warmIntervalSeconds !== undefined) {
    settings.warmIntervalSeconds = integerField(obj, "warmIntervalSeconds", 0, 1, fail);
    if (settings.cacheTtlSeconds === 0) fail("warmIntervalSeconds", "needs caching (cacheTtlSeconds > 0)");
  }

  const params = obj.params ?? {};
  if (!isPlainObject(params)) fail("params", "must be an object of parameter name → settings");
  for (const [name, spec] of Object.entries(params as Record<string, unknown>)) {
    settings.params[name] = parseParamSpec(name, spec, fail);
  }
  return settings;
}

function parseParamSpec(
  name: string,
  raw: unknown,
  fail: (field: string, message: string) => never,
): ParamSpec {
  const at = `params.${name}`;
  if (!PARAM_NAME.test(name)) fail(at, "is not a valid parameter name (letters, digits, _)");
  if (RESERVED_PARAMS.has(name)) fail(at, "is reserved for consumer SQL");
  if (!isPlainObject(raw)) fail(at, "must be an object");
  const obj = raw as Record<string, unknown>;
  rejectUnknownKeys(obj, PARAM_KEYS, `${at}.`, fail);

  const kind = obj.kind ?? "string";
  if (typeof kind !== "string" || !PARAM_KINDS.includes(kind as ParamKind)) {
    fail(`${at}.kind`, `must be one of ${PARAM_KINDS.join(", ")}`);
  }
  const spec: ParamSpec = {
    required: booleanField(obj, "required", false, fail, `${at}.`),
    kind: kind as ParamKind,
  };
  if (obj.description !== undefined)
    spec.description = stringField(obj.description, `${at}.description`, fail);
  if (obj.allowed !== undefined) {
    const allowed = obj.allowed;
    if (!Array.isArray(allowed) || allowed.length === 0 || !allowed.every((v) => typeof v === "string")) {
      fail(`${at}.allowed`, "must be a non-empty array of strings");
    }
    if (new Set(allowed as string[]).size !== (allowed as string[]).length) {
      fail(`${at}.allowed`, "must not repeat a value");
    }
    spec.allowed = [...(allowed as string[])];
  }
  if (obj.default !== undefined) {
    const def = stringField(obj.default, `${at}.default`, fail);
    if (spec.allowed && !spec.allowed.includes(def))
      fail(`${at}.default`, "must be one of the allowed values");
    if (spec.kind === "integer" && !/^-?\d+$/.test(def)) fail(`${at}.default`, "must be an integer");
    if (spec.required) fail(`${at}.default`, "makes no sense on a required parameter");
    spec.default = def;
  }
  return spec;
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const details: { file: string; line?: number; column?: number } = { file };
    const pos = /position (\d+)/.exec(message);
    if (pos) {
      const before = text.slice(0, Number(pos[1]));
      const lines = before.split("\n");
      details.line = lines.length;
      details.column = (lines.at(-1)?.length ?? 0) + 1;
    }
    const where = details.line === undefined ? "" : `:${details.line}:${details.column}`;
    throw new QesError("invalid_config", `${file}${where}: not valid JSON (${message})`, details);
  }
}

function rejectUnknownKeys(
  obj: Record<string, unknown>,
  known: readonly string[],
  prefix: string,
  fail: (field: string, message: string) => never,
): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) fail(`${prefix}${key}`, `is not a known setting (known: ${known.join(", ")})`);
  }
}

function integerField(
  obj: Record<string, unknown>,
  key: string,
  fallback: number,
  min: number,
  fail: (field: string, message: string) => never,
): number {
  const v = obj[key];
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) fail(key, `must be an integer ≥ ${min}`);
  return v as number;
}

function booleanField(
  obj: Record<string, unknown>,
  key: string,
  fallback: boolean,
  fail: (field: string, message: string) => never,
  prefix = "",
): boolean {
  const v = obj[key];
  if (v === undefined) return fallback;
  if (typeof v !== "boolean") fail(`${prefix}${key}`, "must be true or false");
  return v as boolean;
}

function stringField(v: unknown, field: string, fail: (field: string, message: string) => never): string {
  if (typeof v !== "string") fail(field, "must be a string");
  return v as string;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
