import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";

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
  await writeFile(temporary, `${JSON.stringify(local)}\n`, { mode: 0o600, flag: "w" });
  await rename(temporary, file);
}

/** the file's contents, or undefined when there is none (or it is not one of ours) */
export async function readLocalIngestFile(file: string): Promise<LocalIngest | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text) as Partial<LocalIngest>;
    if (typeof v.url === "string" && typeof v.token === "string" && typeof v.pid === "number") {
      return { url: v.url, token: v.token, pid: v.pid };
    }
  } catch {
    // a torn or foreign file: as if absent
  }
  return undefined;
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
  const current = await readLocalIngestFile(file);
  if (current?.token === token) await rm(file, { force: true });
}
