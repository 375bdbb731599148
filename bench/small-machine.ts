/**
 * The quick start on a small machine (issue 15): `qes serve` exactly as the README starts it (an
 * empty DuckDB file seeded with the sample events, default settings) inside a memory cgroup of
 * `--memory` (default 1 GiB), then both endpoints and a consumer query that hashes a cross join
 * (the largest working set a token holder can ask for within the sandbox). Reports the server's
 * peak RSS, the cgroup's failures to charge memory and OOM kills, and every status.
 *
 *   node --import tsx bench/small-machine.ts [--memory 1024] [--memory-limit <QES_DUCKDB_MEMORY_LIMIT>]
 *
 * Needs a writable cgroup v1 memory controller (/sys/fs/cgroup/memory, as root); says so and
 * stops where there is none.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, sampleRss, startChild, waitForHttp } from "./lib/processes.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";

const CGROUP_ROOT = "/sys/fs/cgroup/memory";
const CLI = "packages/server/src/cli/main.ts";
const TOKEN = "small-machine-bench-token-0123";
const PROJECT = "kzbtwfqmxrhyglnpvcas";

const REQUESTS: [string, string][] = [
  ["logs.all", `logs.all?project=${PROJECT}`],
  ["usage hourly", `usage.api-counts?interval=hourly&project=${PROJECT}`],
  ["usage daily", `usage.api-counts?interval=daily&project=${PROJECT}`],
  ["usage minutely", `usage.api-counts?interval=minutely&project=${PROJECT}`],
  [
    "consumer SQL: hashed cross join",
    `logs.all?project=${PROJECT}&sql=${encodeURIComponent(
      "select a.id as x, b.id as y, count(*) as n from edge_logs a cross join edge_logs b group by a.id, b.id order by n desc limit 5",
    )}`,
  ],
  ["logs.all afterwards", `logs.all?project=${PROJECT}`],
];

function cgroupFile(group: string, name: string): string {
  return join(CGROUP_ROOT, group, name);
}

export async function runSmallMachine(opts: { memoryMiB: number; memoryLimit?: string }): Promise<Section> {
  const title = `The quick start in a ${opts.memoryMiB} MiB memory cgroup`;
  if (!existsSync(CGROUP_ROOT)) {
    const intro = `No cgroup v1 memory controller at ${CGROUP_ROOT}: not run.`;
    return { title, intro, header: [], rows: [], notes: [] };
  }
  const group = `qes-small-${process.pid}`;
  mkdirSync(join(CGROUP_ROOT, group), { recursive: true });
  writeFileSync(cgroupFile(group, "memory.limit_in_bytes"), String(opts.memoryMiB * 2 ** 20));
  const dir = mkdtempSync(join(tmpdir(), "qes-small-"));
  const port = await freePort();
  // the child joins the cgroup before it execs node, so every byte the server uses is charged
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    QES_API_KEYS: TOKEN,
    QES_DUCKDB_PATH: join(dir, "qes.duckdb"),
    QES_RETENTION_DAYS: "0",
    ...(opts.memoryLimit ? { QES_DUCKDB_MEMORY_LIMIT: opts.memoryLimit } : {}),
  };
  const child = startChild(
    "sh",
    [
      "-c",
      `echo $$ > ${cgroupFile(group, "cgroup.procs")} && exec "${process.execPath}" --import tsx ${CLI} serve`,
    ],
    env,
    join(dir, "serve.log"),
  );
  const rows: string[][] = [];
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/health`, 300_000, child);
    const rss = sampleRss(child.process.pid as number, 50);
    for (const [name, path] of REQUESTS) {
      const t0 = performance.now();
      const status = await fetch(`${url}/api/endpoints/query/${path}`, { headers: { "X-API-KEY": TOKEN } })
        .then(async (res) => {
          const body = await res.text();
          return res.status === 200 ? "200" : `${res.status} ${JSON.parse(body).error?.code ?? ""}`;
        })
        // the server gone mid-request: the kernel's OOM killer, in this benchmark
        .catch((e: unknown) => `no answer (${(e as Error).cause ?? e})`);
      rows.push([name, status, `${(performance.now() - t0).toFixed(0)} ms`]);
    }
    const peak = rss.stop();
    const stat = readFileSync(cgroupFile(group, "memory.stat"), "utf8");
    const oom = readFileSync(cgroupFile(group, "memory.oom_control"), "utf8");
    const alive = rows.at(-1)?.[1] === "200";
    rows.push(["server peak RSS", `${Math.round(peak / 2 ** 20)} MB`, ""]);
    rows.push([
      "cgroup: peak charged (RSS + page cache)",
      `${Math.round(Number(readFileSync(cgroupFile(group, "memory.max_usage_in_bytes"), "utf8")) / 2 ** 20)} MB`,
      "",
    ]);
    rows.push([
      "cgroup: RSS at the end",
      `${Math.round(Number(/^rss (\d+)/m.exec(stat)?.[1]) / 2 ** 20)} MB`,
      "",
    ]);
    rows.push([
      "cgroup: OOM kills",
      /^oom_kill (\d+)/m.exec(oom)?.[1] ?? "?",
      alive ? "the server still answers" : "the server is gone",
    ]);
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
    try {
      rmSync(join(CGROUP_ROOT, group), { recursive: false });
    } catch {
      // a cgroup directory is removed with rmdir; left behind it holds nothing
    }
  }
  return {
    title,
    intro:
      `\`qes serve\` as the README starts it (empty store, seeded with the sample events, default settings` +
      `${opts.memoryLimit ? `, QES_DUCKDB_MEMORY_LIMIT=${opts.memoryLimit}` : ""}) in a memory cgroup of ` +
      `${opts.memoryMiB} MiB; requests in order, each once.`,
    header: ["request", "status", "time"],
    rows,
    notes: [],
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: { memory: { type: "string", default: "1024" }, "memory-limit": { type: "string" } },
  });
  const section = await runSmallMachine({
    memoryMiB: Number(values.memory),
    ...(values["memory-limit"] ? { memoryLimit: values["memory-limit"] } : {}),
  });
  printSection(section);
}
