import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface RunningExample {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** resolves when stdout satisfies `check`; rejects after `timeoutMs` with what was printed */
  waitFor(check: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

/** Starts `npx pnpm example <name>` as the README says, without pnpm: node --import tsx examples/main.ts. */
export function startExample(name: string, args: string[], env: Record<string, string>): RunningExample {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/main.ts", name, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (check, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          if (check(out)) resolve();
          else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
            reject(
              new Error(`example ${name} did not print what was expected.\nstdout:\n${out}\nstderr:\n${err}`),
            );
          } else setTimeout(tick, 50);
        };
        tick();
      }),
  };
}

/** Runs an example to its end. */
export async function runExample(name: string, args: string[], env: Record<string, string>) {
  const running = startExample(name, args, env);
  const code = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}
