/**
 * Where the examples find qes: `QES_URL` (default the quick-start server, http://127.0.0.1:4000),
 * the token from `QES_API_KEY` or else the file the quick-start server keeps it in
 * (`./data/api-key`, relative to the repository root where the examples run), and the project
 * from `QES_PROJECT` (default the busiest project of the sample data).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export interface Connection {
  baseUrl: string;
  apiKey: string;
  project: string;
}

export const DEFAULT_PROJECT = "kzbtwfqmxrhyglnpvcas";

export function connection(env: NodeJS.ProcessEnv = process.env): Connection {
  const baseUrl = env.QES_URL?.trim() || `http://127.0.0.1:${env.PORT?.trim() || "4000"}`;
  const project = env.QES_PROJECT?.trim() || DEFAULT_PROJECT;
  let apiKey = env.QES_API_KEY?.trim();
  if (!apiKey) {
    const file = resolve(env.QES_API_KEY_FILE?.trim() || "./data/api-key");
    try {
      apiKey = readFileSync(file, "utf8").trim();
    } catch {
      throw new Error(
        `No API token: set QES_API_KEY, or start the quick-start server (npx -y pnpm@10 qes serve), which keeps one in ${file}.`,
      );
    }
  }
  return { baseUrl, apiKey, project };
}

/** `--name value` from the command line, else the fallback */
export function flag(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  const value = i >= 0 ? argv[i + 1] : undefined;
  return value === undefined || value.startsWith("--") ? fallback : value;
}
