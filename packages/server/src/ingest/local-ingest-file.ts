import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, open, rename, rm, writeFile } from "node:fs/promises";
import { QesError } from "@qes/core";

/**
 * How `qes load` finds the `qes serve` that holds a DuckDB file (DESIGN.md §10: the serving
 * process is the one writer, so loads go through its ingest API). The server writes
 * `<database>.serve.json` beside the file: its URL and an ingest token made for this run only.
 *
 * Security: the file is created with mode 0600 (written to a temporary name, then renamed, so it
 * is never readable by others even for a moment); whoever can read it could already read and write
 * the database file beside it. The token may only ingest — never query — and dies with the
 * server: a new one is made at each start, and the file is removed at a clean stop.
 */
export interface LocalIngest {
  url: string;
  token: string;
  pid: number;
}

export function localIngestFile(databasePath: string): string {
  return `${databasePath}.serve.json`;
}

/** a token for this run only, in the grammar of QES_INGEST_KEYS */
export function newLocalIngestToken(): string {
  return `qes_local_${randomBytes(24).toString("base64url")}`;
}

export async function writeLocalIngestFile(file: string, local: LocalIngest): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  // created anew ("wx": O_EXCL, which follows no symbolic link): a file or link already there,
  // left by someone who can write the directory, would otherwise be written through (the token
  // landing in the file a link names) and keep its own mode instead of 0600
  await rm(temporary, { force: true });
  await writeFile(temporary, `${JSON.stringify(local)}\n`, { mode: 0o600, flag: "wx" });
  await rename(temporary, file);
}

/**
 * The file's contents, or undefined when there is none (or it is not one of ours). A file others
 * may have written (a symbolic link, another user's, readable or writable by group or others) is
 * refused with `invalid_config` naming why: nothing is sent where it says.
 */
export async function readLocalIngestFile(file: string): Promise<LocalIngest | undefined> {
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symbolic link is refused below, never read through; O_NONBLOCK: opening a
    // FIFO put here waited for a writer forever (a regular file reads as ever)
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw untrusted(file, "it is a symbolic link");
    return undefined;
  }
  let text: string;
  try {
    // the checks read the opened file itself, so it cannot be swapped between check and read
    const stat = await handle.stat();
    if (!stat.isFile()) throw untrusted(file, "it is not a regular file");
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid)
      throw untrusted(file, `it belongs to user ${stat.uid}, not to you (user ${uid})`);
    if (uid !== undefined && (stat.mode & 0o077) !== 0)
      throw untrusted(file, `its mode is ${(stat.mode & 0o777).toString(8)}: others may read or change it`);
    text = await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
  try {
    const v = JSON.parse(text) as Partial<LocalIngest>;
    if (
      typeof v.url === "string" &&
      /^https?:\/\//.test(v.url) &&
      typeof v.token === "string" &&
      // 0 and negative pids name process groups, which `kill(pid, 0)` finds running
      Number.isSafeInteger(v.pid) &&
      (v.pid as number) > 0
    ) {
      return { url: v.url, token: v.token, pid: v.pid as number };
    }
  } catch {
    // a torn or foreign file: as if absent
  }
  return undefined;
}

function untrusted(file: string, why: string): QesError {
  return new QesError(
    "invalid_config",
    `${file} is not trusted as the address of the qes serve holding the store: ${why}. qes serve writes ` +
      "it for its own user with mode 0600; nothing was sent to the address it gives. Remove it (the next " +
      "qes serve writes it again), or load with --url and QES_INGEST_TOKEN",
    { file },
  );
}

/**
 * Whether the process that wrote the file still runs. A server stopped by SIGKILL leaves its file
 * behind; its port may since belong to any other program, which must not be sent the events (nor
 * the token). A pid taken again by another process passes this check: the load then meets a server
 * that refuses the token, or answers unlike qes, and stops with that.
 */
export function writerIsRunning(local: LocalIngest): boolean {
  try {
    process.kill(local.pid, 0);
    return true;
  } catch (e) {
    // EPERM: a process of another user has that pid, so it runs
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** removes the file if it is still this run's (a newer server may have replaced it) */
export async function removeLocalIngestFile(file: string, token: string): Promise<void> {
  // a file changed by someone else since is not this run's to remove
  const current = await readLocalIngestFile(file).catch(() => undefined);
  if (current?.token === token) await rm(file, { force: true });
}
