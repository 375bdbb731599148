/**
 * Writes TypeScript types for custom endpoints: per endpoint a `<Name>Params` interface (wire
 * parameter names), a `<Name>Row` type, and a `QesEndpoints` map to give `createClient<QesEndpoints>()`
 * so `query("auth.errors", { project })` is typed. Pure functions, no I/O: `generate-types.ts` is the
 * command line around them.
 *
 * Two inputs give the same model:
 *
 * 1. The server's OpenAPI document (`GET /api/openapi.json`, OpenAPI 3.0 or 3.1). Read from it:
 *    - every path `/api/endpoints/query/<name>` with a literal name (templated paths such as
 *      `/api/endpoints/query/{idOrName}` are skipped) and its `get` operation;
 *    - the operation's `x-qes-endpoint-id` (the endpoint's UUID, optional: the map then also
 *      has the id) and `description` or `summary`;
 *    - its `parameters` (`in: "query"`; `$ref`s into `components.parameters` resolved): `name`,
 *      `required`, `description`, `schema` with `type` (`string`, `integer`, `number`, `boolean`),
 *      `format: "date-time"` for timestamps and `enum` for allowed values. `sql` and `api_key` are
 *      skipped: consumer SQL is the `sql` option of `query`, the token is the client's;
 *    - the row type from `responses["200"].content["application/json"].schema`, an object whose
 *      `result` is an array (`$ref`s into `components.schemas` resolved): its `items` schema. Without
 *      one the row is `Record<string, unknown>`.
 * 2. Endpoint files (`<name>.json` beside `<name>.sql`, README "Endpoint files"): `id`,
 *    `description` and `params` (`required`, `kind` string|timestamp|integer, `allowed`,
 *    `description`). Rows are not declared there: `Record<string, unknown>`.
 *
 * The built-ins (`logs.all`, `usage.api-counts`) are left out unless asked for: the SDK types them.
 */

export type ParamKind = "string" | "timestamp" | "integer" | "number" | "boolean";

export interface ParamModel {
  name: string;
  required: boolean;
  kind: ParamKind;
  allowed?: string[];
  description?: string;
}

export interface EndpointModel {
  name: string;
  id?: string;
  description?: string;
  params: ParamModel[];
  /** JSON Schema of one row, `$ref`s resolved against `components` */
  row?: JsonSchema;
}

export type JsonSchema = { [key: string]: unknown };

export const BUILTIN_NAMES: readonly string[] = [
  "logs.all",
  "usage.api-counts",
  "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19",
  "0b1e7d52-8f3a-4e6c-a1d9-5c2f7e804b63",
];

const QUERY_PATH = "/api/endpoints/query/";
const SKIPPED_PARAMS = new Set(["sql", "api_key"]);

// ------------------------------------------------------------------------------------- OpenAPI in

/** The endpoints an OpenAPI document describes; throws on a document that is not one. */
export function endpointsFromOpenApi(doc: unknown): EndpointModel[] {
  if (typeof doc !== "object" || doc === null || typeof (doc as { paths?: unknown }).paths !== "object") {
    throw new Error("not an OpenAPI document: no `paths` object");
  }
  const root = doc as { paths: Record<string, unknown>; components?: Record<string, unknown> };
  const out: EndpointModel[] = [];
  for (const [path, item] of Object.entries(root.paths)) {
    if (!path.startsWith(QUERY_PATH)) continue;
    const rawName = path.slice(QUERY_PATH.length);
    if (rawName === "" || rawName.includes("/") || /[{}]/.test(rawName)) continue;
    const op = (item as { get?: unknown } | null)?.get as Record<string, unknown> | undefined;
    if (!op) continue;
    const endpoint: EndpointModel = { name: decodeURIComponent(rawName), params: [] };
    if (typeof op["x-qes-endpoint-id"] === "string") endpoint.id = op["x-qes-endpoint-id"];
    const description = typeof op.description === "string" ? op.description : op.summary;
    if (typeof description === "string" && description !== "") endpoint.description = description;
    const params = Array.isArray(op.parameters) ? op.parameters : [];
    for (const p of params) {
      const param = resolve(root, p) as Record<string, unknown>;
      if (param.in !== "query" || typeof param.name !== "string" || SKIPPED_PARAMS.has(param.name)) continue;
      const schema = resolve(root, param.schema ?? {}) as JsonSchema;
      const model: ParamModel = { name: param.name, required: param.required === true, kind: kindOf(schema) };
      if (Array.isArray(schema.enum)) model.allowed = schema.enum.map(String);
      if (typeof param.description === "string" && param.description !== "")
        model.description = param.description;
      endpoint.params.push(model);
    }
    const content = (op.responses as Record<string, any> | undefined)?.["200"]?.content?.["application/json"];
    const body = content?.schema ? (resolveDeep(root, content.schema) as JsonSchema) : undefined;
    const items = (body?.properties as Record<string, JsonSchema> | undefined)?.result?.items;
    if (typeof items === "object" && items !== null) endpoint.row = items as JsonSchema;
    out.push(endpoint);
  }
  return out;
}

