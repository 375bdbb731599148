import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";

/**
 * The pid of another process that holds the embedded chDB directory `path`, when this machine can
 * tell; undefined when none does or it cannot be told (then chDB itself decides).
 *
 * chDB refuses a second process on its own, but from native code it also prints that refusal
 * ("Code: 76. DB::Exception: Cannot lock file …/status …") on the process's stderr, where qes
 * cannot catch it: `qes load` and `qes retention` went through the server holding the directory
 * with that engine error on their output (a cron line mails it every run), which the same
 * commands on DuckDB never print. So the holder is found before chDB is asked. The engine keeps
 * `status` (its pid inside) open while it runs and leaves the file behind when killed; a live pid
 * alone could be a reused one, so only a process that has the file open holds the directory
 * (Linux's /proc; elsewhere the check says nothing).
 */
export function chdbHolder(path: string): number | undefined {
  let status: string;
  let pid: number;
  try {
    status = realpathSync(join(path, "status"));
    const m = /^PID:\s*(\d+)/m.exec(readFileSync(status, "utf8"));
    if (!m) return undefined;
    pid = Number(m[1]);
  } catch {
    return undefined;
  }
  if (pid === process.pid) return undefined;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === status) return pid;
    } catch {
      // closed while listed
    }
  }
  return undefined;
}
