/**
 * Runs every benchmark and writes docs/benchmarks.md: the tables, the machine and the command.
 *
 *   npx -y pnpm@10 bench                 (root script: node --import tsx bench/run-all.ts)
 *   npx -y pnpm@10 bench --big           executor at 10M edge events instead of 1M
 *   npx -y pnpm@10 bench --postgres-load also bench/postgres-load.ts (a fresh 1M COPY load)
 *   npx -y pnpm@10 bench --quick         small sizes, for trying the suite out (not for the doc)
 *
 * Data files and loaded stores are kept under .tmp/bench and reused; the first run generates
 * and loads them (several minutes at 1M events).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runCompileBenchmark } from "./compile.ts";
import { runExecutorBenchmark } from "./executor.ts";
import { runHttpBenchmark } from "./http.ts";
import { loadTool } from "./lib/load-generator.ts";
import { type Section, sectionMarkdown } from "./lib/report.ts";
import { runLoadBenchmark } from "./load.ts";

const { values: args } = parseArgs({
  options: {
    big: { type: "boolean", default: false },
    quick: { type: "boolean", default: false },
    "postgres-load": { type: "boolean", default: false },
    out: { type: "string", default: "docs/benchmarks.md" },
  },
});
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const quick = args.quick!;
const started = new Date();
const loadBefore = loadavg();

const sections: Section[] = [];
/** runs one benchmark; a failure becomes a section that says so, and the others still run */
async function section(title: string, run: () => Promise<Section>): Promise<void> {
  log(title);
  try {
    sections.push(await run());
  } catch (e) {
    log(`${title} failed: ${(e as Error).stack ?? e}`);
    sections.push({
      title: `${title}: failed`,
      intro: `This benchmark failed in this run: \`${String((e as Error).message)
        .split("\n")[0]!
        .slice(0, 300)}\``,
      header: [],
      rows: [],
      notes: [],
    });
  }
}
await section("Executor", () =>
  runExecutorBenchmark({
    edgeEvents: args.big ? 10_000_000 : quick ? 50_000 : 1_000_000,
    engines: ["duckdb", "postgres"],
    log,
  }),
);
await section("HTTP", () =>
  runHttpBenchmark({
    edgeEvents: quick ? 20_000 : 200_000,
    seconds: quick ? 2 : 5,
    // the throughput of two processes sharing two cores moves with the machine: more rounds
    repeats: quick ? 1 : 7,
    connections: 50,
    log,
  }),
);
await section("Compile time", () => runCompileBenchmark({ runs: quick ? 20 : 100 }));
await section("Load throughput", () =>
  runLoadBenchmark({
    edgeEvents: quick ? 10_000 : 100_000,
    runs: quick ? 1 : 3,
    engines: ["duckdb", "postgres"],
    log,
  }),
);
if (args["postgres-load"]) {
  log("postgres-load (bench/postgres-load.ts)");
  const r = spawnSync(process.execPath, ["--import", "tsx", "bench/postgres-load.ts", "--runs", "20"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  sections.push({
    title: "PostgreSQL load and logs.all shape (bench/postgres-load.ts)",
    intro:
      "A fresh COPY load of 1M seeded edge events and the newest-100 query, from the PostgreSQL backend's own benchmark.",
    header: [],
    rows: [],
    notes: [r.status === 0 ? r.stdout.trim() : `failed:\n\n\`\`\`\n${r.stderr.slice(-2000)}\n\`\`\``],
  });
}
const loadAfter = loadavg();

function version(cmd: string, argv: string[]): string {
  // some tools (wrk -v) print their version and exit non-zero
  const r = spawnSync(cmd, argv, { encoding: "utf8" });
  if (r.error) return "not installed";
  return `${r.stdout}${r.stderr}`.trim().split("\n")[0]!;
}
const duckdbVersion = JSON.parse(
  readFileSync(`${ROOT}bench/node_modules/@duckdb/node-api/package.json`, "utf8"),
).version;
const machine = [
  `- CPU: ${cpus().length} × ${cpus()[0]?.model ?? "unknown"}; memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at the end)`,
  `- Node ${process.version}; PostgreSQL ${version("psql", ["--version"]).replace(/^psql \(PostgreSQL\) /, "")}; @duckdb/node-api ${duckdbVersion}; load generator: ${loadTool() === "wrk" ? version("wrk", ["-v"]).split(" ").slice(0, 2).join(" ") || "wrk" : "Node (bench/lib/load-generator.ts)"}`,
  `- 1-minute load average ${loadBefore[0]!.toFixed(1)} before → ${loadAfter[0]!.toFixed(1)} after (with ${cpus().length} cores, anything above ${cpus().length} means other processes competed for the CPU during the run; ratios are measured alternately against their baselines to cancel most of it, absolute times are not)`,
  `- run ${started.toISOString()}, ${((Date.now() - started.getTime()) / 60000).toFixed(1)} min${quick ? " (--quick: small sizes)" : ""}`,
].join("\n");

let analysis = "";
try {
  analysis = readFileSync(`${ROOT}bench/analysis.md`, "utf8").trim();
} catch {
  // no analysis written
}

const BEGIN = "<!-- bench/run-all.ts: generated from here -->";
const END = "<!-- bench/run-all.ts: generated up to here -->";
const generated = `${BEGIN}

## The suite (\`npx -y pnpm@10 bench\`)

Generated by \`npx -y pnpm@10 bench\` (\`node --import tsx bench/run-all.ts\`; \`--big\` for 10M edge events in the
executor benchmark, \`--postgres-load\` to add bench/postgres-load.ts). Every figure is a median and every ratio is
against a baseline measured in the same run. Data: \`bench/generate.ts\` (deterministic, seed 42, all nine sources,
any size; files under .tmp/bench). PostgreSQL and Redis as \`scripts/ensure-services.sh\` starts them.

Targets (issue 6): executor compiled/native ≤ 1.5 on DuckDB and PostgreSQL; cached HTTP throughput with the in-process
cache ≥ 0.8 of a bare node:http server.

### Machine

${machine}

${sections.map((s) => sectionMarkdown(s).replace(/^## /, "### ")).join("\n")}
${analysis ? `\n${analysis}\n` : ""}
${END}`;

// docs/benchmarks.md also holds other benchmarks' write-ups (bench/postgres-load.ts): replace
// only the generated part, or append it
const out = resolve(ROOT, args.out!);
let existing = "";
try {
  existing = readFileSync(out, "utf8");
} catch {
  existing = "# Benchmarks\n";
}
const from = existing.indexOf(BEGIN);
const to = existing.indexOf(END);
const doc =
  from !== -1 && to !== -1
    ? `${existing.slice(0, from)}${generated}${existing.slice(to + END.length)}`
    : `${existing.trimEnd()}\n\n${generated}\n`;
writeFileSync(out, doc);
log(`wrote ${args.out}`);
