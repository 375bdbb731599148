/**
 * How soon an abandoned query stops in the engine (issue 12: within 100 ms). A consumer query
 * that runs for seconds (a self cross join of the edge logs) is started through
 * `backend.execute` with a signal, the signal is aborted after `--after` ms, and the time from
 * the abort to the execute promise settling is measured — the backend's cancellation (DuckDB
 * interrupt, PostgreSQL cancel request, ClickHouse KILL QUERY) has then come back from the
 * engine. Then a trivial query is timed, to show the engine is free again.
 *
 *   node --import tsx bench/cancel.ts [--edge 100000] [--engines duckdb,postgres,clickhouse] [--runs 10] [--after 500]
 */
import { parseArgs } from "node:util";
import { bindRequestParams, compileEndpoint, loadEndpoints } from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR, SEED_PROJECTS } from "@qes/server";
import { type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { count, median } from "./lib/stats.ts";

const HEAVY =
  "select count(*) as n from edge_logs as a cross join edge_logs as b where length(a.id) + length(b.event_message) > 0";
const TRIVIAL = "select id from edge_logs limit 1";

export async function runCancelBenchmark(opts: {
  edgeEvents: number;
  engines: EngineName[];
  runs: number;
  afterMs: number;
  log?: (msg: string) => void;
}): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const logsAll = (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).get("logs.all");
  if (!logsAll) throw new Error("logs.all is not among the built-in endpoints");
  const rows: string[][] = [];
  for (const engine of opts.engines) {
    const bench = await openLoadedBackend(engine, { [EDGE]: file }, { onProgress: log });
    try {
      const { backend } = bench;
      const schema = await backend.schema();
      const run = (sql: string) => {
        const query = compileEndpoint(logsAll, { schema, dialect: backend.dialect, consumerSql: sql });
        const { values } = bindRequestParams(logsAll, query, { project: SEED_PROJECTS[0] }, BENCH_NOW_MICROS);
        return (signal?: AbortSignal) =>
          backend.execute(query, values, { maxRows: 10, timeoutMs: 120_000, ...(signal ? { signal } : {}) });
      };
      const heavy = run(HEAVY);
      const trivial = run(TRIVIAL);
      const stops: number[] = [];
      const after: number[] = [];
      let finished = 0;
      for (let i = 0; i < opts.runs; i++) {
        const controller = new AbortController();
        let abortedAt = 0;
        const settled = heavy(controller.signal).then(
          () => {
            finished++;
          },
          () => undefined,
        );
        await new Promise((r) => setTimeout(r, opts.afterMs));
        abortedAt = performance.now();
        controller.abort(new Error("client gone"));
        await settled;
        stops.push(performance.now() - abortedAt);
        const t0 = performance.now();
        await trivial();
        after.push(performance.now() - t0);
      }
      log(`${engine}: ${stops.map((s) => s.toFixed(1)).join(", ")} ms`);
      rows.push([
        engine,
        `${median(stops).toFixed(1)} ms`,
        `${Math.max(...stops).toFixed(1)} ms`,
        `${median(after).toFixed(1)} ms`,
        finished === 0 ? "none" : `${finished} of ${opts.runs}`,
      ]);
    } finally {
      await bench.close();
    }
  }
  return {
    title: `Abandoned queries: from the abort to the engine giving up (${count(opts.edgeEvents)} edge events)`,
    intro:
      `A consumer query on logs.all that runs for seconds (\`${HEAVY}\`) through \`backend.execute\`, its signal ` +
      `aborted ${opts.afterMs} ms after it started, ${opts.runs} times per engine: the time from the abort until ` +
      "the execute promise settles (the engine has answered the cancellation), and then the time of a trivial query.",
    header: [
      "engine",
      "abort → settled, median",
      "max",
      "trivial query after it",
      "heavy queries that finished anyway",
    ],
    rows,
    notes: [],
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      edge: { type: "string", default: "100000" },
      engines: { type: "string", default: "duckdb,postgres,clickhouse" },
      runs: { type: "string", default: "10" },
      after: { type: "string", default: "500" },
    },
  });
  printSection(
    await runCancelBenchmark({
      edgeEvents: Number(values.edge),
      engines: values.engines!.split(",") as EngineName[],
      runs: Number(values.runs),
      afterMs: Number(values.after),
      log: (m) => process.stderr.write(`${m}\n`),
    }),
  );
}
