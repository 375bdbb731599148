/**
 * Redaction inside the engine (issue 12): consumer SQL on `logs.all` with and without redaction,
 * the same compiled query otherwise, through `backend.execute`. The redacted query reads each
 * stored CTE through a CTE that runs the address pattern over every string column (and the JSON
 * text of records); the ratio is what that costs. Also the pass over the result in JS per 100 rows.
 *
 *   node --import tsx bench/redaction.ts [--edge 100000] [--runs 15] [--engines duckdb,postgres]
 */
import { parseArgs } from "node:util";
import {
  bindRequestParams,
  compileEndpoint,
  type EndpointDefinition,
  loadEndpoints,
  redactRows,
} from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR, SEED_PROJECTS } from "@qes/server";
import { type EngineName, openLoadedBackend } from "./lib/bench-backends.ts";
import { BENCH_NOW_MICROS, EDGE, ensureEventsFile } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { median, ms, ratio, timePair, timeRuns } from "./lib/stats.ts";

const PROJECT = SEED_PROJECTS[0];
const QUERIES: Array<[string, string]> = [
  ["newest 100 rows with their records", "select id, event_message, metadata from edge_logs limit 100"],
  [
    "distinct client addresses of every row of the project",
    "select count(distinct h.x_real_ip) as n from edge_logs cross join unnest(metadata) m cross join unnest(m.request) r cross join unnest(r.headers) h",
  ],
];

export async function benchRedaction(opts: {
  edgeEvents: number;
  runs: number;
  engines: EngineName[];
}): Promise<Section> {
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const endpoint = (await loadEndpoints([BUILTIN_ENDPOINTS_DIR])).get("logs.all") as EndpointDefinition;
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const engine of opts.engines) {
    const bench = await openLoadedBackend(engine, { [EDGE]: file });
    try {
      const schema = await bench.backend.schema();
      for (const [name, sql] of QUERIES) {
        const run = (redact: boolean) => {
          const compiled = compileEndpoint(endpoint, {
            schema,
            dialect: bench.backend.dialect,
            consumerSql: sql,
            redact,
          });
          const bound = bindRequestParams(endpoint, compiled, { project: PROJECT }, BENCH_NOW_MICROS);
          return () =>
            bench.backend.execute(compiled, bound.values, { maxRows: endpoint.maxRows, timeoutMs: 120_000 });
        };
        const t = await timePair(run(false), run(true), { runs: opts.runs });
        rows.push([engine, name, ms(median(t.a)), ms(median(t.b)), ratio(median(t.b), median(t.a))]);
        if (name.startsWith("newest")) {
          const result = await run(false)();
          const js = await timeRuns(() => redactRows(result.rows), opts.runs);
          notes.push(
            `${engine}: the pass over the result (JS) on those ${result.rows.length} rows: ${ms(median(js))}.`,
          );
        }
      }
    } finally {
      await bench.close();
    }
  }
  return {
    title: "Redaction inside the engine (`bench/redaction.ts`)",
    intro: `Consumer SQL on \`logs.all\` (${opts.edgeEvents} seeded edge events, project ${PROJECT}), median of ${opts.runs} alternating runs: plain, and with redaction applied in the engine to what it reads from the stored CTEs.`,
    header: ["engine", "consumer query", "plain", "redacted in the engine", "ratio"],
    rows,
    notes,
  };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: { edge: { type: "string" }, runs: { type: "string" }, engines: { type: "string" } },
  });
  const section = await benchRedaction({
    edgeEvents: Number(values.edge ?? 100_000),
    runs: Number(values.runs ?? 15),
    engines: (values.engines ?? "duckdb,postgres").split(",") as EngineName[],
  });
  printSection(section);
  process.exit(0);
}
