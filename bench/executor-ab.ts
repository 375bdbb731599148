/**
 * The executor benchmark's ClickHouse queries as an A/B of two compilers on a noisy machine: the
 * compiled SQL of a baseline commit (dumped with `dump`), the compiled SQL of the working tree and
 * the native query, timed alternately in one process (rotating order), medians of wall time and
 * of the process's CPU time (chDB runs inside it, so CPU time is the engine's work and moves less
 * with a neighbour's load than wall time does).
 *
 *   git checkout <base> -- packages/core/src packages/backend-clickhouse/src
 *   node --import tsx bench/executor-ab.ts dump .tmp/ab/before
 *   git checkout HEAD -- packages/core/src packages/backend-clickhouse/src
 *   node --import tsx bench/executor-ab.ts ab .tmp/ab/before [runs] [cases]
 *
 * Uses the 1M-event store `bench/executor.ts --edge 1000000 --engines clickhouse` loaded.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  type BoundValues,
  bindRequestParams,
  type CompiledQuery,
  compileEndpoint,
  loadEndpoints,
} from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR, SEED_PROJECTS } from "@qes/server";
import { openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile } from "./lib/data.ts";
import { median } from "./lib/stats.ts";

interface Case {
  name: string;
  compiled: CompiledQuery;
  values: BoundValues;
  native: string;
  nativeValues: BoundValues;
}

const UNIT = { hourly: "hour", daily: "day", minutely: "minute" } as const;
const SPAN = { hourly: "1 hour", daily: "7 day", minutely: "60 minute" } as const;

/** `YYYY-MM-DD HH:MM:SS.ffffff`, the bound form of a TIMESTAMP */
function timestampText(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${(micros % 1_000_000n).toString().padStart(6, "0")}`;
}

const { positionals } = parseArgs({ allowPositionals: true });
const [mode, prefix, runsArg = "31", only] = positionals;
if ((mode !== "dump" && mode !== "ab") || !prefix)
  throw new Error("usage: executor-ab.ts dump|ab <file prefix> [runs] [case,case…]");

const project = SEED_PROJECTS[0];
const bench = await openLoadedBackend("clickhouse", { [EDGE]: await ensureEventsFile(EDGE, 1_000_000) });
try {
  const schema = await bench.backend.schema();
  const registry = new Map(
    (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).list().map((e) => [e.name, e] as const),
  );
  const source = schema.sources[EDGE]!;
  const request = source.fields.metadata!.fields!.request!.fields!;
  const [table, metadata, url, path] = [
    source.table,
    source.fields.metadata!.column!,
    request.url!.column!,
    request.path!.column!,
  ];
  const cases: Case[] = [];
  const hourAgo = timestampText(BENCH_NOW_MICROS - 3_600_000_000n);
  for (const bounded of [false, true]) {
    const ep = registry.get("logs.all")!;
    const compiled = compileEndpoint(ep, { schema, dialect: bench.backend.dialect });
    const params: Record<string, string> = { project };
    if (bounded) params.iso_timestamp_start = `${hourAgo.replace(" ", "T")}Z`;
    const bound = bounded ? ` AND "timestamp" > toDateTime64OrNull({p2:Nullable(String)}, 6, 'UTC')` : "";
    cases.push({
      name: bounded ? "logs-bounded" : "logs",
      compiled,
      values: bindRequestParams(ep, compiled, params, BENCH_NOW_MICROS).values,
      native: `SELECT id, "timestamp", event_message, "${metadata}" AS metadata FROM "${table}" WHERE project = {p1:Nullable(String)}${bound} ORDER BY "timestamp" DESC LIMIT 100`,
      nativeValues: bounded ? [project, hourAgo] : [project],
    });
  }
  for (const interval of ["hourly", "daily", "minutely"] as const) {
    const ep = registry.get("usage.api-counts")!;
    const compiled = compileEndpoint(ep, {
      schema,
      dialect: bench.backend.dialect,
      params: { project, interval },
    });
    const count = (text: string) => `toInt64(countIf(position("${path}", '${text}') > 0))`;
    cases.push({
      name: interval,
      compiled,
      values: bindRequestParams(ep, compiled, { project, interval }, BENCH_NOW_MICROS).values,
      native:
        `SELECT toStartOfInterval("timestamp", INTERVAL 1 ${UNIT[interval]}, 'UTC') AS bucket, ` +
        `${count("/rest")} AS rest, ${count("/storage")} AS storage, ${count("/auth")} AS auth, ${count("/realtime")} AS realtime ` +
        `FROM "${table}" WHERE "timestamp" >= toDateTime64OrNull({p2:Nullable(String)}, 6, 'UTC') - INTERVAL ${SPAN[interval]} ` +
        `AND match("${url}", {p1:Nullable(String)}) GROUP BY bucket ORDER BY bucket`,
      nativeValues: [project, timestampText(BENCH_NOW_MICROS)],
    });
  }
  const chosen = only ? cases.filter((c) => only.split(",").includes(c.name)) : cases;
  if (mode === "dump") {
    for (const c of chosen) writeFileSync(`${prefix}-${c.name}.sql`, c.compiled.sql);
  } else {
    for (const c of chosen) {
      const forms = [
        { name: "native", sql: c.native, values: c.nativeValues },
        { name: "baseline", sql: readFileSync(`${prefix}-${c.name}.sql`, "utf8"), values: c.values },
        { name: "now", sql: c.compiled.sql, readAhead: c.compiled.readAhead, values: c.values },
      ];
      const { readAhead: _nowOnly, ...plain } = c.compiled;
      // only today's form runs its read-ahead (what the executor does with it is part of "now")
      const run = (f: (typeof forms)[number]) => () =>
        bench.backend.execute(
          {
            ...plain,
            sql: f.sql,
            ...("readAhead" in f && f.readAhead !== undefined ? { readAhead: f.readAhead } : {}),
          },
          f.values,
          { maxRows: 1000, timeoutMs: 600_000 },
        );
      // the same rows from every form, or the comparison means nothing
      const rows = await Promise.all(forms.map(async (f) => JSON.stringify((await run(f)()).rows)));
      if (rows.some((r) => r !== rows[2])) throw new Error(`${c.name}: the forms' rows differ`);
      for (const f of forms) await run(f)();
      const wall = forms.map(() => [] as number[]);
      const cpu = forms.map(() => [] as number[]);
      const runs = Number(runsArg);
      for (let r = 0; r < runs; r++) {
        for (let k = 0; k < forms.length; k++) {
          const i = (k + r) % forms.length;
          const cpu0 = process.cpuUsage();
          const t0 = performance.now();
          await run(forms[i]!)();
          wall[i]!.push(performance.now() - t0);
          const used = process.cpuUsage(cpu0);
          cpu[i]!.push((used.user + used.system) / 1000);
        }
      }
      const [nativeWall, nativeCpu] = [median(wall[0]!), median(cpu[0]!)];
      const cells = forms.map((f, i) => {
        const [w, u] = [median(wall[i]!), median(cpu[i]!)];
        return `${f.name} ${w.toFixed(1)} ms (${(w / nativeWall).toFixed(2)}×), CPU ${u.toFixed(1)} ms (${(u / nativeCpu).toFixed(2)}×)`;
      });
      console.log(`| ${c.name} | ${runs} | ${cells.join(" | ")} |`);
    }
  }
} finally {
  await bench.close();
}
