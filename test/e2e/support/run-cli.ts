import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const CLI = join(REPO_ROOT, "packages/server/src/cli/main.ts");
/** tsx resolved from the repository, so the CLI can run with any working directory */
const TSX = pathToFileURL(createRequire(join(REPO_ROOT, "package.json")).resolve("tsx")).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** default: the repository root, as `pnpm qes` runs */
  cwd?: string;
  /** standard input: text (written as UTF-8) or bytes */
  stdin?: string | Buffer;
}

/** Starts `qes <args>` the way `pnpm qes` does (`node --import tsx …/cli/main.ts`). */
export function spawnCli(args: string[], opts: CliOptions = {}): ChildProcessWithoutNullStreams {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "test", ...opts.env };
  // the CLI reads its configuration from the environment: keep the test runner's out of it
  for (const key of Object.keys(env)) {
    if (key.startsWith("QES_") && !(opts.env && key in opts.env)) delete env[key];
  }
  return spawn(process.execPath, ["--import", TSX, CLI, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** What a started `qes` writes (standard output and error together, as it comes) and its exit. */
export function collectOutput(child: ChildProcessWithoutNullStreams): {
  output(): string;
  exited: Promise<number | null>;
} {
  let out = "";
  const add = (c: string) => {
    out += c;
  };
  child.stdout.setEncoding("utf8").on("data", add);
  child.stderr.setEncoding("utf8").on("data", add);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { output: () => out, exited };
}

/** Runs `qes <args>` to completion. */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, opts);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? "");
  });
}