function kindOf(schema: JsonSchema): ParamKind {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "integer") return "integer";
  if (type === "number") return "number";
  if (type === "boolean") return "boolean";
  if (schema.format === "date-time") return "timestamp";
  return "string";
}

function resolve(root: { components?: Record<string, unknown> }, value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref !== "string") return value;
  if (depth > 32) throw new Error(`$ref cycle at ${ref}`);
  if (!ref.startsWith("#/")) throw new Error(`only local $refs are read, not ${ref}`);
  let target: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    target = (target as Record<string, unknown> | undefined)?.[key];
  }
  if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
  return resolve(root, target, depth + 1);
}

/** resolves `$ref`s at every depth (a self-referencing schema stops at 32 levels with an error) */
function resolveDeep(root: { components?: Record<string, unknown> }, value: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error("schema nested deeper than 32 levels (a $ref cycle?)");
  const v = resolve(root, value);
  if (Array.isArray(v)) return v.map((x) => resolveDeep(root, x, depth + 1));
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = resolveDeep(root, x, depth + 1);
  return out;
}

// -------------------------------------------------------------------------------- endpoint files in

/** The model of one endpoint file (`<name>.json`), as `qes` reads it. */
export function endpointFromFile(name: string, settings: unknown): EndpointModel {
  if (typeof settings !== "object" || settings === null) throw new Error(`${name}.json: not a JSON object`);
  const s = settings as Record<string, unknown>;
  const endpoint: EndpointModel = { name, params: [] };
  if (typeof s.id === "string") endpoint.id = s.id;
  if (typeof s.description === "string" && s.description !== "") endpoint.description = s.description;
  const params = (s.params ?? {}) as Record<string, Record<string, unknown>>;
  for (const [paramName, p] of Object.entries(params)) {
    if (SKIPPED_PARAMS.has(paramName)) continue;
    const kind = p.kind === "timestamp" || p.kind === "integer" ? p.kind : "string";
    const model: ParamModel = { name: paramName, required: p.required === true, kind };
    if (Array.isArray(p.allowed)) model.allowed = p.allowed.map(String);
    if (typeof p.description === "string" && p.description !== "") model.description = p.description;
    endpoint.params.push(model);
  }
  return endpoint;
}

// ------------------------------------------------------------------------------------ TypeScript out

export interface GenerateOptions {
  /** where the types came from, named in the header comment */
  source: string;
  /** keep `logs.all` and `usage.api-counts` (default false: the SDK types them) */
  includeBuiltins?: boolean;
}

