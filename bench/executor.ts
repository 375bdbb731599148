/**
 * Executor benchmark: the compiled query of logs.all and of usage.api-counts (each interval),
 * executed through the backend plugin with value conversion, against a hand-written native query
 * on the same engine and the same physical layout (the backend's typed columns), executed through
 * the same `backend.execute` (so pool, row cap and wire conversion are the same for both).
 *
 *   node --import tsx bench/executor.ts [--edge 1000000] [--big] [--engines duckdb,postgres] [--fresh]
 *
 * `--big` uses 10M edge events. Loaded stores are kept under .tmp/bench (DuckDB) and in schema
 * qes_bench_<hash> (PostgreSQL) and reused by the next run; `--fresh` reloads.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  type BoundValues,
  bindRequestParams,
  type CompiledQuery,
  compileEndpoint,
  type EndpointDefinition,
  loadEndpoints,
  type SourceSchema,
} from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR, SEED_PROJECTS } from "@qes/server";
import { type BenchBackend, type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_DIR, BENCH_NOW_MICROS, EDGE, ensureEventsFile } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { count, median, ms, ratio, timePair } from "./lib/stats.ts";

export interface ExecutorOptions {
  edgeEvents: number;
  engines: EngineName[];
  fresh?: boolean;
  log?: (msg: string) => void;
}

/** the busiest seeded project (half of all events) */
const PROJECT = SEED_PROJECTS[0];
const INTERVALS = ["hourly", "daily", "minutely"] as const;
const UNIT = { hourly: "hour", daily: "day", minutely: "minute" } as const;
const SPAN = { hourly: "1 hour", daily: "7 days", minutely: "60 minutes" } as const;

interface Layout {
  table: string;
  metadata: string;
  url: string;
  path: string;
}

function layoutOf(source: SourceSchema): Layout {
  const meta = source.fields.metadata!;
  const request = meta.fields!.request!;
  return {
    table: source.table,
    metadata: meta.column!,
    url: request.fields!.url!.column!,
    path: request.fields!.path!.column!,
  };
}

/** engine-specific pieces of the hand-written queries */
const NATIVE = {
  duckdb: {
    text: (i: number) => `CAST($${i} AS VARCHAR)`,
    ts: (i: number) => `CAST($${i} AS TIMESTAMP)`,
    regex: (col: string, p: string) => `regexp_matches("${col}", ${p})`,
    contains: (col: string, text: string) => `contains("${col}", '${text}')`,
    countIf: (cond: string) => `count_if(${cond})`,
    bucket: (unit: string) => `date_trunc('${unit}', "timestamp")`,
    minus: (ts: string, span: string) => `${ts} - INTERVAL ${span}`,
  },
  postgres: {
    text: (i: number) => `$${i}::text`,
    ts: (i: number) => `($${i}::timestamp AT TIME ZONE 'UTC')`,
    regex: (col: string, p: string) => `"${col}" ~ ${p}`,
    contains: (col: string, text: string) => `strpos("${col}", '${text}') > 0`,
    countIf: (cond: string) => `count(*) FILTER (WHERE ${cond})`,
    bucket: (unit: string) => `(date_trunc('${unit}', "timestamp", 'UTC') AT TIME ZONE 'UTC')`,
    minus: (ts: string, span: string) => `${ts} - INTERVAL '${span}'`,
  },
  clickhouse: {
    text: (i: number) => `{p${i}:Nullable(String)}`,
    ts: (i: number) => `toDateTime64OrNull({p${i}:Nullable(String)}, 6, 'UTC')`,
    regex: (col: string, p: string) => `match("${col}", ${p})`,
    contains: (col: string, text: string) => `position("${col}", '${text}') > 0`,
    countIf: (cond: string) => `toInt64(countIf(${cond}))`,
    bucket: (unit: string) => `toStartOfInterval("timestamp", INTERVAL 1 ${unit}, 'UTC')`,
    minus: (ts: string, span: string) => `${ts} - INTERVAL ${span.replace(/s$/, "")}`,
  },
} as const;

