import { execFile } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** PostgreSQL's programs; QES_PG_BIN overrides (e.g. another major version). */
const PG_BIN = process.env.QES_PG_BIN ?? "/usr/lib/postgresql/15/bin";

/**
 * A PostgreSQL cluster of one test's own (DESIGN.md §9), for tests that stop and start the
 * server. initdb and pg_ctl refuse to run as root, so as root they run as the `postgres` user in
 * a temporary folder it owns.
 */
export interface PrivateCluster {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

async function asPostgres(program: string, args: string[]): Promise<void> {
  const path = join(PG_BIN, program);
  if (process.getuid?.() === 0) await run("runuser", ["-u", "postgres", "--", path, ...args]);
  else await run(path, args);
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  return { uid, gid };
}

export async function createPrivateCluster(settings: Record<string, string> = {}): Promise<PrivateCluster> {
  const dir = mkdtempSync(join(tmpdir(), "qes-pg-cluster-"));
  if (process.getuid?.() === 0) {
    const { uid, gid } = await postgresIds();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  await asPostgres("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
  ]);
  const conf = { fsync: "off", synchronous_commit: "off", full_page_writes: "off", ...settings };
  appendFileSync(
    join(data, "postgresql.conf"),
    Object.entries(conf)
      .map(([k, v]) => `${k} = '${v}'\n`)
      .join(""),
  );
  const port = await freePort();
  let running = false;
  const cluster: PrivateCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres("pg_ctl", [
        "-D",
        data,
        "-l",
        join(dir, "server.log"),
        "-o",
        `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
        "-w",
        "start",
      ]);
      running = true;
    },
    async stop() {
      await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      running = false;
    },
    async destroy() {
      if (running) await cluster.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
