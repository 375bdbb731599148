/**
 * generate-types: TypeScript types for a qes server's custom endpoints (see codegen.ts for what is
 * read from each input).
 *
 *   node --import tsx packages/sdk/src/generate-types.ts http://127.0.0.1:4000 > src/qes-endpoints.ts
 *       reads GET <baseUrl>/api/openapi.json (token from --api-key or QES_API_KEY, when it needs one)
 *   node --import tsx packages/sdk/src/generate-types.ts ./openapi.json
 *       reads a saved OpenAPI document
 *   node --import tsx packages/sdk/src/generate-types.ts --endpoints-dir ./endpoints [--endpoints-dir …]
 *       reads endpoint files (`<name>.json`) directly, as `QES_ENDPOINTS_DIR` names them
 *
 * Options: --out <file> (default standard output), --include-builtins, --api-key <token>.
 * Exit status 2 for bad usage, 1 when the input cannot be read.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type EndpointModel, endpointFromFile, endpointsFromOpenApi, generateTypes } from "./codegen.ts";

const USAGE = `usage: generate-types <baseUrl | openapi.json> [--api-key <token>] [--out <file>] [--include-builtins]
       generate-types --endpoints-dir <dir> [--endpoints-dir <dir>…] [--out <file>] [--include-builtins]`;

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = args;
  const dirs = values["endpoints-dir"] ?? [];
  if ((positionals.length !== 1) === (dirs.length === 0) || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let endpoints: EndpointModel[];
  let source: string;
  try {
    if (dirs.length > 0) {
      endpoints = dirs.flatMap(readEndpointDir);
      source = `the endpoint files in ${dirs.join(", ")}`;
    } else {
      const input = positionals[0]!;
      const apiKey = values["api-key"] ?? env.QES_API_KEY;
      const loaded = /^https?:\/\//i.test(input) ? await fetchOpenApi(input, apiKey) : readJson(input);
      endpoints = endpointsFromOpenApi(loaded.doc);
      source = loaded.source;
    }
  } catch (e) {
    process.stderr.write(`generate-types: ${(e as Error).message}\n`);
    return 1;
  }
  const text = generateTypes(endpoints, { source, includeBuiltins: values["include-builtins"] ?? false });
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "api-key": { type: "string" },
      out: { type: "string" },
      "include-builtins": { type: "boolean" },
      "endpoints-dir": { type: "string", multiple: true },
    },
  });
}

async function fetchOpenApi(
  input: string,
  apiKey: string | undefined,
): Promise<{ doc: unknown; source: string }> {
  const url = /\.json$/i.test(new URL(input).pathname)
    ? input
    : `${input.replace(/\/+$/, "")}/api/openapi.json`;
  const headers: Record<string, string> = { Accept: "application/json" };
  if (apiKey) headers["X-API-KEY"] = apiKey;
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  try {
    return { doc: JSON.parse(text), source: url };
  } catch {
    throw new Error(`GET ${url} did not answer JSON`);
  }
}

function readJson(file: string): { doc: unknown; source: string } {
  try {
    return { doc: JSON.parse(readFileSync(file, "utf8")), source: basename(file) };
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
}

function readEndpointDir(dir: string): EndpointModel[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const name = f.slice(0, -".json".length);
      try {
        return endpointFromFile(name, JSON.parse(readFileSync(join(dir, f), "utf8")));
      } catch (e) {
        throw new Error(`${join(dir, f)}: ${(e as Error).message}`);
      }
    });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