function nativeLogsAll(engine: EngineName, l: Layout, bounded: boolean): string {
  const n = NATIVE[engine];
  return `SELECT id, "timestamp", event_message, "${l.metadata}" AS metadata
FROM "${l.table}"
WHERE project = ${n.text(1)}${bounded ? ` AND "timestamp" > ${n.ts(2)}` : ""}
ORDER BY "timestamp" DESC
LIMIT 100`;
}

/**
 * The usage counters as a person writes them for one interval. Diagnostic forms: `regexCounters`
 * keeps the emitted regex counters; `intervalCase` picks unit and window with a CASE over the
 * interval parameter ($3) per row, as the stored query (and so the compiled SQL) does.
 */
function nativeUsage(
  engine: EngineName,
  l: Layout,
  interval: (typeof INTERVALS)[number],
  form: { regexCounters?: boolean; intervalCase?: boolean } = {},
): string {
  const n = NATIVE[engine];
  const counter = (text: string) =>
    n.countIf(form.regexCounters ? n.regex(l.path, `'${text}'`) : n.contains(l.path, text));
  const pick = (f: (i: (typeof INTERVALS)[number]) => string) =>
    `CASE ${n.text(3)} WHEN 'daily' THEN ${f("daily")} WHEN 'minutely' THEN ${f("minutely")} ELSE ${f("hourly")} END`;
  const bucket = form.intervalCase ? pick((i) => n.bucket(UNIT[i])) : n.bucket(UNIT[interval]);
  const start = form.intervalCase ? pick((i) => n.minus(n.ts(2), SPAN[i])) : n.minus(n.ts(2), SPAN[interval]);
  return `SELECT ${bucket} AS bucket,
  ${counter("/rest")} AS rest, ${counter("/storage")} AS storage, ${counter("/auth")} AS auth, ${counter("/realtime")} AS realtime
FROM "${l.table}"
WHERE "timestamp" >= ${start} AND ${n.regex(l.url, n.text(1))}
GROUP BY bucket
ORDER BY bucket`;
}

/** a hand-written query with the compiled query's output columns, so conversion is identical */
function handWritten(sql: string, like: CompiledQuery, params: CompiledQuery["params"]): CompiledQuery {
  // the compiled query's own steps (a read ahead, a cut computed first) are not the native one's
  const { readAhead: _readAhead, cutFirst: _cutFirst, ...rest } = like;
  return { ...rest, sql, params };
}

interface Variant {
  name: string;
  compiled: { query: CompiledQuery; values: BoundValues };
  native: { query: CompiledQuery; values: BoundValues };
  /** extra native forms timed for the analysis, not for the ratio */
  diagnostics?: { name: string; query: CompiledQuery; values: BoundValues }[];
}