/** TypeScript source for the endpoints: `<Name>Params`, `<Name>Row`, and the `QesEndpoints` map. */
export function generateTypes(endpoints: EndpointModel[], options: GenerateOptions): string {
  const chosen = endpoints
    .filter((e) => options.includeBuiltins || !BUILTIN_NAMES.includes(e.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines: string[] = [
    `// Types of qes endpoints, written by @qes/sdk generate-types from ${oneLine(options.source)}.`,
    "// Do not edit: run the generator again when the endpoints change.",
    "// Use: createClient<QesEndpoints>({ baseUrl, apiKey }).query(name, params)",
    "",
  ];
  const used = new Set<string>();
  const entries: string[] = [];
  for (const e of chosen) {
    const base = uniqueName(typeName(e.name), used);
    lines.push(
      ...doc(
        e.description ? `${e.description}\n\nParameters of \`${e.name}\`.` : `Parameters of \`${e.name}\`.`,
        "",
      ),
    );
    if (e.params.length === 0) {
      lines.push(`export type ${base}Params = Record<string, never>;`, "");
    } else {
      lines.push(`export interface ${base}Params {`);
      for (const p of e.params) {
        lines.push(...doc(p.description, "  "));
        const optional = p.required ? "" : "?";
        const type = paramType(p) + (p.required ? "" : " | undefined");
        lines.push(`  ${propertyKey(p.name)}${optional}: ${type};`);
      }
      lines.push("}", "");
    }
    lines.push(...doc(`A row of \`${e.name}\` in wire values.`, ""));
    lines.push(`export type ${base}Row = ${e.row ? schemaType(e.row, "") : "Record<string, unknown>"};`, "");
    entries.push(`  ${JSON.stringify(e.name)}: { params: ${base}Params; row: ${base}Row };`);
    if (e.id) entries.push(`  ${JSON.stringify(e.id)}: { params: ${base}Params; row: ${base}Row };`);
  }
  lines.push(
    ...doc("The endpoints by name and id: `createClient<QesEndpoints>(…)` types `query` for them.", ""),
  );
  if (entries.length === 0) lines.push("export type QesEndpoints = Record<never, never>;");
  else lines.push("export type QesEndpoints = {", ...entries, "};");
  return `${lines.join("\n")}\n`;
}

function paramType(p: ParamModel): string {
  if (p.allowed && p.allowed.length > 0) return p.allowed.map((v) => JSON.stringify(v)).join(" | ");
  switch (p.kind) {
    case "timestamp":
      return "Date | string";
    case "integer":
    case "number":
      return "number | string";
    case "boolean":
      return "boolean";
    default:
      return "string";
  }
}

/** JSON Schema → a TypeScript type, wire values as DESIGN.md §4 says */
export function schemaType(schema: unknown, indent: string): string {
  if (typeof schema !== "object" || schema === null) return "unknown";
  const s = schema as JsonSchema;
  if (Array.isArray(s.enum)) return union(s.enum.map((v) => JSON.stringify(v)));
  if ("const" in s) return JSON.stringify(s.const);
  for (const key of ["oneOf", "anyOf"] as const) {
    if (Array.isArray(s[key])) return union((s[key] as unknown[]).map((x) => schemaType(x, indent)));
  }
  if (Array.isArray(s.allOf))
    return (s.allOf as unknown[]).map((x) => wrap(schemaType(x, indent))).join(" & ");
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? [] : [s.type];
  const nullable = s.nullable === true || types.includes("null");
  const parts = types.filter((t) => t !== "null").map((t) => singleType(String(t), s, indent));
  if (parts.length === 0) parts.push(s.properties ? singleType("object", s, indent) : "unknown");
  if (nullable && !parts.includes("unknown")) parts.push("null");
  return union(parts);
}

function singleType(type: string, s: JsonSchema, indent: string): string {
  switch (type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "array":
      return `Array<${schemaType(s.items, indent)}>`;
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
      const inner = `${indent}  `;
      const members = Object.entries(props).map(([k, v]) => {
        const description = (v as JsonSchema | null)?.description;
        const comment = typeof description === "string" ? doc(description, inner).join("\n") + "\n" : "";
        return `${comment}${inner}${propertyKey(k)}${required.has(k) ? "" : "?"}: ${schemaType(v, inner)};`;
      });
      const extra = s.additionalProperties;
      if (members.length === 0) {
        return extra === false
          ? "Record<string, never>"
          : `Record<string, ${extra && extra !== true ? schemaType(extra, indent) : "unknown"}>`;
      }
      if (extra !== undefined && extra !== false) {
        members.push(`${inner}[key: string]: ${extra === true ? "unknown" : schemaType(extra, inner)};`);
      }
      return `{\n${members.join("\n")}\n${indent}}`;
    }
    default:
      return "unknown";
  }
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length === 0 ? "never" : unique.map(wrapUnion).join(" | ");
}

function wrapUnion(t: string): string {
  return / & /.test(t) && !t.startsWith("{") ? `(${t})` : t;
}

function wrap(t: string): string {
  return / \| /.test(t) && !t.startsWith("{") ? `(${t})` : t;
}

/** `auth.errors` → `AuthErrors`, `usage.api-counts` → `UsageApiCounts` */
export function typeName(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  if (joined === "") return "Endpoint";
  return /^[0-9]/.test(joined) ? `Endpoint${joined}` : joined;
}

function uniqueName(base: string, used: Set<string>): string {
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}${i}`;
  used.add(name);
  return name;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function doc(text: string | undefined, indent: string): string[] {
  if (text === undefined || text.trim() === "") return [];
  const body = text.replace(/\*\//g, "*\\/").trim().split(/\r?\n/);
  if (body.length === 1) return [`${indent}/** ${body[0]} */`];
  return [
    `${indent}/**`,
    ...body.map((l) => (l.trim() === "" ? `${indent} *` : `${indent} * ${l}`)),
    `${indent} */`,
  ];
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ");
}
