/**
 * Compile-time benchmark: `compileEndpoint` (parse → sandbox → analysis → emit) of the stored
 * queries and of consumer queries from the conformance table, uncached, for both dialects; the
 * baseline measured in the same run is parsing the same SQL text alone (node-sql-parser through
 * core's `parseSelect`), the floor of any compile. A cache hit is timed too.
 *
 *   node --import tsx bench/compile.ts [--runs 200]
 */
import { parseArgs } from "node:util";
import { duckdbDialect } from "@qes/backend-duckdb";
import { createPostgresBackend } from "@qes/backend-postgres";
import {
  BUILTIN_SOURCES,
  compileEndpoint,
  type Dialect,
  type EndpointDefinition,
  type LogSchema,
  loadEndpoints,
  newSourceSchema,
  parseEvent,
  parseSelect,
  widenSchema,
} from "@qes/core";
import { BUILTIN_ENDPOINTS_DIR, generateEvents } from "@qes/server";
import { consumerCases } from "../test/conformance/cases/consumer/index.ts";
import { BENCH_NOW_MICROS } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { median, timeRuns } from "./lib/stats.ts";

export interface CompileOptions {
  runs: number;
}

const us = (x: number) => `${(x * 1000).toFixed(0)} µs`;

export async function runCompileBenchmark(opts: CompileOptions): Promise<Section> {
  const registry = await loadEndpoints([BUILTIN_ENDPOINTS_DIR]);
  const schema = await benchSchema();
  const dialects: Dialect[] = [
    duckdbDialect,
    createPostgresBackend({ url: "postgres://unused@127.0.0.1:1/x", schema: "unused" }).dialect,
  ];
  const logsAll = registry.get("logs.all")!;
  const queries: { label: string; endpoint: EndpointDefinition; consumerSql?: string }[] = [
    { label: "logs.all (stored, 9 CTEs)", endpoint: logsAll },
    { label: "usage.api-counts (stored)", endpoint: registry.get("usage.api-counts")! },
  ];
  const consumer = consumerCases.filter((c) => c.sql !== undefined);
  const rows: string[][] = [];
  let n = 0;
  for (const dialect of dialects) {
    for (const q of queries) {
      // a fresh endpoint version and schema object per run defeat both compile caches
      const compile = () =>
        compileEndpoint({ ...q.endpoint, version: `bench-${n++}` }, { schema: { ...schema }, dialect });
      const compileMs = median(await timeRuns(compile, opts.runs, 5));
      const parseMs = median(await timeRuns(() => parseSelect(q.endpoint.sql), opts.runs, 5));
      const hitMs = median(
        await timeRuns(() => compileEndpoint(q.endpoint, { schema, dialect }), opts.runs, 5),
      );
      rows.push([
        dialect.name,
        q.label,
        us(compileMs),
        us(parseMs),
        `${(compileMs / parseMs).toFixed(2)}×`,
        us(hitMs),
      ]);
    }
    // consumer SQL: logs.all's CTEs plus the consumer's query, over the whole table of cases
    const samplesCompile: number[] = [];
    const samplesParse: number[] = [];
    const samplesHit: number[] = [];
    const rounds = Math.max(3, Math.round(opts.runs / 20));
    for (let r = 0; r < rounds; r++) {
      for (const c of consumer) {
        let t = performance.now();
        // a new schema object: the compile cache misses, the stored query's parse (cached per
        // endpoint version, as in the server) hits
        compileEndpoint(logsAll, { schema: { ...schema }, dialect, consumerSql: c.sql! });
        samplesCompile.push(performance.now() - t);
        t = performance.now();
        parseSelect(c.sql!);
        samplesParse.push(performance.now() - t);
        compileEndpoint(logsAll, { schema, dialect, consumerSql: c.sql! });
        t = performance.now();
        compileEndpoint(logsAll, { schema, dialect, consumerSql: c.sql! });
        samplesHit.push(performance.now() - t);
      }
    }
    const c = median(samplesCompile);
    const p = median(samplesParse);
    rows.push([
      dialect.name,
      `consumer SQL over logs.all (${consumer.length} dashboard queries, median of all)`,
      us(c),
      us(p),
      `${(c / p).toFixed(2)}×`,
      us(median(samplesHit)),
    ]);
  }
  return {
    title: "Compile time",
    intro:
      "`compileEndpoint` uncached (stored queries: a new endpoint version and schema object each run, so parse " +
      "included; consumer SQL: a new schema object, the stored query's parse cached as in the server), medians over " +
      `${opts.runs} runs after warm-up, against parsing the same SQL text alone (core's \`parseSelect\`, ` +
      "node-sql-parser's BigQuery build), measured in the same run. Consumer queries: the conformance table's " +
      "consumer SQL, compiled with logs.all's nine CTEs. The schema is inferred from 2,000 seeded events per source. " +
      "A cache hit is what a request pays once a query has been compiled for the endpoint version and schema version.",
    header: ["dialect", "query", "compile", "parse only (baseline)", "ratio", "cache hit"],
    rows,
    notes: [],
  };
}

/** a schema with every field of the nine sources, inferred from seeded events */
async function benchSchema(): Promise<LogSchema> {
  const sources: LogSchema["sources"] = {};
  for (const name of BUILTIN_SOURCES) {
    const source = newSourceSchema(name);
    let i = 0;
    for (const line of generateEvents(name, 2000, 7, BENCH_NOW_MICROS)) {
      const event = parseEvent(line, ++i, BENCH_NOW_MICROS, "test");
      if (event) widenSchema(source, event.body);
    }
    sources[name] = source;
  }
  return { version: 1, sources };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "200" } } });
  printSection(await runCompileBenchmark({ runs: Number(values.runs) }));
}