function variants(
  engine: EngineName,
  bench: BenchBackend,
  registry: Map<string, EndpointDefinition>,
  schema: Parameters<typeof compileEndpoint>[1]["schema"],
): Variant[] {
  const l = layoutOf(schema.sources[EDGE]!);
  const logsAll = registry.get("logs.all")!;
  const usage = registry.get("usage.api-counts")!;
  const dialect = bench.backend.dialect;
  const nowText = timestampText(BENCH_NOW_MICROS);
  const hourAgo = timestampText(BENCH_NOW_MICROS - 3_600_000_000n);
  const out: Variant[] = [];
  const compiledLogs = compileEndpoint(logsAll, { schema, dialect });
  for (const bounded of [false, true]) {
    const params: Record<string, string> = { project: PROJECT };
    if (bounded) params.iso_timestamp_start = `${hourAgo.replace(" ", "T")}Z`;
    out.push({
      name: `logs.all, ${bounded ? "start bound = now − 1 h" : "no bounds"} (newest 100 of one project)`,
      compiled: {
        query: compiledLogs,
        values: bindRequestParams(logsAll, compiledLogs, params, BENCH_NOW_MICROS).values,
      },
      native: {
        query: handWritten(nativeLogsAll(engine, l, bounded), compiledLogs, [
          { name: "project", type: "STRING", kind: "endpoint" },
          ...(bounded
            ? [{ name: "iso_timestamp_start", type: "TIMESTAMP" as const, kind: "endpoint" as const }]
            : []),
        ]),
        values: bounded ? [PROJECT, hourAgo] : [PROJECT],
      },
    });
  }
  // compiled per interval as the server compiles it (the interval's allowed value as a literal)
  const compileUsage = (interval: string) =>
    compileEndpoint(usage, { schema, dialect, params: { project: PROJECT, interval } });
  const usageParams: CompiledQuery["params"] = [
    { name: "project", type: "STRING", kind: "endpoint" },
    { name: "now", type: "TIMESTAMP", kind: "now" },
  ];
  for (const interval of INTERVALS) {
    const compiledUsage = compileUsage(interval);
    const values = bindRequestParams(
      usage,
      compiledUsage,
      { project: PROJECT, interval },
      BENCH_NOW_MICROS,
    ).values;
    out.push({
      name: `usage.api-counts, ${interval}`,
      compiled: { query: compiledUsage, values },
      native: {
        query: handWritten(nativeUsage(engine, l, interval), compiledUsage, usageParams),
        values: [PROJECT, nowText],
      },
      diagnostics: [
        {
          name: "native, counters as regular expressions",
          query: handWritten(
            nativeUsage(engine, l, interval, { regexCounters: true }),
            compiledUsage,
            usageParams,
          ),
          values: [PROJECT, nowText],
        },
        {
          name: "native, unit and window by CASE over the interval parameter",
          query: handWritten(nativeUsage(engine, l, interval, { intervalCase: true }), compiledUsage, [
            ...usageParams,
            { name: "interval", type: "STRING", kind: "endpoint" },
          ]),
          values: [PROJECT, nowText, interval],
        },
      ],
    });
  }
  return out;
}

