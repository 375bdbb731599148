/**
 * The benchmark data generator: deterministic NDJSON for all nine sources, any size.
 *
 *   node --import tsx bench/generate.ts [--edge 1000000] [--seed 42]
 *
 * Writes .tmp/bench/<source>-<count>-seed<seed>.ndjson (kept and reused by the benchmarks); the
 * other eight sources get the seed's proportions of edge / 0.55 events in total.
 */
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { BENCH_SEED, ensureAllSources } from "./lib/data.ts";

const { values } = parseArgs({
  options: {
    edge: { type: "string", default: "1000000" },
    seed: { type: "string", default: String(BENCH_SEED) },
  },
});
const started = performance.now();
const files = await ensureAllSources(Number(values.edge), Number(values.seed));
for (const [source, path] of Object.entries(files)) {
  console.log(`${source.padEnd(24)} ${path} (${(statSync(path).size / 1e6).toFixed(1)} MB)`);
}
console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
