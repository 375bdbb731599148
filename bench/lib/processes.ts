import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import pg from "pg";

/** a free loopback port (bound and released; the caller binds it right away) */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Child {
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts a process writing its output to a file (not a pipe: reading a busy server's request log
 * would cost this process CPU during the measurement); `stop` sends SIGTERM to it, and only it.
 */
export function startChild(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  logFile: string,
): Child {
  const fd = openSync(logFile, "w");
  const child = spawn(command, args, { env: env as NodeJS.ProcessEnv, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  return {
    process: child,
    output: () => {
      try {
        return readFileSync(logFile, "utf8").slice(-5000);
      } catch {
        return "";
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

/** polls a URL until it answers 200 */
export async function waitForHttp(url: string, timeoutMs: number, child?: Child): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    // a process ended by a signal has exitCode null: without signalCode it would look alive
    if (child && (child.process.exitCode !== null || child.process.signalCode !== null))
      throw new Error(
        `process exited (${child.process.exitCode ?? child.process.signalCode}):\n${child.output()}`,
      );
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms${child ? `:\n${child.output()}` : ""}`);
}

/** resident set size of a process in bytes (Linux /proc) */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** samples RSS every `everyMs` until stopped; returns the peak */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    const r = rssBytes(pid);
    if (r > peak || Number.isNaN(peak)) peak = r;
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssBytes(pid) || 0);
    },
  };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc, 100 ticks a second) */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds every CPU of this machine has spent busy since boot (user, nice, system, irq) */
export function machineCpuSeconds(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait
  const [user, nice, system, , , irq, softirq, steal] = cpu as number[];
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
}

/**
 * CPU seconds of the PostgreSQL backends whose `application_name` is `app`, when the server runs
 * on this machine (its processes are in /proc): sampled every `everyMs`, so a connection that
 * closes before `stop()` still counts up to its last sample. NaN when no backend could be read (the
 * server is elsewhere).
 */
export function samplePostgresBackendCpu(
  url: string,
  app: string,
  everyMs = 200,
): { stop(): Promise<number> } {
  const client = new pg.Client({ connectionString: url });
  const start = new Map<number, number>();
  const last = new Map<number, number>();
  let first = true;
  const sample = async () => {
    const { rows } = await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = $1",
      [app],
    );
    for (const { pid } of rows) {
      const cpu = cpuSeconds(pid);
      // another machine's process, or a backend that has just exited
      if (Number.isNaN(cpu)) continue;
      // a backend that appears later was started during the measurement: all of its CPU counts
      if (!start.has(pid)) start.set(pid, first ? cpu : 0);
      last.set(pid, cpu);
    }
    first = false;
  };
  const ready = client.connect().then(sample);
  let busy: Promise<void> = ready;
  const timer = setInterval(() => {
    busy = busy.then(sample).catch(() => undefined);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await busy.catch(() => undefined);
      await sample().catch(() => undefined);
      await client.end();
      if (last.size === 0) return Number.NaN;
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - start.get(pid)!;
      return total;
    },
  };
}