/** `YYYY-MM-DD HH:MM:SS.ffffff`, the bound form of a TIMESTAMP (CompiledQuery's BoundValues) */
function timestampText(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${(micros % 1_000_000n).toString().padStart(6, "0")}`;
}

export async function runExecutorBenchmark(opts: ExecutorOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const registry = new Map(
    (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).list().map((e) => [e.name, e] as const),
  );
  const rows: string[][] = [];
  const notes: string[] = [];
  const misses: string[] = [];
  const explain: string[] = [];
  for (const engine of opts.engines) {
    const bench = await openLoadedBackend(
      engine,
      { [EDGE]: file },
      { fresh: opts.fresh ?? false, onProgress: log },
    );
    try {
      if (bench.loadSeconds !== null)
        notes.push(
          `${engine}: loaded ${count(opts.edgeEvents)} edge events in ${bench.loadSeconds.toFixed(1)} s for this run.`,
        );
      const schema = await bench.backend.schema();
      for (const v of variants(engine, bench, registry, schema)) {
        const exec = (q: { query: CompiledQuery; values: BoundValues }) => () =>
          bench.backend.execute(q.query, q.values, { maxRows: 1000, timeoutMs: 600_000 });
        // the same rows from both, or the comparison means nothing
        const [a, b] = [await exec(v.compiled)(), await exec(v.native)()];
        if (JSON.stringify(a.rows) !== JSON.stringify(b.rows))
          throw new Error(`${engine} ${v.name}: the native query's rows differ from the compiled query's`);
        const once = await timePair(exec(v.compiled), exec(v.native), { runs: 1, warmup: 0 });
        const slow = Math.max(median(once.a), median(once.b));
        const runs = Math.max(5, Math.min(31, Math.floor(6000 / Math.max(slow, 1))));
        log(`${engine}: ${v.name} × ${runs}`);
        const t = await timePair(exec(v.compiled), exec(v.native), { runs });
        const compiled = median(t.a);
        const native = median(t.b);
        const r = compiled / native;
        const extra: string[] = [];
        for (const d of v.diagnostics ?? []) {
          const dt = await timePair(exec(d), exec(v.native), { runs: Math.min(runs, 9) });
          // timed in its own alternation against the native query: a ratio, not an absolute time
          extra.push(`${d.name}: ${ratio(median(dt.a), median(dt.b))} native`);
        }
        rows.push([
          engine,
          v.name,
          String(a.rows.length),
          ms(compiled),
          ms(native),
          ratio(compiled, native),
          r <= 1.5 ? "≤ 1.5 ✓" : "**miss**",
          extra.join("; "),
        ]);
        if (r > 1.5) misses.push(`${engine} / ${v.name}: ${r.toFixed(2)}×`);
        if (engine === "postgres") {
          for (const [label, q] of [
            ["compiled", v.compiled],
            ["native", v.native],
          ] as const) {
            const plan = await explainPostgres(bench, q.query.sql, q.values);
            explain.push(`-- ${engine} ${v.name}: ${label}\n${q.query.sql}\n${plan}\n`);
          }
        }
      }
    } finally {
      await bench.close();
    }
  }
  if (explain.length > 0) {
    const path = `${BENCH_DIR}/explain-postgres-${opts.edgeEvents}.txt`;
    writeFileSync(path, explain.join("\n"));
    notes.push(
      `PostgreSQL plans (EXPLAIN ANALYZE) of every compiled and native query of this run: \`${path}\`.`,
    );
  }
  if (misses.length > 0) notes.push(`Over the 1.5× target: ${misses.join("; ")} (analysis below).`);
  return {
    title: `Executor: compiled vs hand-written native SQL (${count(opts.edgeEvents)} edge events)`,
    intro:
      "Each endpoint's compiled SQL and a hand-written query a person would write for that engine on the same " +
      "physical layout (typed columns `project`, `timestamp`, flattened `metadata.request.url/path`; on PostgreSQL the " +
      "backend's btree on `(project, timestamp)`), both run through `backend.execute` (reader pool, row cap, wire-value " +
      "conversion), alternated run by run; medians. The native rows are checked equal to the compiled rows first. " +
      `Project \`${PROJECT}\` (half of all events); now = 2025-01-15T09:00:00Z.`,
    header: ["engine", "query", "rows", "compiled", "native", "ratio", "target", "diagnostics"],
    rows,
    notes,
  };
}

async function explainPostgres(bench: BenchBackend, sql: string, values: BoundValues): Promise<string> {
  // EXPLAIN of a parameterised statement: PREPARE it with the values' text, as the reader runs it
  const name = `bench_${Math.random().toString(36).slice(2)}`;
  const types = values.map(() => "unknown").join(", ");
  try {
    await bench.raw(`PREPARE ${name}(${types}) AS ${sql}`);
    const args = values.map((v) => (v === null ? "NULL" : `'${v.replaceAll("'", "''")}'`)).join(", ");
    const rows = await bench.raw(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE ${name}(${args})`);
    return rows.map((r) => String(r["QUERY PLAN"])).join("\n");
  } catch (e) {
    return `(EXPLAIN failed: ${(e as Error).message})`;
  } finally {
    await bench.raw(`DEALLOCATE ${name}`).catch(() => undefined);
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "1000000" },
      big: { type: "boolean", default: false },
      engines: { type: "string", default: "duckdb,postgres" },
      fresh: { type: "boolean", default: false },
    },
  });
  const section = await runExecutorBenchmark({
    edgeEvents: values.big ? 10_000_000 : Number(values.edge),
    engines: values.engines!.split(",") as EngineName[],
    fresh: values.fresh!,
    log: (m) => console.error(m),
  });
  printSection(section);
}
