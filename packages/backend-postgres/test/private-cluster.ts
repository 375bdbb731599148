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

/** runs one of PostgreSQL's programs, on the given CPUs (`taskset -c` list) when `cpus` is set */
async function asPostgres(program: string, args: string[], cpus?: string): Promise<void> {
  const command = [join(PG_BIN, program), ...args];
  if (cpus !== undefined) command.unshift("taskset", "-c", cpus);
  if (process.getuid?.() === 0) await run("runuser", ["-u", "postgres", "--", ...command]);
  else await run(command[0] as string, command.slice(1));
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  return { uid, gid };
}

/**
 * `cpus` pins the server (the postmaster and every backend it forks) to those CPUs, as a
 * benchmark's stand-in for a database on a machine of its own.
 */
export async function createPrivateCluster(
  settings: Record<string, string> = {},
  opts: { cpus?: string } = {},
): Promise<PrivateCluster> {
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
      await asPostgres(
        "pg_ctl",
        [
          "-D",
          data,
          "-l",
          join(dir, "server.log"),
          "-o",
          `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
          "-w",
          "start",
        ],
        opts.cpus,
      );
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
