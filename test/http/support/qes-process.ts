import { collectOutput, spawnCli } from "../../e2e/support/run-cli.ts";

export interface QesProcess {
  url: string;
  pid: number;
  /** everything the process wrote to stdout and stderr so far */
  output(): string;
  /** sends `signal` and resolves with the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `qes serve` as its own process, configured by environment only (the runner's QES_* variables
 * are not passed on), on a free port; resolves once it prints that it listens.
 */
export async function startQes(env: Record<string, string>): Promise<QesProcess> {
  const child = spawnCli(["serve"], { env: { PORT: "0", ...env } });
  const { output, exited } = collectOutput(child);
  const deadline = Date.now() + 90_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /qes is listening on (http:\/\/\S+)/.exec(output())?.[1];
    if (url !== undefined) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`qes serve did not start:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    pid: child.pid as number,
    output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
