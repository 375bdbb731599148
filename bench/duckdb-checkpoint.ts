/**
 * DuckDB's `checkpoint_threshold` under ingest (issue 13): a larger WAL means fewer checkpoints
 * while `Backend.ingest` commits batch after batch, and a longer replay when the process dies.
 * Per threshold, a child process ingests the edge events in batches (as the HTTP route hands them
 * to the backend), prints its CPU seconds, the WAL's size and how long its slowest batch took,
 * then kills itself with SIGKILL before closing (a crash); this process then times the first
 * open of the file (the WAL's replay) and checks every event is there. With `--end close` the
 * child closes the store instead (the checkpoint a clean shutdown makes) and reports the CPU of
 * ingest and close together.
 *
 *   node --import tsx bench/duckdb-checkpoint.ts [--events 100000] [--batch 5000] [--thresholds 16MB,64MB,256MB] [--runs 2] [--end crash|close]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createDuckdbBackend } from "@qes/backend-duckdb";
import { type LogEvent, logEventFromJson, parseJsonText } from "@qes/core";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile, readLines } from "./lib/data.ts";

const args = parseArgs({
  options: {
    events: { type: "string", default: "100000" },
    batch: { type: "string", default: "5000" },
    thresholds: { type: "string", default: "16MB,64MB,256MB" },
    runs: { type: "string", default: "2" },
    end: { type: "string", default: "crash" },
    /** internal: run as the crashing child */
    child: { type: "string" },
    threshold: { type: "string" },
  },
}).values;
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);

const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
};

if (args.child !== undefined) {
  // the child: ingest, report, crash
  const file = await ensureEventsFile(EDGE, EVENTS);
  const backend = createDuckdbBackend({ path: args.child, checkpointThreshold: args.threshold! });
  await backend.init();
  const cpu = process.cpuUsage();
  const t = performance.now();
  let slowest = 0;
  let batch: LogEvent[] = [];
  let index = 0;
  const flush = async () => {
    const b = performance.now();
    await backend.ingest([{ source: EDGE, events: batch }]);
    slowest = Math.max(slowest, performance.now() - b);
    batch = [];
  };
  for await (const line of readLines(file)) {
    batch.push(logEventFromJson(parseJsonText(line), EDGE, BENCH_NOW_MICROS, `event ${index++}`));
    if (batch.length >= BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  const wal = `${args.child}.wal`;
  const report = {
    seconds: (performance.now() - t) / 1000,
    cpu: cpuSeconds(cpu),
    slowestMs: Math.round(slowest),
    walMb: existsSync(wal) ? statSync(wal).size / 2 ** 20 : 0,
    closeCpu: 0,
  };
  if (args.end === "close") {
    const c = process.cpuUsage();
    await backend.close();
    report.closeCpu = cpuSeconds(c);
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.kill(process.pid, "SIGKILL");
}

function runChild(
  path: string,
  threshold: string,
): Promise<{ seconds: number; cpu: number; slowestMs: number; walMb: number; closeCpu: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/duckdb-checkpoint.ts",
        "--child",
        path,
        "--threshold",
        threshold,
        "--events",
        String(EVENTS),
        "--batch",
        String(BATCH),
        "--end",
        String(args.end),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    child.on("error", reject);
    child.on("close", (_code, signal) => {
      if (signal !== "SIGKILL") return reject(new Error(`child ended without the crash: ${out}`));
      resolve(JSON.parse(out.trim().split("\n").pop()!));
    });
  });
}

await ensureEventsFile(EDGE, EVENTS);
console.log(
  `# bench/duckdb-checkpoint: ${EVENTS} edge events by Backend.ingest in batches of ${BATCH}, then ${args.end === "close" ? "a clean close" : "SIGKILL"}`,
);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(
  `| checkpoint_threshold | run | ingest s | ingest CPU s | slowest batch ms | WAL at the end MB | close CPU s | reopen s (${args.end === "close" ? "after a clean close" : "WAL replay"}) | events after reopen |`,
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (let run = 1; run <= Number(args.runs); run++) {
  for (const threshold of String(args.thresholds).split(",")) {
    const dir = mkdtempSync(join(tmpdir(), "qes-bench-checkpoint-"));
    try {
      const path = join(dir, "qes.duckdb");
      const child = await runChild(path, threshold);
      const t = performance.now();
      const backend = createDuckdbBackend({ path });
      await backend.init();
      const reopen = (performance.now() - t) / 1000;
      const events = (await backend.sourceStats()).find((s) => s.source === EDGE)?.events ?? 0;
      await backend.close();
      console.log(
        `| ${threshold} | ${run} | ${child.seconds.toFixed(1)} | ${child.cpu.toFixed(2)} | ${child.slowestMs} | ` +
          `${child.walMb.toFixed(0)} | ${args.end === "close" ? child.closeCpu.toFixed(2) : "–"} | ${reopen.toFixed(2)} | ${events} |`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
